/**
 * Atomic 0600 writes for every file the report folder holds (docs/security-and-personal-data.md): reports hold roster
 * names and emails, and a reader (or a crash) must never see half a file.
 */
import { randomBytes } from 'node:crypto';
import { open, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/** File mode of every report file: owner read/write only (docs/security-and-personal-data.md). */
export const REPORT_FILE_MODE = 0o600;
/** Mode of a report directory this module creates. */
export const REPORT_DIR_MODE = 0o700;

/** A sibling temporary name for an atomic write of `path`. */
function tempPathFor(path: string): string {
  return join(dirname(path), `.${basename(path)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
}

/**
 * Writes `content` to `path` atomically with mode 0600: a sibling temporary file, fsync, rename.
 * An existing file is replaced, and ends up 0600 whatever its previous mode. Content too large for
 * one string (a report of a million records) comes as an iterable of pieces. `mode`: only for a
 * file that holds no personal data and another user must read (the metrics file, src/metrics/).
 */
export async function writeFileAtomic(path: string, content: string | Uint8Array | Iterable<string>, mode: number = REPORT_FILE_MODE): Promise<void> {
  const temp = tempPathFor(path);
  const handle = await open(temp, 'wx', mode);
  try {
    if (typeof content === 'string' || content instanceof Uint8Array) await handle.writeFile(content, typeof content === 'string' ? 'utf8' : undefined);
    else for (const piece of content) await handle.write(piece, null, 'utf8');
    // open()'s mode is filtered by the umask; set it explicitly so it is exactly 0600 (or `mode`).
    await handle.chmod(mode);
    await handle.sync();
  } catch (error) {
    await handle.close();
    await rm(temp, { force: true });
    throw error;
  }
  await handle.close();
  try {
    await rename(temp, path);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
}
