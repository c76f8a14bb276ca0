import { fileURLToPath } from 'node:url';
import { openSource } from '../../src/sources/index.js';
import type { SourceConfig } from '../../src/sources/options.js';
import type { OpenedSource, SourceRow, SourceRowError } from '../../src/sources/index.js';

export const fixturesDir = fileURLToPath(new URL('../fixtures/sources/', import.meta.url));

export interface ReadResult {
  source: OpenedSource;
  rows: SourceRow[];
  errors: SourceRowError[];
  /** Row and error line numbers in file order, errors prefixed with `!`. */
  order: string[];
}

/** Opens a fixture and reads every item (fixtures are small). */
export async function readFixture(config: SourceConfig): Promise<ReadResult> {
  const source = await openSource(config, { baseDir: fixturesDir });
  const rows: SourceRow[] = [];
  const errors: SourceRowError[] = [];
  const order: string[] = [];
  for await (const item of source.items) {
    if (item.kind === 'row') {
      rows.push(item.row);
      order.push(String(item.row.provenance.row));
    } else {
      errors.push(item.error);
      order.push(`!${item.error.provenance.row}`);
    }
  }
  return { source, rows, errors, order };
}

/** Opens a fixture expecting a file-level error, and returns it. */
export async function openError(config: SourceConfig): Promise<unknown> {
  try {
    await readFixture(config);
  } catch (error) {
    return error;
  }
  throw new Error(`expected ${config.file} to fail`);
}
