/**
 * Journal recommendation (docs/service-contract.md, call 7): the same TF-IDF relevance as candidates, aggregated per
 * journal over its articles. A journal's score is the sum of the similarities of its 10 best
 * matching articles; journals with no matching article are not recommended.
 */
import type { RecommendedJournal } from '../../client/schemas.js';
import { roundScore } from './ranking.js';
import type { ScholarDb } from './scholar-db.js';
import type { WeightedText } from './ranking.js';

export interface JournalContext {
  db: ScholarDb;
  query: readonly WeightedText[];
  /** Restrict to these journal ids (`journals_corpus=org_journals`); null = all journals. */
  onlyJournalIds: ReadonlySet<number> | null;
  /** The org's folder linked to a journal, if any. */
  folderOf(journalId: number): { id: number; name: string } | null;
}

export function recommendJournals(ctx: JournalContext): RecommendedJournal[] {
  const matches = ctx.db.index.match(ctx.db.index.queryVector(ctx.query));
  const out: RecommendedJournal[] = [];
  for (const journal of ctx.db.journals) {
    if (ctx.onlyJournalIds && !ctx.onlyJournalIds.has(journal.id)) continue;
    const best = matches.filter((m) => m.article.journal_id === journal.id).slice(0, 10);
    if (best.length === 0) continue;
    const folder = ctx.folderOf(journal.id);
    out.push({
      id: journal.id,
      title: journal.title,
      score: roundScore(best.reduce((sum, m) => sum + m.similarity, 0)),
      publisher_name: journal.publisher_name,
      folder_id: folder?.id ?? null,
      folder_name: folder?.name ?? null,
      relevant_articles: best.map((m) => ({ id: m.article.id, title: m.article.title, year: m.article.year })),
    });
  }
  return out.sort((a, b) => b.score - a.score || a.id - b.id);
}
