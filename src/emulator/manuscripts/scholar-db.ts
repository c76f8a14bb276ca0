/**
 * The emulated service's scholarly database (fixture `authors`, `articles`, `journals`) with the
 * lookups the manuscript features need: articles per author, the TF-IDF index, and identity
 * matching of people by ORCID, email or name.
 */
import type { Fixture, FixtureArticle, FixtureAuthor, FixtureJournal } from '../fixture.js';
import { ArticleIndex } from './ranking.js';

/** A person as a manuscript or a record describes them. */
export interface PersonRef {
  name?: string | null;
  emails?: readonly string[] | null;
  orcids?: readonly string[] | null;
}

/** Bare ORCID iD from `0000-…` or `https://orcid.org/0000-…` (as `World` does). */
export function normalizeOrcid(value: string): string {
  const match = /(\d{4}-\d{4}-\d{4}-\d{3}[\dXx])/.exec(value);
  return match ? match[1]!.toUpperCase() : value.trim().toUpperCase();
}
export function normalizeEmail(value: string): string {
  return value.trim().toLowerCase();
}
/** "Curie, Marie" and "marie  CURIE" compare equal; accents are ignored. */
export function normalizeName(value: string): string {
  const plain = value.normalize('NFKD').replace(/[\u0300-\u036f]/g, '').toLowerCase();
  const swapped = plain.includes(',') ? plain.split(',').reverse().join(' ') : plain;
  return swapped.replace(/[^a-z\s-]/g, ' ').split(/\s+/).filter(Boolean).sort().join(' ');
}
/** The institution part of an affiliation ("Karolinska Institutet, Stockholm, Sweden" → "karolinska institutet"). */
export function institutionOf(affiliation: string): string {
  const first = affiliation.split(/[,;]/)[0] ?? '';
  return first.normalize('NFKD').replace(/[\u0300-\u036f]/g, '').toLowerCase().replace(/[^a-z0-9]+/g, ' ').trim();
}

export function fullName(author: FixtureAuthor): string {
  return [author.first_name, author.middle_name, author.last_name, author.suffix].filter(Boolean).join(' ');
}

export class ScholarDb {
  readonly authors: readonly FixtureAuthor[];
  readonly journals: readonly FixtureJournal[];
  readonly index: ArticleIndex;
  private readonly articlesByAuthor = new Map<number, FixtureArticle[]>();
  private readonly byOrcid = new Map<string, FixtureAuthor>();
  private readonly byEmail = new Map<string, FixtureAuthor>();
  private readonly byName = new Map<string, FixtureAuthor[]>();

  constructor(fixture: Pick<Fixture, 'authors' | 'articles' | 'journals'>) {
    this.authors = fixture.authors;
    this.journals = fixture.journals;
    this.index = new ArticleIndex(fixture.articles);
    for (const article of fixture.articles) {
      for (const id of article.author_ids) {
        const list = this.articlesByAuthor.get(id) ?? [];
        list.push(article);
        this.articlesByAuthor.set(id, list);
      }
    }
    for (const author of fixture.authors) {
      if (author.orcid) this.byOrcid.set(normalizeOrcid(author.orcid), author);
      for (const email of author.emails) this.byEmail.set(normalizeEmail(email), author);
      const key = normalizeName(fullName(author));
      this.byName.set(key, [...(this.byName.get(key) ?? []), author]);
    }
  }

  articlesOf(authorId: number): readonly FixtureArticle[] {
    return this.articlesByAuthor.get(authorId) ?? [];
  }

  /** Academic age: years since the first publication, relative to `year` (at least 0). */
  academicAge(authorId: number, year: number): number | null {
    const years = this.articlesOf(authorId).map((a) => a.year);
    return years.length === 0 ? null : Math.max(0, year - Math.min(...years));
  }

  /**
   * The database author a person refers to: ORCID first, then email, then an unambiguous name
   * (`byName` false for records, whose names alone are not enough to link, as in the foundation).
   */
  findPerson(person: PersonRef, options: { byName: boolean }): FixtureAuthor | undefined {
    for (const orcid of person.orcids ?? []) {
      const hit = this.byOrcid.get(normalizeOrcid(orcid));
      if (hit) return hit;
    }
    for (const email of person.emails ?? []) {
      const hit = this.byEmail.get(normalizeEmail(email));
      if (hit) return hit;
    }
    if (options.byName && person.name) {
      const hits = this.byName.get(normalizeName(person.name));
      if (hits && hits.length === 1) return hits[0];
    }
    return undefined;
  }
}

const cache = new WeakMap<object, ScholarDb>();
/** One database (and TF-IDF index) per fixture, built on first use. */
export function scholarDbFor(fixture: Pick<Fixture, 'authors' | 'articles' | 'journals'>): ScholarDb {
  let db = cache.get(fixture);
  if (!db) {
    db = new ScholarDb(fixture);
    cache.set(fixture, db);
  }
  return db;
}
