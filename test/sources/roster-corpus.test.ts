/**
 * The roster corpus (test/fixtures/roster-corpus/, README there): CSV parsers' test suites, rosters
 * in every legacy encoding Excel's locales save, Excel's and LibreOffice's dialects, malformed
 * quoting, files written by real applications and hostile XLSX parts. Every case is read and
 * compared with its expected values or refusal; none may be silently wrong.
 */
import { describe, expect, it } from 'vitest';
import { openSource } from '../../src/sources/index.js';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { CORPUS_DIR, judge, loadCases, readCase, type OpenSource } from '../fixtures/roster-corpus/cases.js';

const cases = loadCases();
const open = openSource as unknown as OpenSource;

describe('roster corpus', () => {
  it('covers every group, encoding and source', () => {
    const groups = new Set(cases.map((entry) => entry.group));
    expect([...groups].sort()).toEqual(['encodings', 'rfc-quoting', 'xlsx']);
    const encodings = new Set(cases.flatMap((entry) => (entry.options?.csv?.encoding ? [String(entry.options.csv.encoding)] : [])));
    for (const label of ['windows-1250', 'windows-1251', 'windows-1253', 'windows-1254', 'windows-1257', 'windows-1258', 'iso-8859-2', 'koi8-r', 'macintosh', 'shift_jis', 'euc-jp', 'gb18030', 'big5', 'euc-kr']) {
      expect(encodings, label).toContain(label);
    }
    expect(cases.filter((entry) => entry.source.startsWith('csv-spectrum')).length).toBe(12);
  });

  it('has a case for every file of the corpus', () => {
    const files = new Set(cases.map((entry) => entry.file));
    for (const folder of ['encodings', 'python-written', 'gnumeric-written', 'quoting', 'xlsx', 'csv-spectrum/csvs']) {
      for (const name of readdirSync(join(CORPUS_DIR, folder))) expect(files, `${folder}/${name}`).toContain(`${folder}/${name}`);
    }
  });

  it.each(cases.map((entry) => ({ ...entry, name: entry.id })))('$name', async (entry) => {
    const result = await readCase(open, entry);
    const { outcome, why } = judge(entry, result);
    // A detection case may be refused (with the right encoding offered); every other case has one right answer.
    const allowed = entry.expect.refuse !== undefined ? ['refused-right'] : entry.expect.orRefuseWith !== undefined ? ['right', 'refused-right'] : ['right'];
    expect(allowed, `${entry.id}: ${outcome}${why ? ` (${why})` : ''}`).toContain(outcome);
  });
});
