/**
 * XLSX reader parts on their own: number-format kinds, serial and ISO date representation,
 * escapes, and workbooks damaged in each way a file can be (built here with JSZip).
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import JSZip from 'jszip';
import { afterAll, describe, expect, it } from 'vitest';
import { openSource, SourceError } from '../../src/sources/index.js';
import { formatIsoCell, formatSerial } from '../../src/sources/xlsx/cell-value.js';
import { formatKind } from '../../src/sources/xlsx/number-formats.js';
import { decodeExcelEscapes } from '../../src/sources/xlsx/shared-strings.js';
import { resolveTarget } from '../../src/sources/xlsx/workbook.js';

describe('number format kinds', () => {
  it.each([
    ['General', 'number'],
    ['0.00', 'number'],
    ['#,##0.00 [$€-407]', 'number'],
    ['0.00E+00', 'number'],
    ['"day "0', 'number'],
    ['[Red]0.0;[Blue]-0.0', 'number'],
    ['yyyy-mm-dd', 'date'],
    ['d/m/yy', 'date'],
    ['[$-F800]dddd\\,\\ mmmm\\ dd\\,\\ yyyy', 'date'],
    ['mmm', 'date'],
    ['[$-411]ggge"年"m"月"d"日"', 'date'],
    ['yyyy-mm-dd hh:mm:ss', 'datetime'],
    ['m/d/yy h:mm AM/PM', 'datetime'],
    ['h:mm', 'time'],
    ['hh:mm:ss AM/PM', 'time'],
    ['mm:ss.0', 'time'],
    ['[h]:mm:ss', 'duration'],
    ['[mm]:ss', 'duration'],
  ])('%s is %s', (code, kind) => expect(formatKind(code)).toBe(kind));
});

describe('serials and ISO cells', () => {
  it.each([
    { serial: 1, kind: 'date' as const, date1904: false, value: '1900-01-01' },
    { serial: 59, kind: 'date' as const, date1904: false, value: '1900-02-28' },
    // Excel shows the day that never existed; the mapping's date check refuses it.
    { serial: 60, kind: 'date' as const, date1904: false, value: '1900-02-29' },
    { serial: 61, kind: 'date' as const, date1904: false, value: '1900-03-01' },
    { serial: 0, kind: 'date' as const, date1904: false, value: '1900-01-00' },
    { serial: 0, kind: 'date' as const, date1904: true, value: '1904-01-01' },
    { serial: 45292.9999999, kind: 'date' as const, date1904: false, value: '2024-01-02' },
    { serial: 45292.25, kind: 'datetime' as const, date1904: false, value: '2024-01-01 06:00:00' },
    { serial: 45292.25, kind: 'time' as const, date1904: false, value: '06:00:00' },
    { serial: 1.5625, kind: 'duration' as const, date1904: false, value: '37:30:00' },
    { serial: -0.5, kind: 'duration' as const, date1904: false, value: '-12:00:00' },
  ])('$serial as $kind (1904: $date1904) is $value', ({ serial, kind, date1904, value }) => {
    expect(formatSerial(serial, kind, date1904)).toEqual({ value });
  });

  it('refuses serials Excel shows as ####', () => {
    expect(formatSerial(-1, 'date', false).problem).toMatch(/cannot show as a date/);
    expect(formatSerial(2958466, 'date', false).problem).toMatch(/cannot show as a date/);
  });

  it.each([
    ['2024-02-29T00:00:00Z', 'date', '2024-02-29'],
    ['2024-02-29T13:45:30', 'datetime', '2024-02-29 13:45:30'],
    ['2024-02-29T13:45:30', 'number', '2024-02-29 13:45:30'],
    ['2024-02-29', 'number', '2024-02-29'],
    ['1899-12-30T09:30:00', 'time', '09:30:00'],
    ['09:30:00', 'time', '09:30:00'],
  ] as const)('t="d" %s with a %s format is %s', (text, kind, value) => expect(formatIsoCell(text, kind)).toEqual({ value }));

  it('refuses t="d" text that is not an ISO date', () => {
    expect(formatIsoCell('2023-02-30', 'date').problem).toMatch(/not a real calendar date/);
    expect(formatIsoCell('next week', 'date').problem).toMatch(/not an ISO 8601 date/);
  });
});

describe('escapes and targets', () => {
  it.each([
    ['a_x000D_b', 'a\rb'],
    ['_x005F_x000D_', '_x000D_'],
    ['_x0041__x0042_', 'AB'],
    ['_xZZZZ_ stays', '_xZZZZ_ stays'],
  ])('%s decodes to %j', (raw, text) => expect(decodeExcelEscapes(raw)).toBe(text));

  it.each([
    ['xl/workbook.xml', 'worksheets/sheet1.xml', 'xl/worksheets/sheet1.xml'],
    ['xl/workbook.xml', '/xl/worksheets/sheet1.xml', 'xl/worksheets/sheet1.xml'],
    ['xl/workbook.xml', '../other/s.xml', 'other/s.xml'],
    ['', 'xl/workbook.xml', 'xl/workbook.xml'],
    ['xl/workbook.xml', 'worksheets\\sheet1.xml', 'xl/worksheets/sheet1.xml'],
  ])('from %s, %s is %s', (from, target, part) => expect(resolveTarget(from, target)).toBe(part));
});

const dir = mkdtempSync(join(tmpdir(), 'rostersync-xlsx-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const MAIN = 'xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"';
const RELS = 'xmlns="http://schemas.openxmlformats.org/package/2006/relationships"';
const TYPE = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';
const GOOD_SHEET = `<worksheet ${MAIN}><sheetData><row r="1"><c r="A1" t="inlineStr"><is><t>Name</t></is></c></row><row r="2"><c r="A2" t="inlineStr"><is><t>Ada</t></is></c></row></sheetData></worksheet>`;

function workbookParts(overrides: Record<string, string | null> = {}): Record<string, string | null> {
  return {
    '_rels/.rels': `<Relationships ${RELS}><Relationship Id="rId1" Type="${TYPE}/officeDocument" Target="xl/workbook.xml"/></Relationships>`,
    'xl/workbook.xml': `<workbook ${MAIN}><sheets><sheet name="Roster" sheetId="1" r:id="rId1"/></sheets></workbook>`,
    'xl/_rels/workbook.xml.rels': `<Relationships ${RELS}><Relationship Id="rId1" Type="${TYPE}/worksheet" Target="worksheets/sheet1.xml"/></Relationships>`,
    'xl/worksheets/sheet1.xml': GOOD_SHEET,
    ...overrides,
  };
}

let count = 0;
async function writeWorkbook(parts: Record<string, string | null>): Promise<string> {
  const zip = new JSZip();
  for (const [name, text] of Object.entries(parts)) if (text !== null) zip.file(name, text);
  const file = `case-${++count}.xlsx`;
  writeFileSync(join(dir, file), await zip.generateAsync({ type: 'nodebuffer', compression: 'DEFLATE' }));
  return file;
}

async function readAll(file: string, sheet: string | number = 1): Promise<unknown[]> {
  const source = await openSource({ file, xlsx: { sheet, header_row: 1 } }, { baseDir: dir });
  const items: unknown[] = [];
  for await (const item of source.items) items.push(item.kind === 'row' ? item.row.values : item.error.message);
  return items;
}

describe('damaged workbooks get a message that says what is wrong', () => {
  it.each<{ what: string; parts: Record<string, string | null>; message: RegExp }>([
    { what: 'no workbook part', parts: { '_rels/.rels': null, 'xl/workbook.xml': null }, message: /has no workbook part \(xl\/workbook\.xml\)/ },
    { what: 'an Excel Binary Workbook', parts: { '_rels/.rels': `<Relationships ${RELS}><Relationship Id="rId1" Type="${TYPE}/officeDocument" Target="xl/workbook.bin"/></Relationships>`, 'xl/workbook.xml': null, 'xl/workbook.bin': 'binary' }, message: /is an Excel Binary Workbook \(\.xlsb\)/ },
    { what: 'an OpenDocument spreadsheet', parts: { '_rels/.rels': null, 'xl/workbook.xml': null, 'content.xml': '<office:document-content/>' }, message: /is an OpenDocument spreadsheet \(\.ods\)/ },
    { what: 'a sheet part missing', parts: { 'xl/worksheets/sheet1.xml': null }, message: /is damaged: the workbook refers to the part xl\/worksheets\/sheet1\.xml, which is not in the zip archive/ },
    { what: 'a sheet without a relationship', parts: { 'xl/_rels/workbook.xml.rels': `<Relationships ${RELS}/>` }, message: /sheet "Roster" is listed in the workbook, but the workbook does not say where its data is/ },
    { what: 'malformed sheet XML', parts: { 'xl/worksheets/sheet1.xml': `<worksheet ${MAIN}><sheetData><row r="1"><c r="A1"></row>` }, message: /is damaged: its part xl\/worksheets\/sheet1\.xml is not well-formed XML/ },
    { what: 'malformed workbook XML', parts: { 'xl/workbook.xml': '<workbook><sheets>' }, message: /its part xl\/workbook\.xml is not well-formed XML/ },
    {
      what: 'a shared strings part named but missing',
      parts: { 'xl/_rels/workbook.xml.rels': `<Relationships ${RELS}><Relationship Id="rId1" Type="${TYPE}/worksheet" Target="worksheets/sheet1.xml"/><Relationship Id="rId2" Type="${TYPE}/sharedStrings" Target="sharedStrings.xml"/></Relationships>` },
      message: /refers to the part xl\/sharedStrings\.xml, which is not in the zip archive/,
    },
    {
      what: 'a chart sheet chosen',
      parts: { 'xl/_rels/workbook.xml.rels': `<Relationships ${RELS}><Relationship Id="rId1" Type="${TYPE}/chartsheet" Target="charts/c.xml"/></Relationships>` },
      message: /sheet "Roster" is a chart sheet, not a worksheet with cells/,
    },
  ])('$what', async ({ parts, message }) => {
    const file = await writeWorkbook(workbookParts(parts));
    const error = await readAll(file).then(() => undefined, (caught: unknown) => caught);
    expect(error).toBeInstanceOf(SourceError);
    expect((error as SourceError).message).toMatch(message);
    expect((error as SourceError).hint).toBeTruthy();
  });

  it('a shared string index past the table rejects the row, naming the cell', async () => {
    const file = await writeWorkbook(
      workbookParts({ 'xl/worksheets/sheet1.xml': GOOD_SHEET.replace('<row r="2"><c r="A2" t="inlineStr"><is><t>Ada</t></is></c>', '<row r="2"><c r="A2" t="s"><v>7</v></c>') }),
    );
    expect(await readAll(file)).toEqual([expect.stringMatching(/cell A2 \(column "Name"\) refers to shared string 7, which the workbook does not have/)]);
  });

  it('a header cell holding an error is a file-level error naming the cell', async () => {
    const file = await writeWorkbook(workbookParts({ 'xl/worksheets/sheet1.xml': GOOD_SHEET.replace('<c r="A1" t="inlineStr"><is><t>Name</t></is></c>', '<c r="A1" t="e"><f>X</f><v>#NAME?</v></c>') }));
    await expect(readAll(file)).rejects.toThrow(/header cell A1 holds the error #NAME\?/);
  });

  it('a forged central directory (declared sizes smaller than the data) is refused, not inflated', async () => {
    const big = `<worksheet ${MAIN}><sheetData>${'<row><c><v>1</v></c></row>'.repeat(2_000_000)}</sheetData></worksheet>`;
    const file = await writeWorkbook(workbookParts({ 'xl/worksheets/sheet1.xml': big }));
    const path = join(dir, file);
    const data = readFileSync(path);
    // Rewrite the uncompressed size of the sheet's central-directory entry to 1 KB.
    const name = Buffer.from('xl/worksheets/sheet1.xml');
    for (let at = data.indexOf(Buffer.from([0x50, 0x4b, 0x01, 0x02])); at !== -1; at = data.indexOf(Buffer.from([0x50, 0x4b, 0x01, 0x02]), at + 4)) {
      if (data.subarray(at + 46, at + 46 + name.length).equals(name)) data.writeUInt32LE(1024, at + 24);
    }
    writeFileSync(path, data);
    await expect(readAll(file)).rejects.toThrow(/could not be read as an Excel workbook: the zip archive is damaged in its part xl\/worksheets\/sheet1\.xml/);
  });

  it('reopening workbooks many times, breaking off early, never crashes and leaks no file handles', async () => {
    const file = await writeWorkbook(workbookParts());
    const openFiles = (): number => readdirSync('/proc/self/fd').length;
    const before = openFiles();
    for (let i = 0; i < 200; i++) {
      const source = await openSource({ file }, { baseDir: dir });
      for await (const item of source.items) {
        expect(item.kind).toBe('row');
        break;
      }
    }
    expect(await readAll(file)).toEqual([{ Name: 'Ada' }]);
    // Closing is asynchronous: give the last closes a moment.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(openFiles()).toBeLessThanOrEqual(before + 2);
  });

  it('closes the file of a source dropped without reading its rows (e.g. a missing mapped column)', async () => {
    const file = await writeWorkbook(workbookParts());
    const openFiles = (): number => readdirSync('/proc/self/fd').length;
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const before = openFiles();
    // Held while counting, so a collection that happens to run meanwhile cannot close them early.
    const dropped: unknown[] = [];
    for (let i = 0; i < 40; i++) dropped.push(await openSource({ file }, { baseDir: dir }));
    expect(openFiles()).toBeGreaterThanOrEqual(before + 40);
    dropped.length = 0;
    for (let attempt = 0; attempt < 20 && openFiles() > before + 2; attempt++) {
      gc();
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(openFiles()).toBeLessThanOrEqual(before + 2);
  });
});
