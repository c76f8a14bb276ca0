import { describe, expect, it } from 'vitest';
import { EXIT } from '../../src/errors/user-facing-error.js';
import { compileMapping, MappingError } from '../../src/mapping/index.js';
import type { RowProblem } from '../../src/mapping/types.js';
import { fixtureFields, mapping, row } from './builders.js';

const FIELDS = fixtureFields();
const ID = {
  level: '0b6f7a3e-1c2d-4e5f-8a9b-0c1d2e3f4a51',
  areas: '1c7e8b4f-2d3e-4f60-9bac-1d2e3f4a5b62',
  reviews: '2d8f9c5a-3e4f-4071-8cbd-2e3f4a5b6c73',
  lastReview: '3e9a0d6b-4f50-4182-9dce-3f4a5b6c7d84',
  notes: '4f0b1e7c-5061-4293-8edf-4a5b6c7d8e95',
  senior: '5a1e0f6c-0001-4a00-8000-000000000002',
  expert: '5a1e0f6c-0001-4a00-8000-000000000003',
  oncology: '6b2f1a7d-0002-4b00-8000-000000000001',
  genetics: '6b2f1a7d-0002-4b00-8000-000000000005',
};
const compile = (input: Record<string, unknown>) => compileMapping(mapping(input), FIELDS, { mappingFile: 'm.yaml' });

function problemsOf(result: ReturnType<ReturnType<typeof compile>['mapRow']>): RowProblem[] {
  if (result.kind !== 'rejected') throw new Error(`expected a rejected row, got ${result.kind}`);
  return result.problems;
}

function compileError(input: Record<string, unknown>): MappingError {
  try {
    compile(input);
  } catch (error) {
    if (error instanceof MappingError) return error;
    throw error;
  }
  throw new Error('expected a MappingError');
}

describe('typed XLSX cells', () => {
  it('keep a number intact in a decimal-comma field even when the field has text transforms', () => {
    const compiled = compile({
      client_id: { column: 'ID' },
      fields: { name: { column: 'Name' } },
      custom_fields: { 'Reviews completed': { column: 'Reviews', decimal: ',', transforms: ['trim'] } },
    });
    const result = compiled.mapRow(row({ ID: 'a', Name: 'A', Reviews: 1.234 }));
    expect(result.kind === 'record' && result.record.fields[ID.reviews]).toBe(1.234);
  });
});

describe('a full mapping', () => {
  const compiled = compile({
    client_id: { column: 'ID', prefix: 'rev-' },
    fields: {
      name: { columns: ['First', 'Last'], transforms: ['collapse_whitespace'] },
      emails: { column: 'Emails', split: [';', ','], transforms: ['trim', 'lower', 'email', 'dedupe'] },
      orcids: { column: 'ORCID', transforms: ['orcid'] },
      affiliations: { columns: ['Affiliation', 'Second affiliation'] },
    },
    custom_fields: {
      'expertise LEVEL': { column: 'Level', values: { Sr: 'Senior' } },
      'Subject areas': { column: 'Areas' },
      'Reviews completed': { column: 'Reviews', decimal: ',' },
      'Last review date': { column: 'Last review', date_formats: ['DD/MM/YYYY'] },
      Notes: { column: 'Notes', default: 'none' },
    },
  });

  it('orders managed fields: standard fields, then custom api_ids sorted', () => {
    expect(compiled.managedFields).toEqual([
      'name',
      'emails',
      'orcids',
      'affiliations',
      ID.level,
      ID.areas,
      ID.reviews,
      ID.lastReview,
      ID.notes,
    ]);
    expect(compiled.fieldNames[ID.level]).toBe('Expertise level');
  });

  it('maps a row into the write shape', () => {
    const result = compiled.mapRow(
      row({
        ID: ' 1042 ',
        First: ' Marie ',
        Last: 'Curie',
        Emails: 'Marie.Curie@Example.org; m.curie@radium.fr, marie.curie@example.org',
        ORCID: 'https://orcid.org/0000-0002-1825-0097',
        Affiliation: 'Institut du Radium',
        'Second affiliation': null,
        Level: 'sr',
        Areas: 'Oncology; genetics;oncology',
        Reviews: '12,5',
        'Last review': '04/05/2023',
        Notes: '',
      }),
    );
    expect(result).toEqual({
      kind: 'record',
      record: {
        clientId: 'rev-1042',
        provenance: { file: 'roster.csv', row: 2 },
        fields: {
          name: 'Marie Curie',
          emails: ['marie.curie@example.org', 'm.curie@radium.fr'],
          orcids: ['0000-0002-1825-0097'],
          affiliations: ['Institut du Radium'],
          [ID.level]: ID.senior,
          [ID.areas]: [ID.oncology, ID.genetics],
          [ID.reviews]: 12.5,
          [ID.lastReview]: '2023-05-04',
          [ID.notes]: 'none',
        },
      },
    });
  });

  it('keeps every managed field, null when empty, in managedFields order', () => {
    const result = compiled.mapRow(row({ ID: '7', First: 'Ada', Last: 'Lovelace' }));
    expect(result.kind).toBe('record');
    if (result.kind !== 'record') return;
    expect(Object.keys(result.record.fields)).toEqual(compiled.managedFields);
    expect(result.record.fields).toMatchObject({ emails: null, orcids: null, [ID.level]: null, [ID.areas]: null, [ID.notes]: 'none' });
  });

  it('passes typed XLSX cells through number and date coercion', () => {
    const result = compiled.mapRow(row({ ID: 7, First: 'Ada', Last: 'Lovelace', Reviews: 3, 'Last review': 45351 }));
    expect(result.kind === 'record' && result.record.fields).toMatchObject({ [ID.reviews]: 3, [ID.lastReview]: '2024-02-29' });
    expect(result.kind === 'record' && result.record.clientId).toBe('rev-7');
  });

  it('reports every bad cell of a row, naming column, value and fix', () => {
    const problems = problemsOf(
      compiled.mapRow(
        row({
          ID: '9',
          First: '',
          Last: '',
          Emails: 'good@x.org; bad@@x.org',
          ORCID: '0000-0002-1825-0098',
          Level: 'Guru',
          Areas: 'Oncology; Astrology',
          Reviews: '3.5',
          'Last review': '30/02/2023',
        }),
      ),
    );
    expect(problems.map((p) => [p.code, p.column, p.value])).toEqual([
      ['missing_required', 'First + Last', undefined],
      ['invalid_email', 'Emails', 'bad@@x.org'],
      ['invalid_orcid', 'ORCID', '0000-0002-1825-0098'],
      ['unknown_option', 'Level', 'Guru'],
      ['unknown_option', 'Areas', 'Astrology'],
      ['invalid_number', 'Reviews', '3.5'],
      ['invalid_date', 'Last review', '30/02/2023'],
    ]);
    const level = problems.find((p) => p.column === 'Level')!;
    expect(level.message).toContain('Junior, Senior, Expert');
    expect(problems.every((p) => p.hint && p.provenance.row === 2)).toBe(true);
  });

  it('truncates long values to 80 characters', () => {
    const long = `${'x'.repeat(200)}@example.org`;
    const problems = problemsOf(compiled.mapRow(row({ ID: '1', First: 'A', Last: 'B', Emails: long })));
    expect(problems[0]!.value).toHaveLength(80);
  });
});

describe('client_id', () => {
  it.each([
    [{ column: 'ID' }, { ID: ' 42 ' }, '42'],
    [{ column: 'ID', prefix: 'legacy-' }, { ID: 42 }, 'legacy-42'],
    [{ columns: ['Dept', 'ID'] }, { Dept: 'ONC', ID: 7 }, 'ONC-7'],
    [{ columns: ['Dept', 'ID'], join: ':', transforms: ['lower'] }, { Dept: 'ONC', ID: 7 }, 'onc:7'],
    [{ from: 'email' }, { Email: 'Marie.Curie@Example.org; other@x.org' }, 'marie.curie@example.org'],
    [{ from: 'orcid', prefix: 'orcid:' }, { ORCID: 'orcid.org/0000 0002 1825 0097' }, 'orcid:0000-0002-1825-0097'],
  ] as const)('%j on %j → %s', (spec, values, expected) => {
    const compiled = compile({
      client_id: spec,
      fields: {
        name: { column: 'Name' },
        emails: { column: 'Email', split: ';' },
        orcids: { column: 'ORCID' },
      },
    });
    const result = compiled.mapRow(row({ Name: 'Marie Curie', ...values }));
    expect(result.kind === 'record' && result.record.clientId).toBe(expected);
  });

  it.each([
    [{ column: 'ID' }, { ID: '  ' }, 'ID'],
    [{ columns: ['Dept', 'ID'] }, { Dept: 'ONC', ID: null }, 'Dept + ID'],
    [{ from: 'email' }, { Email: '' }, 'Email'],
  ] as const)('%j with %j is missing_client_id on %s', (spec, values, column) => {
    const compiled = compile({ client_id: spec, fields: { name: { column: 'Name' }, emails: { column: 'Email' } } });
    const problems = problemsOf(compiled.mapRow(row({ Name: 'X', ...values })));
    expect(problems).toMatchObject([{ code: 'missing_client_id', column }]);
  });

  it('from: orcid needs fields.orcids', () => {
    expect(compileError({ client_id: { from: 'orcid' } }).problems).toEqual([
      { path: 'client_id.from', message: '`from: orcid` needs fields.orcids to be mapped' },
    ]);
  });
});

describe('row filters', () => {
  it.each([
    [{ column: 'Active', equals: 'No' }, 'no', true],
    [{ column: 'Active', equals: 'No' }, ' NO ', true],
    [{ column: 'Active', equals: 'No' }, 'Yes', false],
    [{ column: 'Active', not_equals: 'yes' }, 'Yes', false],
    [{ column: 'Active', not_equals: 'yes' }, 'maybe', true],
    [{ column: 'Active', not_equals: 'yes' }, null, true],
    [{ column: 'Active', in: ['retired', 'Deceased'] }, 'DECEASED', true],
    [{ column: 'Active', in: ['retired', 'Deceased'] }, 'active', false],
    [{ column: 'Active', empty: true }, '   ', true],
    [{ column: 'Active', empty: true }, 'x', false],
    [{ column: 'Active', not_empty: true }, 0, true],
    [{ column: 'Active', not_empty: true }, null, false],
  ] as const)('%j on %j → filtered %s', (filter, cell, filtered) => {
    const compiled = compile({ skip_rows: [filter] });
    const result = compiled.mapRow(row({ ID: '1', Name: 'A', Active: cell }));
    expect(result.kind).toBe(filtered ? 'filtered' : 'record');
  });

  it('filters before validating, so a skipped row with bad cells is not rejected', () => {
    const compiled = compile({ skip_rows: [{ column: 'Active', equals: 'no' }] });
    expect(compiled.mapRow(row({ ID: '', Name: '', Active: 'No' })).kind).toBe('filtered');
  });
});

describe('compile errors (exit 1, with paths)', () => {
  it('unknown custom field: lists the available names and the closest match', () => {
    const error = compileError({ custom_fields: { 'Expertize level': { column: 'L' } } });
    expect(error.exitCode).toBe(EXIT.usage);
    expect(error.problems).toHaveLength(1);
    expect(error.problems[0]!.path).toBe('custom_fields.Expertize level');
    expect(error.problems[0]!.message).toContain('Did you mean "Expertise level"?');
    expect(error.problems[0]!.message).toContain('"Board term ends"');
    expect(error.message).toContain('m.yaml');
  });

  it.each([
    [{ 'Expertise level': { column: 'L', values: { Sr: 'Seniour' } } }, 'custom_fields.Expertise level.values.Sr', /Did you mean "Senior"/],
    [{ 'Last review date': { column: 'D', decimal: ',' } }, 'custom_fields.Last review date.decimal', /date field/],
    [{ 'Reviews completed': { column: 'R', date_formats: ['DD/MM/YYYY'] } }, 'custom_fields.Reviews completed.date_formats', /number field/],
    [{ Notes: { column: 'N', values: { a: 'b' } } }, 'custom_fields.Notes.values', /str field/],
    [{ Notes: { column: 'N', split: ';' } }, 'custom_fields.Notes.split', /list fields/],
    [{ 'Subject areas': { column: 'S', join: ' ' } }, 'custom_fields.Subject areas.join', /is a list/],
    [{ 'Reviews completed': { column: 'R', default: 'many' } }, 'custom_fields.Reviews completed.default', /not a number/],
    [{ 'Reviews completed': { column: 'R', default: ['1'] } }, 'custom_fields.Reviews completed.default', /single default/],
    [{ 'Last review date': { column: 'D', date_formats: ['MM/DD/YYYY', 'DD/MM/YYYY'] } }, 'custom_fields.Last review date.date_formats', /guess/],
    [{ 'Expertise level': { column: 'L' }, 'EXPERTISE LEVEL': { column: 'M' } }, 'custom_fields.EXPERTISE LEVEL', /same custom field/],
  ])('%j → %s', (customFields, path, message) => {
    const error = compileError({ custom_fields: customFields });
    expect(error.problems.map((p) => p.path)).toContain(path);
    expect(error.problems.find((p) => p.path === path)!.message).toMatch(message);
  });

  it('split on a single-valued standard field', () => {
    expect(compileError({ fields: { name: { column: 'N', split: ';' } } }).problems[0]!.path).toBe('fields.name.split');
  });

  it('collects every problem of the mapping at once', () => {
    const error = compileError({ custom_fields: { Nope: { column: 'a' }, Nada: { column: 'b' } } });
    expect(error.problems).toHaveLength(2);
    expect(error.message).toMatch(/2 problems/);
  });
});

describe('checkHeaders', () => {
  const compiled = compile({
    fields: { name: { column: 'Name' }, emails: { column: 'E-mail' } },
    skip_rows: [{ column: 'Active', equals: 'No' }],
  });
  it('accepts a header with every column', () => {
    expect(() => compiled.checkHeaders(['ID', 'Name', 'E-mail', 'Active', 'Extra'], 'r.csv')).not.toThrow();
  });
  it('names each missing column, where the mapping reads it, and the closest header', () => {
    try {
      compiled.checkHeaders(['ID', 'name', 'Email', 'Active'], 'r.csv');
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(MappingError);
      const e = error as MappingError;
      expect(e.problems).toEqual([
        { path: 'fields.name', message: 'column "Name" is not in the header of r.csv; did you mean "name"?' },
        { path: 'fields.emails', message: 'column "E-mail" is not in the header of r.csv; did you mean "Email"?' },
      ]);
      expect(e.hint).toContain('"Email"');
    }
  });
});
