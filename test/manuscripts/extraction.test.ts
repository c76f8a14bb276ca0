/** Pure parts of the emulator's manuscript handling: multipart parsing and text extraction. */
import { deflateSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { boundaryOf, MultipartError, parseMultipart } from '../../src/emulator/manuscripts/multipart.js';
import { extractPdfText, extractText, referenceLines, sourceKind } from '../../src/emulator/manuscripts/text-extraction.js';
import { headerAuthors } from '../../src/emulator/manuscripts/upload.js';
import { buildDocx, buildPdf, MANUSCRIPT_LINES } from '../fixtures/manuscripts/generate.js';
import { fixtureFile } from './helpers.js';

describe('multipart parser', () => {
  const body = (parts: string[]) => Buffer.from(`${parts.join('')}--b--\r\n`, 'latin1');
  it('reads fields, repeated fields and files', () => {
    const form = parseMultipart(
      body([
        '--b\r\nContent-Disposition: form-data; name="title"\r\n\r\nA title\r\nwith a line break\r\n',
        '--b\r\nContent-Disposition: form-data; name="tag"\r\n\r\none\r\n',
        '--b\r\nContent-Disposition: form-data; name="tag"\r\n\r\ntwo\r\n',
        '--b\r\nContent-Disposition: form-data; name="source_file"; filename="a \\"b\\".pdf"\r\nContent-Type: application/pdf\r\n\r\n%PDF-\x00\xff\r\n',
      ]),
      'b',
    );
    expect(form.fields.get('title')).toEqual(['A title\r\nwith a line break']);
    expect(form.fields.get('tag')).toEqual(['one', 'two']);
    expect(form.files).toHaveLength(1);
    expect(form.files[0]).toMatchObject({ field: 'source_file', filename: 'a "b".pdf', contentType: 'application/pdf' });
    expect([...form.files[0]!.data]).toEqual([...Buffer.from('%PDF-\x00\xff', 'latin1')]);
  });
  it.each([
    ['no boundary at all', 'hello'],
    ['no end of headers', '--b\r\nContent-Disposition: form-data; name="x"'],
    ['no closing boundary', '--b\r\nContent-Disposition: form-data; name="x"\r\n\r\nvalue'],
    ['no field name', '--b\r\nContent-Disposition: form-data\r\n\r\nv\r\n--b--'],
  ])('rejects a body with %s', (_label, text) => {
    expect(() => parseMultipart(Buffer.from(text), 'b')).toThrow(MultipartError);
  });
  it.each([
    ['multipart/form-data; boundary=abc', 'abc'],
    ['multipart/form-data; boundary="a b"', 'a b'],
    ['application/json', null],
    [undefined, null],
  ])('boundary of %j is %j', (header, expected) => {
    expect(boundaryOf(header)).toBe(expected);
  });
});

describe('text extraction', () => {
  const text = MANUSCRIPT_LINES.join('\n');
  it.each(['manuscript.pdf', 'manuscript-plain.pdf', 'manuscript.docx'])('%s gives the manuscript text line by line', async (name) => {
    expect(await extractText(fixtureFile(name))).toBe(text);
  });
  it('decodes PDF string escapes', () => {
    const pdf = buildPdf(['Paren (x) and back\\slash'], false);
    expect(extractPdfText(pdf)).toBe('Paren (x) and back\\slash');
  });
  it('skips a corrupt Flate stream without failing', () => {
    const broken = Buffer.from('%PDF-1.4\n1 0 obj\n<< /Length 4 /Filter /FlateDecode >>\nstream\nnope\nendstream\nendobj\n', 'latin1');
    expect(extractPdfText(broken)).toBe('');
  });
  it('reads a DOCX built from other lines', async () => {
    expect(await extractText(await buildDocx(['One & two', '<three>']))).toBe('One & two\n<three>');
  });
  it.each([
    [Buffer.from('%PDF-1.7'), 'pdf'],
    [Buffer.from([0x50, 0x4b, 0x03, 0x04, 0]), 'docx'],
    [Buffer.from('hello'), 'unknown'],
    [deflateSync('x'), 'unknown'],
  ])('detects the kind of a file by its magic bytes (%#)', (data, kind) => {
    expect(sourceKind(data)).toBe(kind);
  });
  it('counts the lines of the References section', () => {
    expect(referenceLines(text)).toEqual(MANUSCRIPT_LINES.slice(MANUSCRIPT_LINES.indexOf('References') + 1));
    expect(referenceLines('no such section')).toEqual([]);
  });
  it('finds header authors (lines with an email or ORCID before the Abstract)', () => {
    expect(headerAuthors(text)).toEqual([
      { name: 'Rania Example', affiliation: 'Institut Pasteur, Paris, France', email: 'rania.example@pasteur.example.org', orcid: null },
    ]);
  });
});
