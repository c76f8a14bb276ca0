/**
 * The same person under two client_ids: the classic result of an old database (two person ids for
 * one reviewer, one per email). Pure: records in, pairs with their evidence out. Three tiers, the
 * strongest one a pair meets named:
 * - `orcid`: an ORCID iD in common;
 * - `email`: an email in common (case-insensitive);
 * - `name`: the same first affiliation, and the same name once normalised (accents, case,
 *   punctuation and word order set aside) or a very similar one (normalised Levenshtein similarity
 *   at least NAME_SIMILARITY, computed by the `fastest-levenshtein` package).
 *
 * Blocking, not all pairs: records are only compared inside a block (an ORCID, an email; for names,
 * the affiliation with the name's longest word, and the affiliation with its other words), so the
 * work grows with the roster, not with its square. Names are compared when they share the longest
 * word or all the others: a typo in both is not found (an ORCID or an email in common still is).
 */
import { distance } from 'fastest-levenshtein';
import type { Provenance } from '../sources/types.js';
import type { FieldValue } from './types.js';

type Fields = Record<string, FieldValue>;

export type DuplicateTier = 'orcid' | 'email' | 'name';

export interface DuplicatePerson {
  clientId: string;
  provenance?: Provenance;
  /** Owned by the pipeline already (found in the inventory, not in the roster's new rows). */
  owned?: boolean;
}

export interface DuplicatePair {
  tier: DuplicateTier;
  a: DuplicatePerson;
  b: DuplicatePerson;
  /** What the two have in common, in words (the ORCID iD, the email, the names and affiliation). */
  evidence: string;
}

/** Two normalised names at least this similar (1 - distance / longer length) are "very similar". */
export const NAME_SIMILARITY = 0.85;
/** Blocks larger than this compare each name with its neighbours in sorted order only. */
const BLOCK_ALL_PAIRS = 500;
const NEIGHBOURS = 25;

interface Person {
  clientId: string;
  provenance?: Provenance;
  name: string;
  affiliation: string;
  orcids: string[];
  emails: string[];
}

/**
 * Rows whose identities are kept for the check, at most: about 200 bytes each, so a million-row
 * first run (every row mapped) stays within its memory budget; past it the check is skipped.
 */
export const DUPLICATE_PEOPLE_MAX_ROWS = 250_000;

/** Collects the roster's records (their identity only) and finds the pairs among them. */
export class DuplicatePeopleFinder {
  private readonly people: Person[] = [];
  private readonly index = new Map<string, number>();
  /** More rows than `maxRows` were added: nothing is checked. */
  overflowed = false;

  constructor(private readonly maxRows = DUPLICATE_PEOPLE_MAX_ROWS) {}

  add(record: { clientId: string; fields: Fields; provenance?: Provenance }): void {
    if (this.overflowed) return;
    if (this.people.length >= this.maxRows) {
      this.overflowed = true;
      this.people.length = 0;
      this.index.clear();
      return;
    }
    const person = personOf(record.clientId, record.fields, record.provenance);
    // Duplicate policy `last`: a later row of the same client_id replaces the earlier one.
    const at = this.index.get(record.clientId);
    if (at === undefined) {
      this.index.set(record.clientId, this.people.length);
      this.people.push(person);
    } else this.people[at] = person;
  }

  get size(): number {
    return this.people.length;
  }

  /** Pairs of different client_ids among the records added, each once, with its strongest tier. */
  inRoster(): DuplicatePair[] {
    if (this.overflowed) return [];
    const found = new PairSet();
    const byKey = (tier: 'orcid' | 'email', keysOf: (person: Person) => string[]) => {
      const blocks = new Blocks();
      this.people.forEach((person, i) => {
        for (const key of keysOf(person)) blocks.add(key, i);
      });
      for (const [key, members] of blocks.shared()) {
        for (let x = 0; x < members.length; x++) {
          for (let y = x + 1; y < members.length; y++) found.add(tier, this.people[members[x]!]!, this.people[members[y]!]!, `same ${tier === 'orcid' ? 'ORCID iD' : 'email'} ${key}`);
        }
      }
    };
    byKey('orcid', (person) => person.orcids);
    byKey('email', (person) => person.emails);

    const blocks = new Blocks();
    // Affiliations by number: shorter keys, fewer bytes to hash.
    const affiliations = new Map<string, number>();
    this.people.forEach((person, i) => {
      if (person.affiliation === '' || person.name === '') return;
      let affiliation = affiliations.get(person.affiliation);
      if (affiliation === undefined) affiliations.set(person.affiliation, (affiliation = affiliations.size));
      for (const part of nameBlocks(person.name)) blocks.add(`${affiliation}${part}`, i);
    });
    for (const [, members] of blocks.shared()) {
      const sorted = members.map((i) => this.people[i]!).sort((p, q) => (p.name < q.name ? -1 : p.name > q.name ? 1 : 0));
      const reach = sorted.length > BLOCK_ALL_PAIRS ? NEIGHBOURS : sorted.length;
      for (let x = 0; x < sorted.length; x++) {
        for (let y = x + 1; y < Math.min(sorted.length, x + 1 + reach); y++) {
          const p = sorted[x]!;
          const q = sorted[y]!;
          const similarity = nameSimilarity(p.name, q.name);
          if (similarity < NAME_SIMILARITY) continue;
          const how = similarity === 1 ? 'the same name' : `very similar names (${Math.round(similarity * 100)} %)`;
          found.add('name', p, q, `${how}, "${p.name}" and "${q.name}", at the same affiliation "${p.affiliation}"`);
        }
      }
    }
    return found.pairs();
  }

  /**
   * Pairs of a new client_id (one the inventory does not own) with an owned record that has the
   * same ORCID iD or email. `owned` is read once, in pages: the inventory's client_ids and fields.
   */
  againstInventory(newIds: ReadonlySet<string>, owned: Iterable<readonly [string, Fields]>): DuplicatePair[] {
    if (this.overflowed) return [];
    const byKey = new Map<string, Person[]>();
    for (const person of this.people) {
      if (!newIds.has(person.clientId)) continue;
      for (const key of [...person.orcids.map((o) => `orcid:${o}`), ...person.emails.map((e) => `email:${e}`)]) byKey.set(key, [...(byKey.get(key) ?? []), person]);
    }
    const found = new PairSet();
    if (byKey.size === 0) return [];
    for (const [clientId, fields] of owned) {
      const other = personOf(clientId, fields, undefined);
      for (const [tier, values] of [['orcid', other.orcids], ['email', other.emails]] as const) {
        for (const value of values) {
          for (const person of byKey.get(`${tier}:${value}`) ?? []) {
            if (person.clientId !== clientId) found.add(tier, person, { ...other, owned: true }, `same ${tier === 'orcid' ? 'ORCID iD' : 'email'} ${value} as the owned record ${clientId}`);
          }
        }
      }
    }
    return found.pairs();
  }
}

/**
 * Members of each block key. Most keys (an email, an ORCID) have one member: those take one Map
 * entry and no array.
 */
class Blocks {
  private readonly first = new Map<string, number>();
  private readonly more = new Map<string, number[]>();

  add(key: string, member: number): void {
    const first = this.first.get(key);
    if (first === undefined) this.first.set(key, member);
    else if (first !== member) {
      const list = this.more.get(key);
      if (list) list.push(member);
      else this.more.set(key, [first, member]);
    }
  }

  /** The keys with more than one member. */
  shared(): IterableIterator<[string, number[]]> {
    return this.more.entries();
  }
}

const TIER_RANK: Record<DuplicateTier, number> = { orcid: 0, email: 1, name: 2 };

/** One entry per pair of client_ids, the strongest tier kept. */
class PairSet {
  private readonly byPair = new Map<string, DuplicatePair>();

  add(tier: DuplicateTier, p: Person & { owned?: boolean }, q: Person & { owned?: boolean }, evidence: string): void {
    if (p.clientId === q.clientId) return;
    const [a, b] = p.clientId < q.clientId || q.owned ? [p, q] : [q, p];
    const key = `${a.clientId}\u0000${b.clientId}`;
    const known = this.byPair.get(key);
    if (known && TIER_RANK[known.tier] <= TIER_RANK[tier]) return;
    this.byPair.set(key, { tier, a: side(a), b: side(b), evidence });
  }

  pairs(): DuplicatePair[] {
    return [...this.byPair.values()].sort((x, y) => TIER_RANK[x.tier] - TIER_RANK[y.tier] || (x.a.clientId < y.a.clientId ? -1 : x.a.clientId > y.a.clientId ? 1 : 0));
  }
}

function side(person: Person & { owned?: boolean }): DuplicatePerson {
  return { clientId: person.clientId, ...(person.provenance ? { provenance: person.provenance } : {}), ...(person.owned ? { owned: true } : {}) };
}

function personOf(clientId: string, fields: Fields, provenance: Provenance | undefined): Person {
  return {
    clientId,
    ...(provenance ? { provenance } : {}),
    name: normaliseName(textOf(fields.name)),
    affiliation: normaliseText(listOf(fields.affiliations)[0] ?? ''),
    orcids: listOf(fields.orcids),
    emails: listOf(fields.emails).map((email) => (/[A-Z]/.test(email) ? email.toLowerCase() : email)),
  };
}

function textOf(value: FieldValue | undefined): string {
  return typeof value === 'string' ? value : '';
}

function listOf(value: FieldValue | undefined): string[] {
  if (!Array.isArray(value)) return [];
  // Mapped lists hold no empty strings already: copy only when one slipped in.
  return value.every((item) => item !== '') ? value : value.filter((item) => item !== '');
}

/** Lower case, accents and punctuation gone, spaces collapsed. */
export function normaliseText(text: string): string {
  // Most names and affiliations are plain ASCII: the Unicode decomposition is the slow part.
  // eslint-disable-next-line no-control-regex
  if (/^[\x00-\x7f]*$/.test(text)) return text.toLowerCase().replace(/[^a-z0-9]+/g, ' ').trim();
  return text
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
}

/** A name as comparable text: normalised, its words sorted ("Li Wei" and "Wei, Li" are one). */
export function normaliseName(name: string): string {
  return normaliseText(name).split(' ').filter(Boolean).sort().join(' ');
}

/**
 * The blocks a (normalised) name falls in: its longest word, and its other words. Two names one
 * typo apart share one of them.
 */
function nameBlocks(name: string): string[] {
  const words = name.split(' ');
  let longest = 0;
  for (let i = 1; i < words.length; i++) if (words[i]!.length > words[longest]!.length) longest = i;
  const others = words.filter((_, i) => i !== longest).join(' ');
  return others === '' ? [`=${words[longest]}`] : [`=${words[longest]}`, `+${others}`];
}

/** 1 for equal names, down to 0: 1 - Levenshtein distance / the longer length. */
export function nameSimilarity(a: string, b: string): number {
  if (a === b) return 1;
  const longer = Math.max(a.length, b.length);
  return longer === 0 ? 1 : 1 - distance(a, b) / longer;
}
