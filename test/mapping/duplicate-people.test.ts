/**
 * The same person under two client_ids (src/mapping/duplicate-people.ts): each tier, the
 * normalisation of names, blocking (far names are never compared), blocks past their cap (compared
 * in part, and said so) and the row cap.
 */
import { describe, expect, it } from 'vitest';
import { BLOCK_ALL_PAIRS, DuplicatePeopleFinder, KEY_ALL_PAIRS, describePartialBlocks, nameSimilarity, normaliseName, PairList } from '../../src/mapping/duplicate-people.js';
import { duplicatePeopleNotes } from '../../src/report/run-notes.js';
import { seededRandom } from '../../src/runtime/seeded-random.js';

const record = (clientId: string, fields: Record<string, string | string[] | null>, row = 2) => ({ clientId, fields, provenance: { file: 'r.csv', row } });

describe('DuplicatePeopleFinder', () => {
  it.each([
    ['orcid', { orcids: ['0000-0002-1825-0097'], name: 'Ann Lee' }, { orcids: ['0000-0002-1825-0097'], name: 'Someone Else' }, 'same ORCID iD 0000-0002-1825-0097'],
    ['email', { emails: ['a@x.org', 'ann@uni.edu'], name: 'Ann Lee' }, { emails: ['ANN@uni.edu'], name: 'Other' }, 'same email ann@uni.edu'],
    ['name', { name: 'Zoë Müller-Smith', affiliations: ['Univ. of Oslo'] }, { name: 'Muller Smith, Zoe', affiliations: ['UNIV OF OSLO'] }, 'the same name'],
    ['name', { name: 'Jonathan Pemberton', affiliations: ['Univ of Oslo'] }, { name: 'Jonathon Pemberton', affiliations: ['Univ of Oslo'] }, 'very similar names'],
  ] satisfies Array<[string, Record<string, string | string[]>, Record<string, string | string[]>, string]>)('tier %s', (tier, a, b, evidence) => {
    const finder = new DuplicatePeopleFinder();
    finder.add(record('p1', a, 2));
    finder.add(record('p2', b, 3));
    finder.add(record('p3', { name: 'Unrelated Person', emails: ['u@x.org'], affiliations: ['Univ of Oslo'] }, 4));
    const pairs = finder.inRoster();
    expect(pairs).toHaveLength(1);
    expect(pairs[0]).toMatchObject({ tier, a: { clientId: 'p1', provenance: { row: 2 } }, b: { clientId: 'p2', provenance: { row: 3 } } });
    expect(pairs[0]!.evidence).toContain(evidence);
  });

  it('names the strongest tier once per pair, and never pairs a client_id with itself', () => {
    const finder = new DuplicatePeopleFinder();
    finder.add(record('p1', { name: 'Ann Lee', emails: ['ann@x.org'], orcids: ['0000-0002-1825-0097'], affiliations: ['X'] }));
    finder.add(record('p2', { name: 'Ann Lee', emails: ['ann@x.org'], orcids: ['0000-0002-1825-0097'], affiliations: ['X'] }));
    finder.add(record('p2', { name: 'Ann Lee', emails: ['ann@x.org'], orcids: ['0000-0002-1825-0097'], affiliations: ['X'] }, 9));
    expect(finder.inRoster().map((pair) => [pair.tier, pair.a.clientId, pair.b.clientId])).toEqual([['orcid', 'p1', 'p2']]);
  });

  it('the same name at another affiliation, or a different name, is not a pair', () => {
    const finder = new DuplicatePeopleFinder();
    finder.add(record('p1', { name: 'Ann Lee', affiliations: ['Oslo'] }));
    finder.add(record('p2', { name: 'Ann Lee', affiliations: ['Bergen'] }));
    finder.add(record('p3', { name: 'Anna Leeds-Brown', affiliations: ['Oslo'] }));
    expect(finder.inRoster()).toEqual([]);
  });

  it('against the inventory: a new client_id with an owned record’s ORCID or email', () => {
    const finder = new DuplicatePeopleFinder();
    finder.add(record('new-1', { name: 'Ann Lee', emails: ['ann@x.org'] }));
    finder.add(record('old-1', { name: 'Ann Lee', emails: ['ann@x.org'] }));
    const owned: Array<[string, Record<string, string[] | string>]> = [['old-1', { emails: ['ann@x.org'] }], ['old-2', { orcids: ['0000-0002-1825-0097'], emails: [] }]];
    finder.add(record('new-2', { name: 'B', orcids: ['0000-0002-1825-0097'] }));
    const newIds = new Set(['new-1', 'new-2']);
    const pairs = finder.find({ newIds, owned, accept: (a, b) => newIds.has(a) !== newIds.has(b) }).pairs();
    // old-1 is in the roster too: the pair is found among the roster's rows, and given once.
    expect(pairs.map((pair) => [pair.tier, pair.a.clientId, pair.b.clientId, pair.b.owned])).toEqual([
      ['orcid', 'new-2', 'old-2', true],
      ['email', 'new-1', 'old-1', undefined],
    ]);
  });

  it('a placeholder email on more rows than KEY_ALL_PAIRS: each row paired with the first, and the run told', () => {
    const finder = new DuplicatePeopleFinder();
    const rows = KEY_ALL_PAIRS + 10;
    for (let i = 0; i < rows; i++) finder.add(record(`p${String(i).padStart(3, '0')}`, { emails: ['none@example.org'] }, i + 2));
    const pairs = finder.inRoster();
    // Linear, not rows * (rows - 1) / 2; every row still in a pair (so `reject` holds each back).
    expect(pairs.map((pair) => [pair.a.clientId, pair.b.clientId])).toEqual(Array.from({ length: rows - 1 }, (_, i) => ['p000', `p${String(i + 1).padStart(3, '0')}`]));
    expect(finder.partialBlocks).toEqual([{ tier: 'email', size: rows, first: { clientId: 'p000', provenance: { file: 'r.csv', row: 2 } } }]);
    const note = describePartialBlocks(finder.partialBlocks)!;
    expect(note).toContain(`${rows} rows sharing one email, the first at r.csv row 2 (each paired with that first row only)`);
    // Notes are printed: the email itself is not repeated there.
    expect(note).not.toContain('none@example.org');
  });

  it('a name block past BLOCK_ALL_PAIRS is compared with sorted neighbours, still finds a typo, and the run is told', () => {
    const finder = new DuplicatePeopleFinder();
    const random = seededRandom(3);
    const given = () => Array.from({ length: 8 }, () => String.fromCharCode(97 + Math.floor(random() * 26))).join('');
    // One family name (the longest word of each name) at one institute, on more rows than the cap.
    for (let i = 0; i < BLOCK_ALL_PAIRS + 20; i++) finder.add(record(`p${i}`, { name: `${given()} Zhangsurname`, affiliations: ['Big Institute'] }, i + 2));
    finder.add(record('typo-a', { name: 'Mqwertyu Zhangsurname', affiliations: ['Big Institute'] }, 900));
    finder.add(record('typo-b', { name: 'Mqwertyi Zhangsurname', affiliations: ['Big Institute'] }, 901));
    const pairs = finder.inRoster();
    expect(pairs.find((pair) => pair.a.clientId === 'typo-a' && pair.b.clientId === 'typo-b')?.evidence).toContain('very similar names');
    expect(finder.partialBlocks).toEqual([{ tier: 'name', size: BLOCK_ALL_PAIRS + 22, affiliation: 'big institute', part: 'zhangsurname', first: { clientId: 'p0', provenance: { file: 'r.csv', row: 2 } } }]);
    expect(describePartialBlocks(finder.partialBlocks)).toContain(`${BLOCK_ALL_PAIRS + 22} rows at "big institute" sharing the name part "zhangsurname" (each compared with its 25 nearest names in sorted order only`);
  });

  it('blocks within their caps are compared in full, and nothing is reported', () => {
    const finder = new DuplicatePeopleFinder();
    for (let i = 0; i < KEY_ALL_PAIRS; i++) finder.add(record(`p${i}`, { emails: ['none@example.org'], name: `Given${i} Zhangsurname`, affiliations: ['Big Institute'] }));
    expect(finder.inRoster()).toHaveLength((KEY_ALL_PAIRS * (KEY_ALL_PAIRS - 1)) / 2);
    expect(finder.partialBlocks).toEqual([]);
    expect(describePartialBlocks(finder.partialBlocks)).toBeUndefined();
  });

  it('skips the check past its row cap', () => {
    const finder = new DuplicatePeopleFinder(2);
    for (const id of ['p1', 'p2', 'p3']) finder.add(record(id, { emails: ['same@x.org'] }));
    expect(finder.overflowed).toBe(true);
    expect(finder.inRoster()).toEqual([]);
  });

  it('keeps checking past 250,000 rows: a million-row first run is checked', () => {
    const finder = new DuplicatePeopleFinder();
    for (let i = 0; i < 260_000; i++) finder.add({ clientId: `r${i}`, fields: { emails: [`p${i}@x.org`] } });
    finder.add(record('late', { emails: ['P7@x.org'] }));
    expect(finder.overflowed).toBe(false);
    expect(finder.inRoster().map((pair) => [pair.tier, pair.a.clientId, pair.b.clientId])).toEqual([['email', 'late', 'r7']]);
  });

  it('normalises names: accents, case, punctuation, word order', () => {
    expect(normaliseName('Müller-Smith, Zoë')).toBe('muller smith zoe');
    expect(nameSimilarity('jonathan pemberton', 'jonathon pemberton')).toBeGreaterThan(0.9);
    expect(nameSimilarity('ann lee', 'bob lee')).toBeLessThan(0.85);
  });

  const at = (affiliation: string, name: string, extra: Record<string, string[]> = {}) => ({ name, affiliations: [affiliation], ...extra });
  it.each([
    ['two different ORCID iDs: two people, however alike the names', [at('X', 'Ann Lee', { orcids: ['0000-0002-1825-0097'] }), at('X', 'Ann Lee', { orcids: ['0000-0001-5109-3700'] })], []],
    ['a shared mailbox with two ORCID iDs: two people', [{ name: 'A', emails: ['lab@x.org'], orcids: ['0000-0002-1825-0097'] }, { name: 'B', emails: ['lab@x.org'], orcids: ['0000-0001-5109-3700'] }], []],
    ['a rare name, a new address elsewhere: one person', [at('X', 'Zhongying Ning', { emails: ['zn@x.edu'] }), at('X', 'Zhongying Ning', { emails: ['zn@gmail.com'] })], ['name p1 p2 the same name']],
    ['a typo with two addresses at one domain: two people', [at('X', 'Jonathan Pemberton', { emails: ['jp@x.edu'] }), at('X', 'Jonathon Pemberton', { emails: ['jpem@x.edu'] })], []],
    ['the same name on three rows at the affiliation: which two?', [at('X', 'Ann Lee'), at('X', 'Ann Lee'), at('X', 'Ann Lee')], []],
    ['an initial that one full name fits', [at('X', 'J. Pemberton'), at('X', 'Pemberton, Jonathan'), at('X', 'Ann Lee')], ['name p1 p2 the same initials']],
    ['an initial that two full names fit: which one?', [at('X', 'J. Pemberton'), at('X', 'Jonathan Pemberton'), at('X', 'Jane Pemberton')], []],
    ['a typo as near two names: which one?', [at('X', 'Lei Lii'), at('X', 'Lei Liu'), at('X', 'Lei Lin')], []],
    ['a typo that makes another word the longest', [at('X', 'Woodterley Ramberley'), at('X', 'Woodterey Ramberley')], ['name p1 p2 very similar names (95 %)']],
    ['an initial two full names fit, and an email that spells one', [at('X', 'J. Pemberton', { emails: ['jonathanpemberton7@mail.org'] }), at('X', 'Jonathan Pemberton'), at('X', 'Jane Pemberton')], ['name p1 p2 the same initials']],
    ['an initial whose email spells another given name', [at('X', 'Pemberton, J.', { emails: ['jake.pemberton@mail.org'] }), at('X', 'Jonathan Pemberton')], []],
    ['a numbered address at one domain: two namesakes, however rare the name', [at('X', 'Zhongying Ning', { emails: ['zhongying.ning@x.edu'] }), at('X', 'Zhongying Ning', { emails: ['zhongying.ning2@x.edu'] })], []],
    [
      'a short name one letter apart (80 %): a typo when an email spells the other name, else two people',
      [at('X', 'Bo Yu', { emails: ['yubo@x.edu'] }), at('X', 'Bo Ys', { emails: ['boyu88@mail.org'] }), at('Y', 'Bo Yu'), at('Y', 'Bo Ys', { emails: ['bo.ys@mail.org'] })],
      ['name p1 p2 very similar names (80 %)'],
    ],
    ['a typo as near two names, and an email that spells one', [at('X', 'Jinho Ahn'), at('X', 'Jin Ahn'), at('X', 'Jino Ahn', { emails: ['jinhoahn@mail.org'] })], ['name p1 p3 very similar names (89 %)']],
    ['an initial for a three-word name that one full name fits', [at('X', 'De Luca, R.'), at('X', 'Rigisano De Luca'), at('X', 'Ann Lee')], ['name p1 p2 the same initials']],
    [
      'one initial for a hyphenated given name: the same person when the email spells the full name, else not said',
      [at('X', 'S. Cha', { emails: ['seojuncha@mail.org'] }), at('X', 'Seo-jun Cha'), at('Y', 'S. Cha'), at('Y', 'Seo-jun Cha')],
      ['name p1 p2 the same initials'],
    ],
  ] satisfies Array<[string, Array<Record<string, string | string[]>>, string[]]>)('evidence: %s', (_, rows, expected) => {
    const finder = new DuplicatePeopleFinder();
    rows.forEach((fields, i) => finder.add(record(`p${i + 1}`, fields, i + 2)));
    expect(finder.inRoster().map((pair) => `${pair.tier} ${pair.a.clientId} ${pair.b.clientId} ${pair.evidence.split(',')[0]}`)).toEqual(expected);
  });

  it('keeps the strongest pairs up to its limit, counts every one, and the note says how many were left out', () => {
    const list = new PairList(2);
    const pair = (tier: 'orcid' | 'email' | 'name', a: string, strength = 1) => ({ tier, a: { clientId: a }, b: { clientId: `${a}'` }, evidence: '', strength });
    for (const p of [pair('name', 'n1', 0.9), pair('name', 'n2', 1), pair('email', 'e1'), pair('name', 'n3', 0.86), pair('orcid', 'o1'), pair('name', 'n4', 0.95)]) list.add(p);
    expect(list.pairs().map((p) => p.a.clientId)).toEqual(['o1', 'e1']);
    expect(list.found).toEqual({ orcid: 1, email: 1, name: 4 });
    const notes = duplicatePeopleNotes({ found: { found: list.found, listed: 2, leftOut: 4 }, policy: 'warn', pendingRenames: new Map(), partialBlocks: [] });
    expect(notes).toEqual(['6 pairs of client_ids are probably the same person (1 by ORCID iD, 1 by email, 4 by name and affiliation; policy.duplicate_people: warn): the report lists the strongest 2 with the evidence and leaves out 4.']);
  });
});

describe('the note when the check is skipped', () => {
  it('names the bound the roster passed', () => {
    const finder = new DuplicatePeopleFinder(2);
    for (const id of ['p1', 'p2', 'p3']) finder.add(record(id, { emails: ['same@x.org'] }));
    const notes = duplicatePeopleNotes({ found: undefined, policy: 'warn', pendingRenames: new Map(), partialBlocks: [], ...(finder.overflowed ? { skippedPast: 16_000_000 } : {}) });
    expect(notes).toEqual([
      'The check for the same person under two client_ids was skipped: the roster has more than 16,000,000 rows, or as many ORCID iDs and emails, or more than 4 GiB of their text (the identities the check keeps are bounded); the rest of the run is not affected.',
    ]);
  });
});
