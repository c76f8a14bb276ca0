import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { DesiredRecord } from '../../src/mapping/types.js';
import { canonicalJson, hashJson } from '../../src/plan/canonical.js';
import { NewRecords } from '../../src/plan/new-records.js';
import { newRecordsFile } from '../../src/spill/run-files.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'new-records-test-'));
  dirs.push(dir);
  return dir;
}

function record(clientId: string, row: number, fields: DesiredRecord['fields'], extra: Partial<DesiredRecord> = {}): { record: DesiredRecord; fieldsJson: string; hash: string } {
  const fieldsJson = canonicalJson(fields);
  return { record: { clientId, fields, provenance: { file: 'roster.csv', row }, ...extra }, fieldsJson, hash: hashJson(fieldsJson) };
}

const read = (spool: NewRecords) => [...spool.read()].flat();

describe('the spool of new records', () => {
  it('gives back every record as it was added, in order, from memory and from its file', () => {
    const parent = tempDir();
    const spool = new NewRecords({ pageSize: 2, pagesInMemory: 1, pages: newRecordsFile({ tempDir: parent }) });
    // Values that a line-based format could break: tabs, newlines, quotes, non-Latin-1 text, lone surrogates.
    const added = [
      record('a', 2, { name: 'Zoë\tO\'Brien', emails: ['z@example.org'], cf: 3 }, { rowKey: 'k1' }),
      record('b', 3, { name: 'line\nbreak "quoted"', emails: [], cf: null }, { skipped: ['orcids'] }),
      record('c', 4, { name: '山田 太郎', emails: ['t@example.jp'], cf: 0 }, { provenance: { file: 'book.xlsx', sheet: 'Reviewers', row: 4 } }),
      record('d', 5, { name: 'bad \ud800 surrogate', emails: null, cf: -1.5 }),
      record('e', 6, { name: '', emails: ['e@example.org', 'e2@example.org'], cf: 1e21 }),
    ];
    for (const item of added) spool.add(item);
    expect(spool.finish()).toBe(5);
    // Pages past the first went to an owner-only file.
    const [dir] = readdirSync(parent);
    const file = join(parent, dir!, 'records.txt');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(read(spool)).toEqual(added);
    // Read again (apply, then the report): the same.
    expect(read(spool)).toEqual(added);
    expect([...spool.clientIds()]).toEqual(['a', 'b', 'c', 'd', 'e']);
    spool.dispose();
    expect(existsSync(join(parent, dir!))).toBe(false);
  });

  it('keeps the last row of a client_id added again, and leaves out the dropped ones', () => {
    const spool = new NewRecords({ pageSize: 2, pagesInMemory: 0, pages: newRecordsFile({ tempDir: tempDir() }) });
    spool.add(record('a', 2, { name: 'first a' }));
    spool.add(record('b', 3, { name: 'b' }));
    spool.add(record('a', 4, { name: 'second a' }), true);
    spool.add(record('c', 5, { name: 'c' }));
    spool.add(record('a', 6, { name: 'third a' }), true);
    expect(spool.distinct).toBe(3);
    expect(spool.finish((clientId) => clientId === 'c')).toBe(2);
    expect(spool.count).toBe(2);
    expect(read(spool).map((item) => [item.record.clientId, item.record.fields.name])).toEqual([
      ['b', 'b'],
      ['a', 'third a'],
    ]);
    expect([...spool.clientIds()]).toEqual(['b', 'a']);
    spool.dispose();
  });

  it('says where and why when the temporary file cannot be written, before anything is sent', () => {
    const spool = new NewRecords({ pageSize: 1, pagesInMemory: 0, pages: newRecordsFile({ tempDir: join(tempDir(), 'missing', 'dir') }) });
    expect(() => spool.add(record('a', 2, { name: 'a' }))).toThrow(/could not keep the new records waiting for apply in a temporary file under .*missing.*Nothing was written/);
  });
});
