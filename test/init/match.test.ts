/** The pure column matcher of `rostersync init`: shapes and names, one row per case. */
import { describe, expect, it } from 'vitest';
import type { CustomField } from '../../src/client/index.js';
import { dateFormatsOf, matchColumns, nameScore, optionFor, type ColumnMatch } from '../../src/init/match.js';

const FIELDS: CustomField[] = [
  { api_id: 'a', name: 'Expertise level', data_kind: 'single_option', options: [{ api_id: 'a1', option: 'Junior' }, { api_id: 'a2', option: 'Senior' }, { api_id: 'a3', option: 'Expert' }] },
  { api_id: 'b', name: 'Subject areas', data_kind: 'multi_option', options: ['Oncology', 'Genetics', 'Statistics'].map((option, i) => ({ api_id: `b${i}`, option })) },
  { api_id: 'c', name: 'Reviews completed', data_kind: 'number' },
  { api_id: 'd', name: 'Last review date', data_kind: 'date' },
  { api_id: 'e', name: 'Notes', data_kind: 'str' },
  { api_id: 'f', name: 'Conflict of interest', data_kind: 'single_option', options: [{ api_id: 'f1', option: 'Yes' }, { api_id: 'f2', option: 'No' }] },
] as CustomField[];

/** Matches one column (plus an id column so client_id is settled) and returns its match. */
function matchOne(header: string, cells: string[]): ColumnMatch | undefined {
  const result = matchColumns(['Key ID', header], { 'Key ID': ['1', '2', '3'], [header]: cells }, FIELDS);
  return result.matches.find((m) => m.columns.includes(header));
}

describe('matchColumns: one column at a time', () => {
  it.each([
    // header, cells, target, extra properties expected on the match
    ['Contact', ['a@x.org', 'b@y.org'], 'field emails', { transforms: ['trim', 'lower', 'email'] }],
    ['Whatever', ['a@x.org; c@x.org', 'b@y.org'], 'field emails', { split: [';'], transforms: ['trim', 'lower', 'email', 'dedupe'] }],
    ['Mails', ['a@x.org, c@x.org', 'b@y.org'], 'field emails', { split: [','] }],
    ['iD', ['https://orcid.org/0000-0002-1825-0097', '0000 0001 5109 3700'], 'field orcids', { transforms: ['orcid'] }],
    ['Name', ['Curie, Marie', 'Bohr, Niels'], 'field name', { transforms: ['last_first', 'collapse_whitespace'] }],
    ['Full name', ['Marie Curie', 'Niels Bohr'], 'field name', { transforms: ['collapse_whitespace'] }],
    ['Institution', ['CNRS', 'KU Leuven'], 'field affiliations', { sure: true }],
    ['Home institution', ['CNRS', 'KU Leuven'], 'field affiliations', { sure: false }],
    ['Level', ['Jr', 'Sr', 'Expert'], 'custom Expertise level', { values: { Jr: 'Junior', Sr: 'Senior' }, sure: false }],
    ['Expertise level', ['Junior', 'Senior'], 'custom Expertise level', { sure: true }],
    ['Areas', ['Oncology, Genetics', 'Statistics'], 'custom Subject areas', { split: [','] }],
    ['Reviews', ['48,0', '3,5'], 'custom Reviews completed', { decimal: ',' }],
    ['Last review', ['15.03.2022', '44927'], 'custom Last review date', { date_formats: ['DD.MM.YYYY'] }],
    ['Last review', ['03/15/2022'], 'custom Last review date', { date_formats: ['MM/DD/YYYY'] }],
    ['Remarks', ['likes short papers'], 'custom Notes', {}],
    ['COI', ['Yes', 'No'], 'custom Conflict of interest', {}],
    ['Active', ['Yes', 'No'], 'skip No', {}],
  ] as const)('%s %j → %s', (header, cells, target, extra) => {
    const m = matchOne(header, [...cells]);
    expect(m, 'a match').toBeDefined();
    const t = m!.target;
    const got = t.kind === 'field' ? `field ${t.field}` : t.kind === 'custom' ? `custom ${t.field}` : t.kind === 'skip_if' ? `skip ${t.equals}` : t.kind;
    expect(got).toBe(target);
    expect(m).toMatchObject(extra);
  });

  it.each([
    ['Country', ['France', 'Chile']],
    ['Track', ['Industry', 'Research']],
    ['Phone', ['+33 1 23 45 67 89']],
  ])('%s is left out', (header, cells) => {
    expect(matchOne(header, cells)).toBeUndefined();
  });

  it('joins first and last name columns and never takes "Last review" for a surname', () => {
    const headers = ['ID', 'First name', 'Last name', 'Last review'];
    const sample = { ID: ['1', '2'], 'First name': ['Ada', 'Alan'], 'Last name': ['Lovelace', 'Turing'], 'Last review': ['2024-01-02', '2023-05-06'] };
    const { matches } = matchColumns(headers, sample, FIELDS);
    expect(matches.find((m) => m.target.kind === 'field' && m.target.field === 'name')?.columns).toEqual(['First name', 'Last name']);
    expect(matches.find((m) => m.columns.includes('Last review'))?.target).toEqual({ kind: 'custom', field: 'Last review date' });
  });

  it('a repeated id is a guess, and no id column is a doubt', () => {
    const repeated = matchColumns(['PersonID', 'Name'], { PersonID: ['1', '1'], Name: ['A', 'B'] }, []);
    expect(repeated.matches[0]).toMatchObject({ target: { kind: 'client_id' }, sure: false });
    const none = matchColumns(['Name', 'Email'], { Name: ['A'], Email: ['a@x.org'] }, []);
    expect(none.doubts.join('\n')).toContain('No column looks like a stable id');
  });

  it('without an id or email column, the first column of distinct cells is a guessed client_id', () => {
    const { matches } = matchColumns(['#', 'first name', 'last name'], { '#': ['1', '2'], 'first name': ['Ada', 'Ada'], 'last name': ['L', 'T'] }, []);
    expect(matches.find((m) => m.target.kind === 'client_id')).toMatchObject({ columns: ['#'], sure: false });
  });

  it('a column whose labels are not the options of a like-named option field is left out', () => {
    const board: CustomField[] = [{ api_id: 'r', name: 'Board role', data_kind: 'single_option', options: [{ api_id: 'r1', option: 'Editor-in-Chief' }] }] as CustomField[];
    const { unmapped } = matchColumns(['ID', 'role'], { ID: ['1', '2'], role: ['PC member', 'senior PC member'] }, board);
    expect(unmapped.map((u) => u.column)).toEqual(['role']);
  });

  it('labels with no option are doubts, not silent guesses', () => {
    const { doubts } = matchColumns(['ID', 'Level'], { ID: ['1', '2'], Level: ['Jr', 'Guru'] }, FIELDS);
    expect(doubts.join('\n')).toContain('"Guru"');
  });
});

describe('helpers', () => {
  it.each([
    [['01.02.2020'], 'DD.MM.YYYY', true],
    [['31.01.2020'], 'DD.MM.YYYY', false],
    [['12/31/2020'], 'MM/DD/YYYY', false],
    [['31-12-2020'], 'DD-MM-YYYY', false],
  ])('dateFormatsOf(%j) = %s, ambiguous %s', (cells, format, ambiguous) => {
    expect(dateFormatsOf(cells)).toEqual({ formats: [format], ambiguous });
  });

  it.each([
    ['jr', 'Junior'],
    ['PROF', undefined],
    ['Board member', 'Editorial Board Member'],
    ['EiC', 'Editor-in-Chief'],
    ['E', undefined], // Editor-in-Chief and Editorial Board Member both start with it: no guess
  ])('optionFor(%s) = %s', (label, option) => {
    expect(optionFor(label, ['Junior', 'Senior', 'Expert', 'Editor-in-Chief', 'Editorial Board Member'])).toBe(option);
  });

  it.each([
    ['Notes', 'Notes', 1],
    ['COI', 'Conflict of interest', 0.7],
    ['Last review', 'Last review date', 0.7],
    ['Remarks', 'Notes', 0.7],
    ['Country', 'Notes', 0],
  ])('nameScore(%s, %s) = %s', (header, field, score) => {
    expect(nameScore(header, field)).toBe(score);
  });
});
