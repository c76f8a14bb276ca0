/**
 * Values people recognise, as a mapped row carries them: Unicode NFC by default (property test:
 * an NFC row and its NFD twin plan to the same record hash), `trim` of invisible characters,
 * `on_invalid: skip_value` (the field left out of the record, a warning naming the cell), and
 * formula-like values (a warning, or invalid under `formula_like: reject`).
 */
import { describe, expect, it } from 'vitest';
import { compileMapping, MappingError } from '../../src/mapping/index.js';
import type { MapRowResult } from '../../src/mapping/map-row.js';
import { applyTransform } from '../../src/mapping/transforms.js';
import { canonicalJson, hashJson } from '../../src/plan/canonical.js';
import { seededRandom } from '../../src/runtime/seeded-random.js';
import { fixtureFields, mapping, row } from './builders.js';

const FIELDS = fixtureFields();
const compile = (input: Record<string, unknown>) => compileMapping(mapping(input), FIELDS, { mappingFile: 'm.yaml' });

const BASE = {
  client_id: { column: 'ID' },
  fields: {
    name: { column: 'Name', transforms: ['collapse_whitespace', 'last_first'] },
    emails: { column: 'Email', split: ';', transforms: ['trim', 'email', 'dedupe'] },
    affiliations: { column: 'Affiliation' },
  },
  custom_fields: { Notes: { column: 'Notes' } },
};

function record(result: MapRowResult) {
  if (result.kind !== 'record') throw new Error(`expected a record, got ${result.kind}: ${JSON.stringify(result)}`);
  return result;
}

/** Characters whose NFC and NFD differ, or that NFC composes: accents, Vietnamese, Hangul, the Ångström and ohm signs. */
const PIECES = ['é', 'e\u0301', 'Å', '\u212b', 'ñ', 'ệ', 'ü', 'ç', 'Ω', '\u2126', '한', '\u1112\u1161\u11ab', 'ő', 'ø', 'a', 'B', 'z', ' '];

function randomText(next: () => number, length: number): string {
  let text = '';
  for (let i = 0; i < length; i++) text += PIECES[Math.floor(next() * PIECES.length)]!;
  return text.trim() || 'x';
}

describe('Unicode NFC', () => {
  it('property: an NFC row and its NFD twin map to the same record and the same hash (500 seeded rows)', () => {
    const compiled = compile(BASE);
    const next = seededRandom(23);
    let differed = 0;
    for (let i = 0; i < 500; i++) {
      const cells = {
        ID: `id-${randomText(next, 4)}`,
        Name: `${randomText(next, 6)}, ${randomText(next, 5)}`,
        Email: `${randomText(next, 5).replace(/ /g, '')}@bücher.de`,
        Affiliation: randomText(next, 12),
        Notes: randomText(next, 8),
      };
      const nfc = Object.fromEntries(Object.entries(cells).map(([k, v]) => [k, v.normalize('NFC')]));
      const nfd = Object.fromEntries(Object.entries(cells).map(([k, v]) => [k, v.normalize('NFD')]));
      if (JSON.stringify(nfc) !== JSON.stringify(nfd)) differed++;
      const a = record(compiled.mapRow(row(nfc))).record;
      const b = record(compiled.mapRow(row(nfd))).record;
      expect(b.clientId).toBe(a.clientId);
      expect(hashJson(canonicalJson(b.fields))).toBe(hashJson(canonicalJson(a.fields)));
      expect(canonicalJson(a.fields)).toBe(canonicalJson(a.fields).normalize('NFC'));
    }
    // The property is only worth something if the twins really differed.
    expect(differed).toBeGreaterThan(450);
  });

  it('`unicode: as_written` keeps each cell as it is', () => {
    const compiled = compile({ ...BASE, unicode: 'as_written' });
    const a = record(compiled.mapRow(row({ ID: '1', Name: 'José Núñez', Notes: 'café' })));
    const b = record(compiled.mapRow(row({ ID: '1', Name: 'José Núñez'.normalize('NFD'), Notes: 'café'.normalize('NFD') })));
    expect(b.record.fields.name).toBe('José Núñez'.normalize('NFD'));
    expect(hashJson(canonicalJson(b.record.fields))).not.toBe(hashJson(canonicalJson(a.record.fields)));
  });

  it('skip_rows compares in NFC too', () => {
    const compiled = compile({ ...BASE, skip_rows: [{ column: 'Notes', equals: 'café' }] });
    expect(compiled.mapRow(row({ ID: '1', Name: 'A', Notes: 'cafe\u0301' })).kind).toBe('filtered');
  });
});

describe('trim', () => {
  it.each([
    ['\u200bJosé\u200b', 'José'],
    ['\ufeffAnna Berg', 'Anna Berg'],
    ['\u200eLi Wei\u200f', 'Li Wei'],
    ['\u00a0\u2007Kim\u202f\u3000', 'Kim'],
    ['\u2066Ali\u2069\u2060', 'Ali'],
    ['Zoë\u200d', 'Zoë'],
  ])('%j → %j', (input, expected) => {
    expect(applyTransform('trim', input)).toEqual({ ok: true, value: expected });
  });

  it('keeps the zero-width joiners and non-joiners inside a name', () => {
    expect(applyTransform('trim', ' می\u200cخواهم ')).toEqual({ ok: true, value: 'می\u200cخواهم' });
  });
});

describe('on_invalid: skip_value', () => {
  const skipping = {
    ...BASE,
    fields: {
      ...BASE.fields,
      emails: { ...BASE.fields.emails, on_invalid: 'skip_value' },
      orcids: { column: 'ORCID', transforms: ['orcid'], on_invalid: 'skip_value' },
    },
    custom_fields: { 'Reviews completed': { column: 'Reviews', on_invalid: 'skip_value' } },
  };

  it('leaves a field whose only value is invalid out of the record, with a warning naming the cell', () => {
    const compiled = compile(skipping);
    const result = record(compiled.mapRow(row({ ID: '1', Name: 'Ada', Email: 'ada@example.org', ORCID: '0000-0002-1825-0098', Reviews: 'many' }, 7)));
    expect(result.record.fields).not.toHaveProperty('orcids');
    expect(result.record.fields).not.toHaveProperty('2d8f9c5a-3e4f-4071-8cbd-2e3f4a5b6c73');
    expect(result.record.skipped).toEqual(['orcids', '2d8f9c5a-3e4f-4071-8cbd-2e3f4a5b6c73']);
    expect(result.record.fields.emails).toEqual(['ada@example.org']);
    expect(result.warnings?.map((w) => [w.provenance.row, w.column, w.code, w.value])).toEqual([
      [7, 'ORCID', 'invalid_orcid', '0000-0002-1825-0098'],
      [7, 'Reviews', 'invalid_number', 'many'],
    ]);
    expect(result.warnings?.[0]?.message).toMatch(/value skipped \(on_invalid: skip_value\): the service keeps its orcids as it is/);
  });

  it('drops only the invalid items of a list', () => {
    const compiled = compile(skipping);
    const result = record(compiled.mapRow(row({ ID: '1', Name: 'Ada', Email: 'ada@example.org; ada@gmial', ORCID: '' })));
    expect(result.record.fields.emails).toEqual(['ada@example.org']);
    expect(result.record.fields.orcids).toBeNull();
    expect(result.record.skipped).toBeUndefined();
    expect(result.warnings?.[0]).toMatchObject({ code: 'invalid_email', value: 'ada@gmial' });
    expect(result.warnings?.[0]?.message).toMatch(/emails is synced with the valid values only/);
  });

  it('reject_row, the default, still rejects the row', () => {
    const compiled = compile({ ...BASE, fields: { ...BASE.fields, orcids: { column: 'ORCID', transforms: ['orcid'] } } });
    expect(compiled.mapRow(row({ ID: '1', Name: 'Ada', ORCID: '0000-0002-1825-0098' })).kind).toBe('rejected');
  });

  it('is a mapping error on name and on required fields', () => {
    expect(() => compile({ ...BASE, fields: { ...BASE.fields, name: { column: 'Name', on_invalid: 'skip_value' } } })).toThrow(MappingError);
    expect(() => compile({ ...BASE, fields: { ...BASE.fields, emails: { column: 'Email', required: true, on_invalid: 'skip_value' } } })).toThrow(/emails is required/);
  });
});

describe('formula-like values', () => {
  const cells = { ID: '1', Name: '=HYPERLINK("http://evil.example";"click")', Affiliation: '@SUM(A1)', Notes: '-12.5' };

  it('are synced as written with a warning naming each cell', () => {
    const result = record(compile(BASE).mapRow(row(cells)));
    expect(result.record.fields.name).toBe(cells.Name);
    expect(result.warnings?.map((w) => [w.column, w.code])).toEqual([
      ['Name', 'formula_like'],
      ['Affiliation', 'formula_like'],
    ]);
  });

  it('are invalid under `formula_like: reject` (and skipped under on_invalid: skip_value)', () => {
    const rejected = compile({ ...BASE, formula_like: 'reject' }).mapRow(row(cells));
    expect(rejected.kind === 'rejected' && rejected.problems.map((p) => p.code)).toEqual(['formula_like', 'formula_like']);
    // The hint suggests `formula_like: reject` only where it is not on already.
    expect(rejected.kind === 'rejected' && rejected.problems.every((p) => !p.hint?.includes('formula_like: reject'))).toBe(true);
    expect(record(compile(BASE).mapRow(row(cells))).warnings?.[0]?.hint).toContain('`formula_like: reject`');
    const skipping = compile({ ...BASE, formula_like: 'reject', fields: { ...BASE.fields, affiliations: { column: 'Affiliation', on_invalid: 'skip_value' } } });
    const result = skipping.mapRow(row({ ...cells, Name: 'Ada' }));
    expect(result.kind === 'record' && result.record.skipped).toEqual(['affiliations']);
  });
});

describe('a formula-like cell is never transformed', () => {
  it('last_first does not reorder it at its comma: synced as written with a warning', () => {
    const formula = '=HYPERLINK("http://x","Doe")';
    const result = record(compile(BASE).mapRow(row({ ID: '1', Name: formula })));
    expect(result.record.fields.name).toBe(formula);
    expect(result.warnings?.map((w) => w.code)).toEqual(['formula_like']);
  });

  it('is rejected under `formula_like: reject`', () => {
    const result = compile({ ...BASE, formula_like: 'reject' }).mapRow(row({ ID: '1', Name: '=HYPERLINK("http://x","Doe")' }));
    expect(result.kind === 'rejected' && result.problems.map((p) => p.code)).toEqual(['formula_like']);
  });
});

describe('a name of only invisible characters', () => {
  it.each(['\u200b', ' \u200b\u2060 ', '\ufeff', '\u3164'])('%j is an empty name: the row is rejected as missing its name', (name) => {
    const result = compile(BASE).mapRow(row({ ID: '1', Name: name }));
    expect(result.kind === 'rejected' && result.problems.map((p) => p.code)).toEqual(['missing_required']);
  });

  it('a zero-width space is no name even without trimming transforms', () => {
    const plain = compile({ ...BASE, fields: { ...BASE.fields, name: { column: 'Name' } } });
    const result = plain.mapRow(row({ ID: '1', Name: '\u200b' }));
    expect(result.kind === 'rejected' && result.problems.map((p) => p.code)).toEqual(['missing_required']);
  });
});

describe('email addresses that look like another', () => {
  const cells = { ID: '1', Name: 'Jane', Email: 'jane@exаmple.org' };

  it('are synced with a warning naming the character', () => {
    const result = record(compile(BASE).mapRow(row(cells)));
    expect(result.record.fields.emails).toEqual(['jane@exаmple.org']);
    expect(result.warnings?.[0]).toMatchObject({ column: 'Email', code: 'email_lookalike' });
    expect(result.warnings?.[0]?.message).toContain('U+0430');
  });

  it('are invalid under `email_lookalikes: reject`', () => {
    const result = compile({ ...BASE, email_lookalikes: 'reject' }).mapRow(row({ ...cells, Email: 'ｊａｎｅ@example.org' }));
    expect(result.kind === 'rejected' && result.problems.map((p) => [p.code, p.column])).toEqual([['invalid_email', 'Email']]);
  });
});

describe('last_first in a row', () => {
  it('a name it leaves as written is a warning naming the cell', () => {
    const result = record(compile(BASE).mapRow(row({ ID: '1', Name: 'Smith, John and Jane' }, 4)));
    expect(result.record.fields.name).toBe('Smith, John and Jane');
    expect(result.warnings?.[0]).toMatchObject({ column: 'Name', code: 'name_left_as_written', provenance: { row: 4 } });
  });
});
