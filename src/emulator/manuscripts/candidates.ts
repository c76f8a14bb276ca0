/**
 * Referee candidates for a stored manuscript (docs/service-contract.md, call 6, response version 7, and the referee
 * candidate). Pure: everything it needs comes in through `CandidateContext`.
 *
 * The pipeline, in order:
 * 1. Query vector from the manuscript (weights follow the org's "prioritize" setting, see
 *    `queryParts`), matched against every article (TF-IDF cosine, `ranking.ts`).
 * 2. Each author's score is the sum of the similarities of their 5 best-matching articles;
 *    authors with no matching article, and the manuscript's own authors, are not candidates.
 * 3. Folder Referee Finder settings: `boost` multiplies group members' scores by
 *    `boost_multiplier`; `limit_to` keeps only group members; every effect fills `authors_groups`.
 * 4. Filters (h-index, academic age, articles count), then the org settings: candidates with any
 *    conflict flag and candidates without an email are dropped when the org says so.
 * 5. Sorted by score (ties by author id), at most `MAX_CANDIDATES`.
 */
import type { Candidate, AuthorsGroupsSettings } from '../../client/schemas.js';
import type { FixtureAuthor, FixtureOrg } from '../fixture.js';
import { roundScore, type ArticleMatch, type WeightedText } from './ranking.js';
import { fullName, institutionOf, type ScholarDb } from './scholar-db.js';
import type { ManuscriptAuthor, MarkState, StoredManuscript } from './state.js';

/** The emulator returns at most this many candidates (the spec names no limit). */
export const MAX_CANDIDATES = 50;
export const RESPONSE_VERSION = 7;

export interface CandidateFilters {
  min_h_index?: number;
  max_h_index?: number;
  min_academic_age?: number;
  max_academic_age?: number;
  min_articles_count?: number;
  max_articles_count?: number;
}
export const FILTER_NAMES = [
  'min_h_index',
  'max_h_index',
  'min_academic_age',
  'max_academic_age',
  'min_articles_count',
  'max_articles_count',
] as const satisfies readonly (keyof CandidateFilters)[];

/** An authors group as the candidate logic sees it: records keyed by client_id. */
export interface GroupView {
  id: number;
  name: string;
  label: string | null;
  records: ReadonlyMap<string, Record<string, unknown>> | Iterable<[string, Record<string, unknown>]>;
}

export interface ResolvedRefereeFinder {
  groups: GroupView[];
  effect: 'highlight' | 'limit_to' | 'boost';
  boostMultiplier: number;
}

export interface CandidateContext {
  db: ScholarDb;
  /** The org's fixture entry (custom fields, `external_coi_field`). */
  org: FixtureOrg;
  /** The org's three settings (spec "Organization-wide settings"). */
  settings: FixtureOrg['settings'];
  manuscript: StoredManuscript;
  refereeFinder: ResolvedRefereeFinder | null;
  /** Every group of the org: external COI comes from any record the client flagged. */
  allGroups: GroupView[];
  filters: CandidateFilters;
  marks: ReadonlyMap<number, MarkState>;
  /** Current year from the emulator's clock (academic age). */
  year: number;
  /** Links to profile and article pages (`World.authorUrl` / `articleUrl`). */
  urls: { author(id: number): string; article(id: number): string };
}

export interface CandidateResult {
  /** null never happens here; exclude_candidates is handled by the route. */
  candidates: Candidate[];
  /** Every candidate after the boost but before limit_to, filters and org settings, for marking. */
  ranked: Map<number, Candidate>;
  authorsGroupsSettings: AuthorsGroupsSettings | null;
}

/**
 * Which text dominates the query (org setting "Prioritize parsed data or metadata"):
 * - `parsed_data`: the parsed file text weighs 3, the form's title and abstract 1 each;
 * - `metadata`: the form's title and abstract weigh 2 each, the parsed text 0.25.
 * Without a parsed text both reduce to title + abstract.
 */
export function queryParts(manuscript: StoredManuscript, prioritize: 'parsed_data' | 'metadata'): WeightedText[] {
  const parsed = prioritize === 'parsed_data';
  return [
    { text: manuscript.title, weight: parsed ? 1 : 2 },
    { text: manuscript.abstract, weight: parsed ? 1 : 2 },
    { text: manuscript.text, weight: parsed ? 3 : 0.25 },
  ];
}

/**
 * Whose author list counts for conflicts and `debug_info.authors_info`: with `parsed_data` the
 * authors found in the file (when any were found), with `metadata` the `authorK_*` form fields
 * (when any were sent); each falls back to the other list.
 */
export function effectiveAuthors(manuscript: StoredManuscript, prioritize: 'parsed_data' | 'metadata'): ManuscriptAuthor[] {
  const [first, second] =
    prioritize === 'parsed_data'
      ? [manuscript.parsedAuthors, manuscript.formAuthors]
      : [manuscript.formAuthors, manuscript.parsedAuthors];
  return first.length > 0 ? first : second;
}

export function computeCandidates(ctx: CandidateContext): CandidateResult {
  const { db, manuscript, settings } = ctx;
  const prioritize = settings.prioritize;
  const query = db.index.queryVector(queryParts(manuscript, prioritize));
  const matches = db.index.match(query);
  const queryConcepts = new Set(db.index.conceptsIn(queryParts(manuscript, prioritize).map((p) => p.text).join('\n')));

  const matchesByAuthor = new Map<number, ArticleMatch[]>();
  for (const match of matches) {
    for (const id of match.article.author_ids) {
      const list = matchesByAuthor.get(id) ?? [];
      list.push(match);
      matchesByAuthor.set(id, list);
    }
  }

  const authors = effectiveAuthors(manuscript, prioritize);
  const manuscriptPeople = authors
    .map((a) => db.findPerson({ name: a.name, emails: a.email ? [a.email] : [], orcids: a.orcid ? [a.orcid] : [] }, { byName: true }))
    .filter((a): a is FixtureAuthor => a !== undefined);
  const manuscriptPeopleIds = new Set(manuscriptPeople.map((a) => a.id));
  const coauthorIds = new Set<number>();
  for (const person of manuscriptPeople) {
    for (const article of db.articlesOf(person.id)) for (const id of article.author_ids) coauthorIds.add(id);
  }
  const manuscriptInstitutions = new Set(
    authors.map((a) => (a.affiliation ? institutionOf(a.affiliation) : '')).filter((inst) => inst !== ''),
  );
  for (const person of manuscriptPeople) for (const aff of person.affiliations.slice(0, 1)) manuscriptInstitutions.add(institutionOf(aff));
  const referenceWordSets = manuscript.references.map((line) => new Set(words(line)));
  const externalCoi = externalCoiAuthors(ctx);
  const groupLinks = ctx.refereeFinder ? linkGroups(ctx.refereeFinder.groups, db) : new Map<number, GroupLink[]>();

  const ranked = new Map<number, Candidate>();
  for (const author of db.authors) {
    const authorMatches = matchesByAuthor.get(author.id);
    if (!authorMatches || manuscriptPeopleIds.has(author.id)) continue;
    const best = authorMatches.slice(0, 5);
    const articles = db.articlesOf(author.id);
    const mark = ctx.marks.get(author.id);
    ranked.set(author.id, {
      name: fullName(author),
      first_name: author.first_name,
      last_name: author.last_name,
      middle_name: author.middle_name,
      suffix: author.suffix,
      author_id: author.id,
      email: author.emails[0] ?? null,
      orcid: author.orcid,
      affiliation: author.affiliations[0] ?? null,
      articlesCount: articles.length,
      citationsCount: author.citations,
      hIndex: author.h_index,
      score: roundScore(best.reduce((sum, m) => sum + m.similarity, 0)),
      url: ctx.urls.author(author.id),
      relevant_concepts: relevantConcepts(authorMatches, queryConcepts),
      relevant_articles: best.map((m) => ({ id: m.article.id, title: m.article.title, year: m.article.year, url: ctx.urls.article(m.article.id) })),
      authors_groups: (groupLinks.get(author.id) ?? []).map((link) => ({ group_id: link.groupId, client_id: link.clientId })),
      marked: mark?.marked ?? false,
      marked_by: mark?.marked ? mark.markedBy : null,
      coauth_conflicts: { exists: coauthorIds.has(author.id) },
      aff_conflicts: { exists: author.affiliations.some((aff) => manuscriptInstitutions.has(institutionOf(aff))) },
      retracted_articles: { exists: articles.some((a) => a.retracted) },
      referenced_articles: {
        exists: articles.some((a) => titleCited(a.title, referenceWordSets)),
      },
      external_coi: { exists: externalCoi.has(author.id) },
    });
  }

  const rf = ctx.refereeFinder;
  if (rf?.effect === 'boost') {
    for (const [id, candidate] of ranked) {
      if (candidate.authors_groups.length > 0) ranked.set(id, { ...candidate, score: roundScore(candidate.score * rf.boostMultiplier) });
    }
  }
  let candidates = [...ranked.values()];
  if (rf?.effect === 'limit_to') candidates = candidates.filter((c) => c.authors_groups.length > 0);
  candidates = candidates.filter((c) => passesFilters(c, ctx));
  if (!settings.include_candidates_with_conflicts) candidates = candidates.filter((c) => !hasConflict(c));
  if (!settings.include_candidates_without_email) candidates = candidates.filter((c) => c.email !== null);
  candidates.sort((a, b) => b.score - a.score || a.author_id - b.author_id);

  return {
    candidates: candidates.slice(0, MAX_CANDIDATES),
    ranked,
    authorsGroupsSettings: groupsSettingsOf(rf),
  };
}

/** The service's authors_groups_settings: present when the folder's settings name groups; `boost_multiplier` only for boost. */
export function groupsSettingsOf(rf: ResolvedRefereeFinder | null): AuthorsGroupsSettings | null {
  if (!rf) return null;
  return {
    authors_groups: rf.groups.map((g) => ({ id: g.id, name: g.name, label: g.label })),
    effect: rf.effect,
    ...(rf.effect === 'boost' ? { boost_multiplier: rf.boostMultiplier } : {}),
  };
}

export function hasConflict(candidate: Candidate): boolean {
  return [
    candidate.coauth_conflicts,
    candidate.aff_conflicts,
    candidate.retracted_articles,
    candidate.referenced_articles,
    candidate.external_coi,
  ].some((flag) => flag?.exists === true);
}

function passesFilters(candidate: Candidate, ctx: CandidateContext): boolean {
  const f = ctx.filters;
  const age = ctx.db.academicAge(candidate.author_id, ctx.year) ?? 0;
  const within = (value: number, min: number | undefined, max: number | undefined) =>
    (min === undefined || value >= min) && (max === undefined || value <= max);
  return (
    within(candidate.hIndex, f.min_h_index, f.max_h_index) &&
    within(age, f.min_academic_age, f.max_academic_age) &&
    within(candidate.articlesCount, f.min_articles_count, f.max_articles_count)
  );
}

/** Concepts of the author's matched articles that the manuscript mentions, by weight; else the best article's. */
function relevantConcepts(matches: readonly ArticleMatch[], queryConcepts: ReadonlySet<string>): string[] {
  const weights = new Map<string, number>();
  for (const match of matches) {
    for (const concept of match.article.concepts) {
      const key = concept.toLowerCase();
      if (queryConcepts.has(key)) weights.set(key, (weights.get(key) ?? 0) + match.similarity);
    }
  }
  if (weights.size === 0) return (matches[0]?.article.concepts ?? []).slice(0, 5).map((c) => c.toLowerCase());
  return [...weights]
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .slice(0, 5)
    .map(([concept]) => concept);
}

/** A reference line cites an article when it contains every significant word of the article's title. */
function titleCited(title: string, referenceWordSets: readonly Set<string>[]): boolean {
  const titleWords = words(title).filter((w) => w.length > 3);
  return titleWords.length > 0 && referenceWordSets.some((set) => titleWords.every((w) => set.has(w)));
}

function words(text: string): string[] {
  return text
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
}

interface GroupLink {
  groupId: number;
  clientId: string;
}

function recordsOf(group: GroupView): Iterable<[string, Record<string, unknown>]> {
  return group.records instanceof Map ? group.records.entries() : (group.records as Iterable<[string, Record<string, unknown>]>);
}

function asStrings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

/** Records link to database authors by ORCID or email (never by name alone). */
function linkGroups(groups: readonly GroupView[], db: ScholarDb): Map<number, GroupLink[]> {
  const links = new Map<number, GroupLink[]>();
  for (const group of groups) {
    for (const [clientId, record] of recordsOf(group)) {
      const author = db.findPerson({ emails: asStrings(record.emails), orcids: asStrings(record.orcids) }, { byName: false });
      if (!author) continue;
      const list = links.get(author.id) ?? [];
      list.push({ groupId: group.id, clientId });
      links.set(author.id, list);
    }
  }
  for (const list of links.values()) list.sort((a, b) => a.groupId - b.groupId || a.clientId.localeCompare(b.clientId));
  return links;
}

/**
 * External COI (spec v6 `external_coi`, "flagged by the client through uploaded data"): the
 * emulator reads the org's `external_coi_field` custom field on every author-from-group record of
 * the org; a record whose value is the option labelled "Yes" (or `true`, `"yes"`, `1`) flags the
 * database author it links to by ORCID or email.
 */
function externalCoiAuthors(ctx: CandidateContext): Set<number> {
  const flagged = new Set<number>();
  const fieldId = ctx.org.external_coi_field;
  if (!fieldId) return flagged;
  const field = ctx.org.custom_fields.author_from_group.find((f) => f.api_id === fieldId);
  const yesOptions = new Set((field?.options ?? []).filter((o) => /^(yes|true)$/i.test(o.option.trim())).map((o) => o.api_id));
  const isYes = (value: unknown) =>
    value === true ||
    value === 1 ||
    (typeof value === 'string' && (yesOptions.has(value) || /^(yes|true)$/i.test(value.trim()))) ||
    (Array.isArray(value) && value.some((v) => typeof v === 'string' && yesOptions.has(v)));
  for (const group of ctx.allGroups) {
    for (const [, record] of recordsOf(group)) {
      if (!isYes(record[fieldId])) continue;
      const author = ctx.db.findPerson({ emails: asStrings(record.emails), orcids: asStrings(record.orcids) }, { byName: false });
      if (author) flagged.add(author.id);
    }
  }
  return flagged;
}
