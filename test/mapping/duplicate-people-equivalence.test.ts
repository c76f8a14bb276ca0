/**
 * The blocked, filtered check (src/mapping/duplicate-people.ts) finds exactly the pairs of its
 * definition, computed here the slow way: every pair of client_ids, every tier, no blocking, no
 * filter. Rosters are generated (seeded) to be awkward: accents, word order, case and punctuation,
 * one- and three-word names, initials, typos, shared and upper-case emails, addresses at one domain, spelling variants of one
 * affiliation, rows with no affiliation, and client_ids repeated (the later row counts).
 */
import { describe, expect, it } from 'vitest';
import { COMMON_WORD_ROWS, DuplicatePeopleFinder, NAME_SIMILARITY, nameSimilarity, type DuplicatePair } from '../../src/mapping/duplicate-people.js';
import { seededRandom } from '../../src/runtime/seeded-random.js';

type Fields = Record<string, string | string[] | null>;
type Row = { clientId: string; fields: Fields; provenance: { file: string; row: number } };

const FIRST = ['A.', 'J', 'Ann', 'Anna', 'Zoë', 'Zoe', 'Łukasz', 'Jonathan', 'Jonathon', 'Li', 'Wei', 'María José', 'Jean-Luc', 'O', 'Bo', 'Nguyễn Văn'];
const LAST = ['Lee', 'Müller', 'Muller', 'Pemberton', 'Pembertan', 'Wang', 'García-López', 'Garcia Lopez', "O'Neil", 'Oneil', 'Smith', 'Smyth', 'Ab'];
const AFFILIATIONS = [['Univ. of Oslo', 'UNIV OF OSLO', 'univ of oslo'], ['Universität Wien', 'Universitat Wien'], ['MIT'], ['École Polytechnique', 'Ecole polytechnique'], ['—']];
const EMAILS = ['ann@x.org', 'Ann@X.org', 'shared@lab.org', 'b@y.org', 'c@z.org', 'SHARED@lab.org'];
const ORCIDS = ['0000-0002-1825-0097', '0000-0001-5109-3700', '0000-0002-1694-233X'];

function roster(seed: number, rows: number): Row[] {
  const random = seededRandom(seed);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
  const typo = (name: string) => {
    const at = Math.floor(random() * name.length);
    const kind = Math.floor(random() * 3);
    return kind === 0 ? name.slice(0, at) + name.slice(at + 1) : kind === 1 ? `${name.slice(0, at)}x${name.slice(at)}` : `${name.slice(0, at)}q${name.slice(at + 1)}`;
  };
  const out: Row[] = [];
  for (let i = 0; i < rows; i++) {
    const first = pick(FIRST);
    const last = pick(LAST);
    const shape = random();
    let name = shape < 0.4 ? `${first} ${last}` : shape < 0.6 ? `${last}, ${first}` : shape < 0.7 ? `${first.toUpperCase()} ${last}` : shape < 0.8 ? `${first} ${pick(FIRST)} ${last}` : shape < 0.85 ? last : `${first} ${last}`;
    if (random() < 0.25) name = typo(name);
    const fields: Fields = { name: random() < 0.05 ? null : name };
    if (random() < 0.85) fields.affiliations = [pick(pick(AFFILIATIONS))];
    // Own addresses at one shared domain now and then (evidence against a name pair), else apart.
    const own = `p${i}@${random() < 0.3 ? 'uni.org' : `d${i}.org`}`;
    fields.emails = random() < 0.1 ? [] : random() < 0.15 ? [pick(EMAILS), own] : [own];
    fields.orcids = random() < 0.08 ? [pick(ORCIDS)] : [];
    // Now and then a client_id seen before: its later row replaces the earlier one.
    const clientId = i > 10 && random() < 0.05 ? `c${Math.floor(random() * i)}` : `c${i}`;
    out.push({ clientId, fields, provenance: { file: 'r.csv', row: i + 2 } });
  }
  return out;
}

/** Normalised text as defined (the module cuts plain ASCII into words its own faster way). */
const normaliseText = (text: string) =>
  text
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
const normaliseName = (name: string) => normaliseText(name).split(' ').filter(Boolean).sort().join(' ');

/** The definition, every pair: the strongest tier each pair of client_ids meets (docs/mapping.md). */
function slowPairs(rows: Row[]): Array<{ tier: string; a: string; b: string; evidence: string[] }> {
  const last = new Map<string, Row>();
  for (const row of rows) last.set(row.clientId, row);
  const people = [...last.values()].map((row) => {
    const list = (value: unknown) => (Array.isArray(value) ? (value as string[]).filter((item) => item !== '') : []);
    const affiliation = normaliseText(list(row.fields.affiliations)[0] ?? '');
    const name = affiliation === '' ? '' : normaliseName(typeof row.fields.name === 'string' ? row.fields.name : '');
    const words = name === '' ? [] : name.split(' ');
    // Blocking parts: each word at most one letter shorter than the longest, and the words but it.
    const longest = Math.max(0, ...words.map((word) => word.length));
    const parts = words.flatMap((word, at) => (word.length >= longest - 1 ? [word, words.filter((_, i) => i !== at).join(' ')] : [])).filter((part) => part !== '');
    const abbreviated = words.some((word) => word.length === 1);
    // The initials forms a full name can be written in: one word kept whole, the others cut; of
    // three words also one cut, the others kept, and one kept with another's initial, the third left out.
    const keptWhole = words.map((_, kept) => words.map((word, i) => (i === kept ? word : word[0]!)).sort().join(' '));
    const oneCut = words.map((_, cut) => words.map((word, i) => (i === cut ? word[0]! : word)).sort().join(' '));
    const oneLeftOut = words.flatMap((word, kept) => words.filter((_, i) => i !== kept).map((other) => [word, other[0]!].sort().join(' ')));
    const forms = words.length < 2 || words.length > 4 || abbreviated ? [] : words.length === 3 ? [...keptWhole, ...oneCut, ...oneLeftOut] : keptWhole;
    return { clientId: row.clientId, orcids: list(row.fields.orcids), emails: list(row.fields.emails).map((email) => email.toLowerCase()), affiliation, name, parts, abbreviated, forms };
  });
  type P = (typeof people)[number];
  const rowsByWord = new Map<string, number>();
  for (const p of people) if (p.name !== '') for (const word of p.name.split(' ')) rowsByWord.set(word, (rowsByWord.get(word) ?? 0) + 1);
  const isCommon = (name: string) => name.split(' ').every((word) => (rowsByWord.get(word) ?? 0) >= COMMON_WORD_ROWS);
  const rowsHere = (p: P, name: string) => people.filter((o) => o.affiliation === p.affiliation && o.name === name).length;
  const shared = (xs: string[], ys: string[]) => xs.filter((x) => ys.includes(x));
  const orcidsConflict = (p: P, q: P) => p.orcids.length > 0 && q.orcids.length > 0 && shared(p.orcids, q.orcids).length === 0;
  const domains = (p: P) => p.emails.map((email) => email.slice(email.lastIndexOf('@') + 1));
  const numberedApart = (p: P, q: P) => p.emails.some((x) => q.emails.some((y) => x !== y && x.replace(/\d+/g, '') === y.replace(/\d+/g, '')));
  const against = (p: P, q: P) =>
    orcidsConflict(p, q) || (p.emails.length > 0 && q.emails.length > 0 && shared(domains(p), domains(q)).length > 0 && (p.name !== q.name || isCommon(p.name) || numberedApart(p, q)));
  const evidence = (how: string, p: P, q: P) => [`${how}, "${p.name}" and "${q.name}", at the same affiliation "${p.affiliation}"`, `${how}, "${q.name}" and "${p.name}", at the same affiliation "${p.affiliation}"`];
  const out: Array<{ tier: string; a: string; b: string; evidence: string[] }> = [];
  const fuzzy: Array<{ p: P; q: P; how: string }> = [];
  for (const p of people) {
    for (const q of people) {
      if (!(p.clientId < q.clientId)) continue;
      const orcids = shared(p.orcids, q.orcids);
      const emails = shared(p.emails, q.emails);
      if (orcids.length > 0) out.push({ tier: 'orcid', a: p.clientId, b: q.clientId, evidence: orcids.map((orcid) => `same ORCID iD ${orcid}`) });
      else if (emails.length > 0) {
        if (!orcidsConflict(p, q)) out.push({ tier: 'email', a: p.clientId, b: q.clientId, evidence: emails.map((email) => `same email ${email}`) });
      } else if (p.name !== '' && q.name !== '' && p.affiliation === q.affiliation) {
        if (p.name === q.name) {
          if (rowsHere(p, p.name) === 2 && !against(p, q)) out.push({ tier: 'name', a: p.clientId, b: q.clientId, evidence: evidence('the same name', p, q) });
          continue;
        }
        const similarity = nameSimilarity(p.name, q.name);
        const blocked = p.parts.some((part) => q.parts.includes(part));
        if (!p.abbreviated && !q.abbreviated && blocked && similarity >= NAME_SIMILARITY) fuzzy.push({ p, q, how: `very similar names (${Math.round(similarity * 100)} %)` });
        for (const [x, y] of [[p, q], [q, p]] as const) {
          // x an initialled name that only y's full name fits at the affiliation.
          if (!x.abbreviated || y.abbreviated || similarity >= NAME_SIMILARITY || !y.forms.includes(x.name)) continue;
          const full = new Set(people.filter((o) => o.affiliation === x.affiliation && o.forms.includes(x.name)).map((o) => o.name));
          // Of as many words (only an email that spells it pairs a full name of more words).
          if (full.size === 1 && x.name.split(' ').length === y.name.split(' ').length && x.name.split(' ').length <= 4) fuzzy.push({ p: x, q: y, how: 'the same initials' });
        }
      }
    }
  }
  // Similar and initialled names: only a name that fits exactly one other at its affiliation.
  const partners = new Map<string, number>();
  for (const { p, q } of fuzzy) {
    if (against(p, q)) continue;
    for (const id of [p.clientId, q.clientId]) partners.set(id, (partners.get(id) ?? 0) + 1);
  }
  for (const { p, q, how } of fuzzy) {
    if (against(p, q) || partners.get(p.clientId) !== 1 || partners.get(q.clientId) !== 1 || rowsHere(p, p.name) > 1 || rowsHere(q, q.name) > 1) continue;
    const [a, b] = p.clientId < q.clientId ? [p, q] : [q, p];
    out.push({ tier: 'name', a: a.clientId, b: b.clientId, evidence: evidence(how, p, q) });
  }
  return out;
}

function fastPairs(rows: Row[]): DuplicatePair[] {
  const finder = new DuplicatePeopleFinder();
  for (const row of rows) finder.add(row);
  const pairs = finder.inRoster();
  expect(finder.partialBlocks).toEqual([]);
  return pairs;
}

const byIds = (x: { a: string; b: string }, y: { a: string; b: string }) => (x.a + ' ' + x.b < y.a + ' ' + y.b ? -1 : 1);

describe('duplicate people: the blocked check equals every-pair comparison', () => {
  it.each([1, 2, 3, 4, 5, 6, 7, 8])('seed %i, 500 rows', (seed) => {
    const rows = roster(seed, 500);
    const expected = slowPairs(rows).sort(byIds);
    const actual = fastPairs(rows).map((pair) => ({ tier: pair.tier, a: pair.a.clientId, b: pair.b.clientId, evidence: pair.evidence, rows: [pair.a.provenance?.row, pair.b.provenance?.row] }));
    // Every tier occurs, so none is compared vacuously.

    expect(new Set(expected.map((pair) => pair.tier))).toEqual(new Set(['orcid', 'email', 'name']));
    expect(actual.map(({ tier, a, b }) => ({ tier, a, b })).sort(byIds)).toEqual(expected.map(({ tier, a, b }) => ({ tier, a, b })));
    const evidence = new Map(expected.map((pair) => [`${pair.a} ${pair.b}`, pair.evidence]));
    for (const pair of actual) expect(evidence.get(`${pair.a} ${pair.b}`)).toContain(pair.evidence);
    // The row of each side is its client_id's last row.
    const lastRow = new Map(rows.map((row) => [row.clientId, row.provenance.row]));
    for (const pair of actual) expect(pair.rows).toEqual([lastRow.get(pair.a), lastRow.get(pair.b)]);
  });
});
