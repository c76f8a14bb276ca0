/**
 * Relevance scoring for referee candidates and journal recommendations (docs/service-contract.md, calls 6 and 7).
 *
 * A plain TF-IDF vector space over the fixture's articles: each article is a document made of its
 * title, abstract and concepts; the manuscript is a query made of its title, abstract and parsed
 * text (weighted per the org's "prioritize" setting, see `candidates.ts`). Relevance of an article
 * is the cosine similarity of the two vectors, so the ranking is deterministic and explainable.
 */
import type { FixtureArticle } from '../fixture.js';

const STOPWORDS = new Set(
  (
    'a about above after again against all also am an and any are as at be because been before being below between both but by ' +
    'can could did do does doing down during each few for from further had has have having he her here hers him his how i if in ' +
    'into is it its itself just me more most my no nor not of off on once only or other our ours out over own same she should so ' +
    'some such than that the their theirs them then there these they this those through to too under until up very was we were ' +
    'what when where which while who whom why will with you your using use used study studies patients patient results based ' +
    'analysis among within via new two one three data method methods approach paper article show shows shown et al'
  ).split(' '),
);

/** Lower-cases, strips accents, splits on non-letters, drops stopwords, and folds simple plurals. */
export function tokenize(text: string): string[] {
  const tokens: string[] = [];
  for (const raw of text.normalize('NFKD').replace(/[\u0300-\u036f]/g, '').toLowerCase().split(/[^a-z0-9]+/)) {
    if (raw.length < 3 || STOPWORDS.has(raw) || /^\d+$/.test(raw)) continue;
    tokens.push(stem(raw));
  }
  return tokens;
}

function stem(word: string): string {
  if (word.length > 4 && word.endsWith('ies')) return `${word.slice(0, -3)}y`;
  if (word.length > 4 && word.endsWith('ses')) return word.slice(0, -2);
  if (word.length > 3 && word.endsWith('s') && !word.endsWith('ss') && !word.endsWith('us') && !word.endsWith('is')) {
    return word.slice(0, -1);
  }
  return word;
}

export type TermVector = Map<string, number>;

/** A weighted piece of query text; weights let one part of the manuscript dominate another. */
export interface WeightedText {
  text: string;
  weight: number;
}

export interface ArticleMatch {
  article: FixtureArticle;
  /** Cosine similarity in [0, 1]. */
  similarity: number;
}

/** The TF-IDF index of a fixture's articles, built once per emulator. */
export class ArticleIndex {
  readonly articles: readonly FixtureArticle[];
  private readonly idf = new Map<string, number>();
  private readonly vectors: TermVector[];
  /** Every distinct concept of the corpus with its tokens, for concept extraction. */
  private readonly concepts: { concept: string; tokens: string[] }[];

  constructor(articles: readonly FixtureArticle[]) {
    this.articles = articles;
    const termCounts = articles.map((article) => countTerms(tokenize(articleText(article))));
    const documentFrequency = new Map<string, number>();
    for (const counts of termCounts) {
      for (const term of counts.keys()) documentFrequency.set(term, (documentFrequency.get(term) ?? 0) + 1);
    }
    const n = Math.max(articles.length, 1);
    for (const [term, df] of documentFrequency) this.idf.set(term, Math.log(1 + n / df));
    this.vectors = termCounts.map((counts) => this.weigh(counts));
    const seen = new Map<string, string[]>();
    for (const article of articles) {
      for (const concept of article.concepts) {
        const key = concept.toLowerCase();
        if (!seen.has(key)) seen.set(key, tokenize(concept));
      }
    }
    this.concepts = [...seen].map(([concept, tokens]) => ({ concept, tokens })).filter((c) => c.tokens.length > 0);
  }

  /** Builds a query vector from weighted pieces of text (terms unknown to the corpus weigh nothing). */
  queryVector(parts: readonly WeightedText[]): TermVector {
    const counts = new Map<string, number>();
    for (const part of parts) {
      if (part.weight <= 0) continue;
      const partCounts = countTerms(tokenize(part.text));
      const total = [...partCounts.values()].reduce((sum, value) => sum + value, 0) || 1;
      // Normalise each part by its length first, so a long parsed text does not drown the title
      // unless its weight says so.
      for (const [term, count] of partCounts) counts.set(term, (counts.get(term) ?? 0) + (part.weight * count * 100) / total);
    }
    return this.weigh(counts);
  }

  /** Articles with a positive similarity to the query, most similar first (ties by id). */
  match(query: TermVector): ArticleMatch[] {
    const matches: ArticleMatch[] = [];
    this.vectors.forEach((vector, position) => {
      const similarity = dot(query, vector);
      if (similarity > 1e-9) matches.push({ article: this.articles[position] as FixtureArticle, similarity });
    });
    return matches.sort((a, b) => b.similarity - a.similarity || a.article.id - b.article.id);
  }

  /** Corpus concepts all of whose words occur in the text (spec debug_info `extracted_concepts`). */
  conceptsIn(text: string): string[] {
    const tokens = new Set(tokenize(text));
    return this.concepts.filter((c) => c.tokens.every((token) => tokens.has(token))).map((c) => c.concept);
  }

  private weigh(counts: Map<string, number>): TermVector {
    const vector: TermVector = new Map();
    let norm = 0;
    for (const [term, count] of counts) {
      const idf = this.idf.get(term);
      if (idf === undefined || count <= 0) continue;
      const weight = (1 + Math.log(count)) * idf; // sublinear tf
      vector.set(term, weight);
      norm += weight * weight;
    }
    norm = Math.sqrt(norm);
    if (norm > 0) for (const [term, weight] of vector) vector.set(term, weight / norm);
    return vector;
  }
}

/** Title twice: a title says more about an article than a sentence of its abstract. */
function articleText(article: FixtureArticle): string {
  return [article.title, article.title, article.abstract, ...article.concepts].join(' . ');
}

function countTerms(tokens: readonly string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const token of tokens) counts.set(token, (counts.get(token) ?? 0) + 1);
  return counts;
}

function dot(a: TermVector, b: TermVector): number {
  const [small, large] = a.size <= b.size ? [a, b] : [b, a];
  let sum = 0;
  for (const [term, weight] of small) sum += weight * (large.get(term) ?? 0);
  return sum;
}

/** Rounds a score for the wire, so equal inputs give byte-identical responses. */
export function roundScore(value: number): number {
  return Math.round(value * 10_000) / 10_000;
}
