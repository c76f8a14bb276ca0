/**
 * Manuscript upload (docs/service-contract.md, call 6) against the emulator over real HTTP, through the typed client.
 * Expectations are derived from the fixture, never hard-coded.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FormData, request } from 'undici';
import { ENDPOINTS } from '../../src/client/endpoints.js';
import { ForbiddenError, type Candidate, type UploadResponse } from '../../src/client/index.js';
import type { Fixture } from '../../src/emulator/fixture.js';
import type { RunningEmulator } from '../../src/emulator/server.js';
import { MANUSCRIPT_LINES } from '../fixtures/manuscripts/generate.js';
import { API_KEY, CARDIOLOGY, clientFor, defaultFixture, emulatorWith, fixtureFile, manuscript, NOW, ONCOLOGY } from './helpers.js';

const fixture: Fixture = defaultFixture();
const authorById = new Map(fixture.authors.map((a) => [a.id, a]));
const articlesOf = (id: number) => fixture.articles.filter((a) => a.author_ids.includes(id));
const academicAge = (id: number) => new Date(NOW).getUTCFullYear() - Math.min(...articlesOf(id).map((a) => a.year));

/** Database authors linked (by ORCID or email) to records of a fixture group. */
function groupMembers(groupId: number): Map<number, string> {
  const group = fixture.orgs[0]!.groups.find((g) => g.id === groupId)!;
  const members = new Map<number, string>();
  for (const [clientId, record] of Object.entries(group.records)) {
    const emails = (record.emails as string[] | null) ?? [];
    const orcids = (record.orcids as string[] | null) ?? [];
    const author = fixture.authors.find((a) => (a.orcid && orcids.includes(a.orcid)) || a.emails.some((e) => emails.includes(e)));
    if (author) members.set(author.id, clientId);
  }
  return members;
}

const ids = (candidates: Candidate[] | null) => (candidates ?? []).map((c) => c.author_id);

async function rawUpload(emulator: RunningEmulator, fields: Record<string, string>, file?: { name: string; data: Buffer }) {
  const form = new FormData();
  for (const [key, value] of Object.entries(fields)) form.append(key, value);
  if (file) form.append('source_file', new Blob([file.data]), file.name);
  const response = await request(`${emulator.url}${ENDPOINTS.uploadManuscript.route}`, { method: 'POST', body: form, headers: { 'x-apikey': API_KEY } });
  return { status: response.statusCode, body: (await response.body.json()) as UploadResponse & { error?: { message: string } } };
}
const baseFields = { api_key: API_KEY, folder: 'NEURO', origin_id: 'RAW-1', authors_count: '0', ...CARDIOLOGY };

describe('manuscript upload against the default emulator', () => {
  let emulator: RunningEmulator;
  beforeAll(async () => {
    emulator = await emulatorWith();
  });
  afterAll(() => emulator.close());

  it.each([
    ['manuscript.pdf', 'FlateDecode PDF'],
    ['manuscript-plain.pdf', 'uncompressed PDF'],
    ['manuscript.docx', 'DOCX'],
  ])('parses %s (%s) and reports it honestly in debug_info', async (name) => {
    const client = clientFor(emulator);
    const result = await client.uploadManuscript(manuscript({ ...ONCOLOGY, sourceFile: { filename: name, data: fixtureFile(name) } }));
    expect(result.version).toBe(7);
    const text = MANUSCRIPT_LINES.join('\n');
    const referenceCount = MANUSCRIPT_LINES.length - MANUSCRIPT_LINES.indexOf('References') - 1;
    expect(result.debug_info).toMatchObject({
      source_file: name,
      parsed_text_len: text.length,
      parsed_references: referenceCount,
      // parsed_data (default): the author found in the file's header counts.
      authors_info: { authors_count: 1, emails_count: 1, orcids_count: 0 },
    });
    expect(result.debug_info.extracted_concepts).toBeGreaterThan(0);
  });

  it('without a file reports no parsed text and counts the form authors', async () => {
    const result = await clientFor(emulator).uploadManuscript(
      manuscript({ authors: [{ name: 'A B', email: 'a@b.example' }, { name: 'C D', orcid: '0000-0001-2345-6789' }] }),
    );
    expect(result.debug_info).toMatchObject({
      source_file: null,
      parsed_text_len: 0,
      parsed_references: 0,
      authors_info: { authors_count: 2, emails_count: 1, orcids_count: 1 },
    });
  });

  it('ranks candidates deterministically by relevance, with up to 5 of their own relevant articles', async () => {
    const client = clientFor(emulator);
    const first = await client.uploadManuscript(manuscript({ originId: 'DET-1' }));
    const again = await client.uploadManuscript(manuscript({ originId: 'DET-1' }));
    expect(again.candidates).toEqual(first.candidates);
    const candidates = first.candidates!;
    expect(candidates.length).toBeGreaterThan(5);
    const scores = candidates.map((c) => c.score);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
    for (const candidate of candidates) {
      expect(candidate.relevant_articles!.length).toBeGreaterThan(0);
      expect(candidate.relevant_articles!.length).toBeLessThanOrEqual(5);
      const own = new Set(articlesOf(candidate.author_id).map((a) => a.id));
      for (const article of candidate.relevant_articles!) expect(own.has(article.id)).toBe(true);
      expect(candidate.url).toContain(`/authors/${candidate.author_id}/`);
      expect(candidate).toMatchObject({ marked: false, marked_by: null });
      const author = authorById.get(candidate.author_id)!;
      expect(candidate).toMatchObject({ hIndex: author.h_index, citationsCount: author.citations, articlesCount: articlesOf(author.id).length });
    }
    // A cardiology manuscript puts a cardiologist first; an oncology one an oncologist.
    const topConcepts = (c: Candidate) => articlesOf(c.author_id).flatMap((a) => a.concepts);
    expect(topConcepts(candidates[0]!)).toContain('cardiology');
    const onco = await client.uploadManuscript(manuscript({ ...ONCOLOGY }));
    expect(topConcepts(onco.candidates![0]!)).toContain('oncology');
    expect(candidates[0]!.relevant_concepts.length).toBeGreaterThan(0);
  });

  it('updates a manuscript with the same origin_id and moves it to another (new) folder', async () => {
    const client = clientFor(emulator);
    const created = await client.uploadManuscript(manuscript({ originId: 'MOVE-1', folder: 'NEURO' }));
    expect(created.authors_groups_settings).toBeNull();
    const moved = await client.uploadManuscript(manuscript({ originId: 'MOVE-1', folder: 'JCARD' }));
    expect(moved.manuscript_id).toBe(created.manuscript_id);
    expect(moved.authors_groups_settings?.effect).toBe('highlight');
    const fresh = await client.uploadManuscript(manuscript({ originId: 'MOVE-1', folder: 'BRAND-NEW-PANEL' }));
    expect(fresh.manuscript_id).toBe(created.manuscript_id);
    const state = (await (await request(`${emulator.url}/_emulator/state`)).body.json()) as {
      orgs: { folders: { name: string }[] }[];
    };
    expect(state.orgs[0]!.folders.map((f) => f.name)).toContain('BRAND-NEW-PANEL');
    const other = await client.uploadManuscript(manuscript({ originId: 'MOVE-2' }));
    expect(other.manuscript_id).not.toBe(created.manuscript_id);
  });

  it.each(['true', 'false', '0', 'no'])('exclude_candidates=%j gives candidates: null', async (value) => {
    const { status, body } = await rawUpload(emulator, { ...baseFields, exclude_candidates: value });
    expect(status).toBe(200);
    expect(body.candidates).toBeNull();
  });

  it('an empty exclude_candidates value still computes candidates', async () => {
    const { status, body } = await rawUpload(emulator, { ...baseFields, exclude_candidates: '' });
    expect(status).toBe(200);
    expect(body.candidates!.length).toBeGreaterThan(0);
  });

  describe('filters', () => {
    let all: Candidate[];
    beforeAll(async () => {
      all = (await clientFor(emulator).uploadManuscript(manuscript({ originId: 'FILTER-ALL' }))).candidates!;
    });
    const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
    it.each([
      ['minHIndex', (c: Candidate) => c.hIndex, 'min'],
      ['maxHIndex', (c: Candidate) => c.hIndex, 'max'],
      ['minAcademicAge', (c: Candidate) => academicAge(c.author_id), 'min'],
      ['maxAcademicAge', (c: Candidate) => academicAge(c.author_id), 'max'],
      ['minArticlesCount', (c: Candidate) => c.articlesCount, 'min'],
      ['maxArticlesCount', (c: Candidate) => c.articlesCount, 'max'],
    ] as const)('%s keeps exactly the candidates within the bound', async (filter, metric, kind) => {
      const bound = median(all.map(metric));
      const result = await clientFor(emulator).uploadManuscript(manuscript({ originId: 'FILTER-ALL', filters: { [filter]: bound } }));
      const expected = all.filter((c) => (kind === 'min' ? metric(c) >= bound : metric(c) <= bound));
      expect(ids(result.candidates)).toEqual(ids(expected));
      expect(expected.length).toBeLessThan(all.length);
      expect(expected.length).toBeGreaterThan(0);
    });
    it('a non-integer filter is a 400 naming the field', async () => {
      const { status, body } = await rawUpload(emulator, { ...baseFields, min_h_index: 'ten' });
      expect(status).toBe(400);
      expect(body.error?.message).toContain('min_h_index');
    });
  });

  describe('conflict flags (v6)', () => {
    it('coauthor conflict: shares an article with a manuscript author (matched by ORCID)', async () => {
      const author = fixture.authors.find((a) => a.orcid && articlesOf(a.id).some((x) => x.author_ids.length > 2))!;
      const coauthors = new Set(articlesOf(author.id).flatMap((a) => a.author_ids));
      const result = await clientFor(emulator).uploadManuscript(
        manuscript({ authors: [{ name: 'Someone Else', orcid: author.orcid! }], title: articlesOf(author.id)[0]!.title, abstract: articlesOf(author.id)[0]!.abstract }),
      );
      expect(ids(result.candidates)).not.toContain(author.id);
      const flagged = result.candidates!.filter((c) => c.coauth_conflicts?.exists).map((c) => c.author_id);
      expect(flagged.length).toBeGreaterThan(0);
      for (const c of result.candidates!) expect(c.coauth_conflicts?.exists).toBe(coauthors.has(c.author_id));
    });

    it('affiliation conflict: a manuscript author shares the institution', async () => {
      const client = clientFor(emulator);
      const plain = await client.uploadManuscript(manuscript({ originId: 'AFF-1' }));
      const institution = plain.candidates![1]!.affiliation!.split(',')[0]!;
      const result = await client.uploadManuscript(manuscript({ originId: 'AFF-1', authors: [{ name: 'Nobody Known', affiliation: `${institution}, Another City` }] }));
      let flagged = 0;
      for (const c of result.candidates!) {
        const expected = authorById.get(c.author_id)!.affiliations.some((aff) => aff.startsWith(institution));
        expect(c.aff_conflicts?.exists).toBe(expected);
        if (expected) flagged++;
      }
      expect(flagged).toBeGreaterThan(0);
    });

    it('retracted articles: exactly the candidates with a retracted article', async () => {
      const result = await clientFor(emulator).uploadManuscript(manuscript({ originId: 'FILTER-ALL' }));
      const withRetraction = new Set(fixture.articles.filter((a) => a.retracted).flatMap((a) => a.author_ids));
      expect(result.candidates!.some((c) => withRetraction.has(c.author_id))).toBe(true);
      for (const c of result.candidates!) expect(c.retracted_articles?.exists).toBe(withRetraction.has(c.author_id));
    });

    it('referenced articles: authors of an article cited in the parsed References', async () => {
      const cited = fixture.articles.filter((a) => MANUSCRIPT_LINES.some((line) => line.includes(a.title)));
      expect(cited.length).toBeGreaterThan(0);
      const citedAuthors = new Set(cited.flatMap((a) => a.author_ids));
      const result = await clientFor(emulator).uploadManuscript(
        manuscript({ ...ONCOLOGY, sourceFile: { filename: 'm.pdf', data: fixtureFile('manuscript.pdf') } }),
      );
      expect(result.candidates!.some((c) => citedAuthors.has(c.author_id))).toBe(true);
      for (const c of result.candidates!) expect(c.referenced_articles?.exists).toBe(citedAuthors.has(c.author_id));
    });

    it('external COI: records whose "Conflict of interest" is Yes flag their linked author, also after an API write', async () => {
      const org = fixture.orgs[0]!;
      const field = org.external_coi_field!;
      const yes = org.custom_fields.author_from_group.find((f) => f.api_id === field)!.options!.find((o) => o.option === 'Yes')!.api_id;
      const flaggedInFixture = new Set<number>();
      for (const group of org.groups) {
        for (const [clientId, record] of Object.entries(group.records)) {
          if (record[field] === yes) flaggedInFixture.add(Number(clientId.split('-')[1]));
        }
      }
      expect(flaggedInFixture.size).toBeGreaterThan(0);
      const client = clientFor(emulator);
      // A cardiology author not yet flagged, flagged now through the API (docs/service-contract.md, call 2).
      const before = await client.uploadManuscript(manuscript({ originId: 'COI-1' }));
      const target = before.candidates!.find((c) => !flaggedInFixture.has(c.author_id) && c.email)!;
      await client.putAuthor(501, 'coi-test', { name: target.name, emails: [target.email!], [field]: yes });
      const after = await client.uploadManuscript(manuscript({ originId: 'COI-1' }));
      for (const c of after.candidates!) {
        expect(c.external_coi?.exists).toBe(flaggedInFixture.has(c.author_id) || c.author_id === target.author_id);
      }
      await client.deleteAuthor(501, 'coi-test');
    });
  });

  describe('folder Referee Finder settings', () => {
    it('highlight (JCARD): every candidate stays; group members carry group_id and client_id', async () => {
      const members = groupMembers(502);
      const client = clientFor(emulator);
      const plain = await client.uploadManuscript(manuscript({ originId: 'G-PLAIN', folder: 'NEURO' }));
      const result = await client.uploadManuscript(manuscript({ originId: 'G-HL', folder: 'JCARD' }));
      expect(result.authors_groups_settings).toEqual({ authors_groups: [{ id: 502, name: 'Cardiology reviewers', label: null }], effect: 'highlight' });
      expect(ids(result.candidates)).toEqual(ids(plain.candidates));
      expect(result.candidates!.some((c) => members.has(c.author_id))).toBe(true);
      for (const c of result.candidates!) {
        expect(c.authors_groups).toEqual(members.has(c.author_id) ? [{ group_id: 502, client_id: members.get(c.author_id) }] : []);
      }
      for (const c of plain.candidates!) expect(c.authors_groups).toEqual([]);
    });

    it('limit_to (ONCO-PANEL): only group members are candidates', async () => {
      const members = groupMembers(501);
      const result = await clientFor(emulator).uploadManuscript(manuscript({ ...ONCOLOGY, folder: 'ONCO-PANEL' }));
      expect(result.authors_groups_settings?.effect).toBe('limit_to');
      expect(result.candidates!.length).toBeGreaterThan(0);
      for (const c of result.candidates!) {
        expect(members.has(c.author_id)).toBe(true);
        expect(c.authors_groups).toEqual([{ group_id: 501, client_id: members.get(c.author_id) }]);
      }
    });

    it('boost (METHODS): members score boost_multiplier times more, others unchanged', async () => {
      const members = groupMembers(503);
      const methods = { title: 'Bayesian hierarchical models and causal inference with deep learning', abstract: 'Survival analysis, missing data and transformers.' };
      const client = clientFor(emulator);
      const plain = await client.uploadManuscript(manuscript({ ...methods, folder: 'NEURO' }));
      const boosted = await client.uploadManuscript(manuscript({ ...methods, folder: 'METHODS' }));
      expect(boosted.authors_groups_settings).toMatchObject({ effect: 'boost', boost_multiplier: 2 });
      const plainScore = new Map(plain.candidates!.map((c) => [c.author_id, c.score]));
      let boostedMembers = 0;
      for (const c of boosted.candidates!) {
        const base = plainScore.get(c.author_id)!;
        if (members.has(c.author_id)) {
          boostedMembers++;
          expect(c.score).toBeCloseTo(base * 2, 3);
        } else expect(c.score).toBe(base);
      }
      expect(boostedMembers).toBeGreaterThan(0);
    });
  });

  describe('request checks', () => {
    it('a missing required field is a 400 naming it', async () => {
      const { title: _title, ...withoutTitle } = baseFields;
      const { status, body } = await rawUpload(emulator, withoutTitle);
      expect(status).toBe(400);
      expect(body.error?.message).toContain('title');
    });
    it.each([
      ['missing', undefined],
      ['of another organization', 'other-org-key-999'],
    ])('an api_key form field %s is a 401', async (_label, key) => {
      const { api_key: _key, ...rest } = baseFields;
      const { status } = await rawUpload(emulator, key === undefined ? rest : { ...rest, api_key: key });
      expect(status).toBe(401);
    });
    it('a source_file that is neither PDF nor DOCX is a 400', async () => {
      const { status, body } = await rawUpload(emulator, baseFields, { name: 'x.txt', data: Buffer.from('plain text') });
      expect(status).toBe(400);
      expect(body.error?.message).toContain('x.txt');
    });
    it('a malformed multipart body is a 400', async () => {
      const response = await request(`${emulator.url}${ENDPOINTS.uploadManuscript.route}`, {
        method: 'POST',
        headers: { 'x-apikey': API_KEY, 'content-type': 'multipart/form-data; boundary=xyz' },
        body: '--xyz\r\nno headers end',
      });
      expect(response.statusCode).toBe(400);
      await response.body.dump();
    });
  });
});

describe('org settings', () => {
  it('include_candidates_with_conflicts=false drops candidates with any conflict flag', async () => {
    const withConflicts = await emulatorWith();
    const without = await emulatorWith((org) => (org.settings.include_candidates_with_conflicts = false));
    try {
      const input = manuscript({ authors: [{ name: 'X', affiliation: 'University of Oxford, Oxford' }] });
      const all = (await clientFor(withConflicts).uploadManuscript(input)).candidates!;
      const kept = (await clientFor(without).uploadManuscript(input)).candidates!;
      const conflicted = (c: Candidate) =>
        [c.coauth_conflicts, c.aff_conflicts, c.retracted_articles, c.referenced_articles, c.external_coi].some((f) => f?.exists);
      expect(all.some(conflicted)).toBe(true);
      expect(ids(kept)).toEqual(ids(all.filter((c) => !conflicted(c))));
    } finally {
      await withConflicts.close();
      await without.close();
    }
  });

  it('include_candidates_without_email=false drops candidates without an email', async () => {
    const withAll = await emulatorWith();
    const onlyEmail = await emulatorWith((org) => (org.settings.include_candidates_without_email = false));
    try {
      const input = manuscript();
      const all = (await clientFor(withAll).uploadManuscript(input)).candidates!;
      const kept = (await clientFor(onlyEmail).uploadManuscript(input)).candidates!;
      expect(all.some((c) => c.email === null)).toBe(true);
      expect(ids(kept)).toEqual(ids(all.filter((c) => c.email !== null)));
    } finally {
      await withAll.close();
      await onlyEmail.close();
    }
  });

  it.each([
    ['parsed_data', 'oncology', 1],
    ['metadata', 'cardiology', 2],
  ] as const)('prioritize=%s: the %s side dominates and its authors count', async (prioritize, topic, authorsCount) => {
    const emulator = await emulatorWith((org) => (org.settings.prioritize = prioritize));
    try {
      // Form metadata about cardiology with two form authors; the file is about oncology with one author.
      const result = await clientFor(emulator).uploadManuscript(
        manuscript({
          ...CARDIOLOGY,
          authors: [{ name: 'Form One', email: 'one@form.example' }, { name: 'Form Two' }],
          sourceFile: { filename: 'm.docx', data: fixtureFile('manuscript.docx') },
        }),
      );
      const top = result.candidates!.slice(0, 3);
      for (const c of top) expect(articlesOf(c.author_id).flatMap((a) => a.concepts)).toContain(topic);
      expect(result.debug_info.authors_info.authors_count).toBe(authorsCount);
    } finally {
      await emulator.close();
    }
  });
});

describe('plan features', () => {
  it('without Referee finder the upload is refused with 403 unless candidates are excluded', async () => {
    const emulator = await emulatorWith((org) => (org.plan_features.referee_finder = false));
    try {
      const client = clientFor(emulator);
      await expect(client.uploadManuscript(manuscript())).rejects.toBeInstanceOf(ForbiddenError);
      const excluded = await client.uploadManuscript(manuscript({ excludeCandidates: true }));
      expect(excluded.candidates).toBeNull();
    } finally {
      await emulator.close();
    }
  });
});
