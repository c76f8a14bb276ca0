/** Recommend journals (docs/service-contract.md, call 7) against the emulator over HTTP. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ForbiddenError, NotFoundError } from '../../src/client/index.js';
import type { RunningEmulator } from '../../src/emulator/server.js';
import { CARDIOLOGY, clientFor, defaultFixture, emulatorWith, manuscript } from './helpers.js';

const fixture = defaultFixture();
const org = fixture.orgs[0]!;

describe('recommend journals', () => {
  let emulator: RunningEmulator;
  beforeAll(async () => {
    emulator = await emulatorWith();
    await clientFor(emulator).uploadManuscript(manuscript({ originId: 'J-1', ...CARDIOLOGY }));
  });
  afterAll(() => emulator.close());

  it('all_journals (default): ranked by relevance, up to 10 of the journal’s own articles, linked folders named', async () => {
    const { recommended_journals: journals } = await clientFor(emulator).recommendJournals('J-1');
    expect(journals.length).toBeGreaterThan(1);
    const scores = journals.map((j) => j.score);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
    for (const journal of journals) {
      expect(journal.relevant_articles.length).toBeGreaterThan(0);
      expect(journal.relevant_articles.length).toBeLessThanOrEqual(10);
      for (const article of journal.relevant_articles) {
        expect(fixture.articles.find((a) => a.id === article.id)?.journal_id).toBe(journal.id);
      }
      const folder = org.folders.find((f) => f.journal_id === journal.id);
      expect(journal.folder_name).toBe(folder?.name ?? null);
      expect(journal.folder_id === null).toBe(folder === undefined);
      expect(journal.publisher_name).toBe(fixture.journals.find((j) => j.id === journal.id)!.publisher_name);
    }
    // A cardiology manuscript: the top journal publishes cardiology articles.
    const topArticles = fixture.articles.filter((a) => a.journal_id === journals[0]!.id);
    expect(topArticles.some((a) => a.concepts.includes('cardiology'))).toBe(true);
  });

  it('org_journals: only the journals linked to the organization', async () => {
    const all = (await clientFor(emulator).recommendJournals('J-1', { corpus: 'all_journals' })).recommended_journals;
    const mine = (await clientFor(emulator).recommendJournals('J-1', { corpus: 'org_journals' })).recommended_journals;
    expect(mine.length).toBeGreaterThan(0);
    expect(mine.map((j) => j.id)).toEqual(all.filter((j) => org.journal_ids.includes(j.id)).map((j) => j.id));
  });

  it('answers 404 for an origin_id never uploaded', async () => {
    await expect(clientFor(emulator).recommendJournals('NEVER-UPLOADED')).rejects.toBeInstanceOf(NotFoundError);
  });
});

describe('recommend journals with other org setups', () => {
  it('org_journals with no linked journals is an empty list', async () => {
    const emulator = await emulatorWith((o) => (o.journal_ids = []));
    try {
      const client = clientFor(emulator);
      await client.uploadManuscript(manuscript({ originId: 'J-2' }));
      expect((await client.recommendJournals('J-2', { corpus: 'org_journals' })).recommended_journals).toEqual([]);
      expect((await client.recommendJournals('J-2')).recommended_journals.length).toBeGreaterThan(0);
    } finally {
      await emulator.close();
    }
  });

  it('without the Recommend journals feature: 403', async () => {
    const emulator = await emulatorWith((o) => (o.plan_features.recommend_journals = false));
    try {
      const client = clientFor(emulator);
      await client.uploadManuscript(manuscript({ originId: 'J-3' }));
      await expect(client.recommendJournals('J-3')).rejects.toBeInstanceOf(ForbiddenError);
    } finally {
      await emulator.close();
    }
  });
});
