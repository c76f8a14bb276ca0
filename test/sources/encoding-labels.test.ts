/** source.csv.encoding: the WHATWG Encoding Standard's labels, mapped to iconv-lite codecs. */
import iconv from 'iconv-lite';
import { describe, expect, it } from 'vitest';
import { csvOptionsSchema } from '../../src/sources/options.js';
import { encodingOfLabel, iconvCodec } from '../../src/sources/encoding/labels.js';

describe('encoding labels', () => {
  it.each([
    ['utf8', 'UTF-8'],
    ['latin1', 'windows-1252'],
    ['ISO-8859-1', 'windows-1252'],
    ['iso-8859-9', 'windows-1254'],
    ['cp1250', 'windows-1250'],
    [' Windows-1251 ', 'windows-1251'],
    ['koi8-ru', 'KOI8-U'],
    ['sjis', 'Shift_JIS'],
    ['ms932', 'Shift_JIS'],
    ['gb2312', 'GBK'],
    ['big5-hkscs', 'Big5'],
    ['ks_c_5601-1987', 'EUC-KR'],
    ['mac', 'macintosh'],
  ])('%s is %s, and iconv-lite decodes it', (label, name) => {
    expect(encodingOfLabel(label)).toBe(name);
    expect(iconv.encodingExists(iconvCodec(name))).toBe(true);
  });

  it('the pipeline schema takes labels and refuses the others with the reason', () => {
    expect(csvOptionsSchema.parse({ encoding: 'Shift_JIS' }).encoding).toBe('Shift_JIS');
    expect(csvOptionsSchema.parse({}).encoding).toBe('auto');
    expect(() => csvOptionsSchema.parse({ encoding: 'klingon' })).toThrow(/not an encoding label of the WHATWG Encoding Standard/);
    expect(csvOptionsSchema.parse({ encoding: 'utf-16le' }).encoding).toBe('utf-16le');
    expect(() => csvOptionsSchema.parse({ encoding: 'iso-2022-jp' })).toThrow(/ISO-2022-JP has no decoder here/);
  });
});
