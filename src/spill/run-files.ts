/**
 * The temporary files of one run's spools: the new records (plan/new-records.ts) and the row keys
 * to store (plan/row-key-repairs.ts), each past the pages the spool keeps in memory. The run makes
 * them when it starts and deletes them when it ends, however it ends (sync/run-context.ts); a file
 * is created only when its spool first hands it a page.
 */
import { SpillFile } from './spill-file.js';

export interface RunFileOptions {
  /** Where the file's folder is made. @default os.tmpdir() */
  tempDir?: string | undefined;
  /** Called once, when the file is first written to: the run is a large one. */
  onOpen?: (() => void) | undefined;
}

export function newRecordsFile(options: RunFileOptions = {}): SpillFile {
  return new SpillFile({
    parent: options.tempDir,
    prefix: 'rostersync-new-records-',
    name: 'records.txt',
    what: 'the new records',
    hint: 'Free some space there, or point TMPDIR at a writable directory with room for about 1 KB per new record.',
    onOpen: options.onOpen,
  });
}

export function rowKeysFile(options: RunFileOptions = {}): SpillFile {
  return new SpillFile({
    parent: options.tempDir,
    prefix: 'rostersync-row-keys-',
    name: 'repairs.json',
    what: 'the row keys',
    hint: 'Free some space there, or point TMPDIR at a writable directory with room for about 100 bytes per roster row; --no-fast-path plans without row keys.',
    onOpen: options.onOpen,
  });
}

/** Both files of a run. */
export interface RunSpillFiles {
  newRecords: SpillFile;
  rowKeys: SpillFile;
  /** Deletes both files, if they were made. */
  dispose(): void;
}

export function runSpillFiles(options: { tempDir?: string | undefined; onNewRecordsSpill?: (() => void) | undefined } = {}): RunSpillFiles {
  const newRecords = newRecordsFile({ tempDir: options.tempDir, onOpen: options.onNewRecordsSpill });
  const rowKeys = rowKeysFile({ tempDir: options.tempDir });
  return {
    newRecords,
    rowKeys,
    dispose() {
      newRecords.dispose();
      rowKeys.dispose();
    },
  };
}
