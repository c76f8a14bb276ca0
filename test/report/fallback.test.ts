/**
 * A run whose report directory cannot be written still says what it wrote, on the console
 * and in a report in a fallback place it names; a full disk is a clear message, not "a bug".
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { EXIT, UserFacingError } from '../../src/errors/user-facing-error.js';
import { fileSystemProblem } from '../../src/errors/file-system-problem.js';
import { writeReportOrFallback } from '../../src/report/fallback.js';
import { failureDuringApply } from '../../src/sync/exit-code.js';
import { aRecord, aReport } from './builders.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
function scratch(): string {
  const dir = mkdtempSync(join(tmpdir(), 'rostersync-fallback-'));
  dirs.push(dir);
  return dir;
}

describe('writeReportOrFallback', () => {
  it('writes to the fallback place and names both places when the report directory cannot be written', async () => {
    const root = scratch();
    writeFileSync(join(root, 'a-file'), 'x');
    const report = aReport();
    const written = await writeReportOrFallback(report, { dir: join(root, 'a-file', 'report'), env: {}, fallbackRoot: join(root, 'fallback') });
    expect(written.dir).toBe(join(root, 'fallback', 'demo', report.runId));
    expect(JSON.parse(readFileSync(written.files.json, 'utf8')).runId).toBe(report.runId);
    expect(written.warnings[0]).toMatch(new RegExp(`Could not write the report to .*a-file/report: a part of the path is not a directory \\(ENOTDIR\\)\\. It was written to ${written.dir} instead\\.`));
  });

  it('when neither place can be written, the error still says what the run did, and never exits 1 after writes', async () => {
    const root = scratch();
    writeFileSync(join(root, 'a-file'), 'x');
    const report = aReport({ records: [aRecord({ clientId: 'A', action: 'create', reason: 'new' }), aRecord({ clientId: 'B' })] });
    const error = await writeReportOrFallback(report, { dir: join(root, 'a-file', 'r'), env: {}, fallbackRoot: join(root, 'a-file', 'f') }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UserFacingError);
    expect((error as UserFacingError).message).toMatch(/The run finished \(success, 1 created, 1 updated, 0 deleted\) but its report could not be written/);
    expect((error as UserFacingError).exitCode).toBe(EXIT.failedAfterWrites);
    expect(existsSync(join(root, 'a-file'))).toBe(true);
  });
});

describe('a full disk', () => {
  it.each(['ENOSPC', 'SQLITE_FULL', 'EDQUOT'])('%s is named in words', (code) => {
    expect(fileSystemProblem(Object.assign(new Error('write failed'), { code }))).toMatchObject({ kind: 'disk_full', code });
  });

  it('during apply it is a clear message with exit 7, not "a bug"', () => {
    const full = Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' });
    const error = failureDuringApply(full);
    expect(error.message).toBe('the run stopped after writes began: no space left on the device (SQLITE_FULL). Some writes may have reached the service.');
    expect(error.hint).toMatch(/^Free some disk space/);
    expect(`${error.message} ${error.hint}`).not.toMatch(/bug/);
    expect(error.exitCode).toBe(EXIT.failedAfterWrites);
  });
});
