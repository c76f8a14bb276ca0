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
 *
 * Bounded: a common value must not make the check quadratic, so a block past its cap is compared in
 * part, and listed in `partialBlocks` (the run's notes say so, describePartialBlocks):
 * - rows sharing one ORCID iD or email (a placeholder such as none@example.org on thousands of
 *   rows) are one group: past KEY_ALL_PAIRS rows each is paired with the group's first row only,
 *   so every row of the group is still in a pair (and held back under `reject`), in linear size;
 * - a name block past BLOCK_ALL_PAIRS rows (a common family name at a large institute) compares
 *   each name with its NEIGHBOURS nearest in sorted order only: a typo near the start of a name
 *   there can be missed. Below the cap a block is compared in full, at most BLOCK_ALL_PAIRS / 2
 *   comparisons a row, and Levenshtein runs only where the names' lengths and letters allow the
 *   similarity (exact filters: see mayBeSimilar and sameName).
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

/** A block too large to compare in full: compared in part (see the top of this file). */
export interface PartialBlock {
  tier: DuplicateTier;
  /** Rows in the block. */
  size: number;
  /** For `name`: the affiliation and the name part the rows share. */
  affiliation?: string;
  part?: string;
  /** The block's first row (an email or ORCID iD is not repeated in the run's notes). */
  first: DuplicatePerson;
}

/** Two normalised names at least this similar (1 - distance / longer length) are "very similar". */
export const NAME_SIMILARITY = 0.85;
/** Name blocks larger than this compare each name with its NEIGHBOURS in sorted order only. */
export const BLOCK_ALL_PAIRS = 500;
const NEIGHBOURS = 25;
/** Rows sharing an ORCID iD or email past this many are each paired with the first row only. */
export const KEY_ALL_PAIRS = 50;

interface Person {
  clientId: string;
  // Set even when undefined: one object shape for every row, and no spread to build it.
  provenance?: Provenance;
  /** Normalised, words sorted; '' without an affiliation (the name tier needs one) or a name. */
  name: string;
  /** The name's two blocks: its longest word, and its other words ('' for a one-word name). */
  longest: string;
  others: string;
  /** The characters of the name, one bit per character code modulo 32: a quick bound on the distance. */
  letters: number;
  /** Index into the finder's normalised affiliations; -1 for none. */
  affiliation: number;
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
  /** Affiliations as the roster spells them, to their number: most repeat, so each is normalised once. */
  private readonly affiliationByRaw = new Map<string, number>();
  private readonly affiliationByText = new Map<string, number>();
  private readonly affiliations: string[] = [];
  /** More rows than `maxRows` were added: nothing is checked. */
  overflowed = false;
  /** Blocks the last `inRoster` compared in part only, as they were past their cap. */
  partialBlocks: PartialBlock[] = [];

  constructor(private readonly maxRows = DUPLICATE_PEOPLE_MAX_ROWS) {}

  add(record: { clientId: string; fields: Fields; provenance?: Provenance }): void {
    if (this.overflowed) return;
    if (this.people.length >= this.maxRows) {
      this.overflowed = true;
      this.people.length = 0;
      this.index.clear();
      this.affiliationByRaw.clear();
      this.affiliationByText.clear();
      this.affiliations.length = 0;
      return;
    }
    const person = this.personOf(record.clientId, record.fields, record.provenance);
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
    this.partialBlocks = [];
    if (this.overflowed) return [];
    const found = new PairSet();
    this.sameKey(found, 'orcid', (person) => person.orcids);
    this.sameKey(found, 'email', (person) => person.emails);
    // Names: grouped by affiliation first (an array index, nothing hashed), then by name part.
    const groups: Array<number[] | undefined> = [];
    this.people.forEach((person, i) => {
      if (person.name !== '') (groups[person.affiliation] ??= []).push(i);
    });
    for (const group of groups) {
      if (group === undefined || group.length < 2) continue;
      const byLongest = new Blocks();
      const byOthers = new Blocks();
      for (const i of group) {
        const person = this.people[i]!;
        byLongest.add(person.longest, i);
        if (person.others !== '') byOthers.add(person.others, i);
      }
      for (const blocks of [byLongest, byOthers]) for (const [part, members] of blocks.shared()) this.sameName(found, part, members.map((i) => this.people[i]!));
    }
    return found.pairs();
  }

  /**
   * Pairs of a new client_id (one the inventory does not own) with an owned record that has the
   * same ORCID iD or email. `owned` is read once, in pages: the inventory's client_ids and fields.
   */
  againstInventory(newIds: ReadonlySet<string>, owned: Iterable<readonly [string, Fields]>): DuplicatePair[] {
    if (this.overflowed) return [];
    const byKey = { orcid: new Map<string, Person[]>(), email: new Map<string, Person[]>() };
    let keys = 0;
    for (const person of this.people) {
      if (!newIds.has(person.clientId)) continue;
      for (const [tier, values] of [['orcid', person.orcids], ['email', person.emails]] as const) {
        for (const value of values) {
          const list = byKey[tier].get(value);
          if (list) list.push(person);
          else byKey[tier].set(value, [person]);
          keys++;
        }
      }
    }
    const found = new PairSet();
    if (keys === 0) return [];
    for (const [clientId, fields] of owned) {
      const other = { clientId, owned: true };
      for (const [tier, values] of [['orcid', listOf(fields.orcids)], ['email', emailsOf(fields)]] as const) {
        for (const value of values) {
          for (const person of byKey[tier].get(value) ?? []) {
            if (person.clientId !== clientId) found.add(tier, person, other, `same ${tier === 'orcid' ? 'ORCID iD' : 'email'} ${value} as the owned record ${clientId}`);
          }
        }
      }
    }
    return found.pairs();
  }

  /** Rows sharing an ORCID iD or an email: every pair, or past KEY_ALL_PAIRS each with the first. */
  private sameKey(found: PairSet, tier: 'orcid' | 'email', keysOf: (person: Person) => string[]): void {
    const blocks = new Blocks();
    this.people.forEach((person, i) => {
      for (const key of keysOf(person)) blocks.add(key, i);
    });
    const evidence = (key: string) => `same ${tier === 'orcid' ? 'ORCID iD' : 'email'} ${key}`;
    for (const [key, members] of blocks.shared()) {
      const people = members.map((i) => this.people[i]!);
      if (people.length > KEY_ALL_PAIRS) {
        this.partialBlocks.push({ tier, size: people.length, first: side(people[0]!) });
        for (let y = 1; y < people.length; y++) found.add(tier, people[0]!, people[y]!, evidence(key));
        continue;
      }
      for (let x = 0; x < people.length; x++) {
        for (let y = x + 1; y < people.length; y++) found.add(tier, people[x]!, people[y]!, evidence(key));
      }
    }
  }

  /** One name block (one affiliation, one name part), its members in row order. */
  private sameName(found: PairSet, part: string, block: Person[]): void {
    if (block.length > BLOCK_ALL_PAIRS) {
      this.partialBlocks.push({ tier: 'name', size: block.length, affiliation: this.affiliations[block[0]!.affiliation]!, part, first: side(block[0]!) });
      const sorted = block.sort((p, q) => (p.name < q.name ? -1 : p.name > q.name ? 1 : 0));
      for (let x = 0; x < sorted.length; x++) {
        for (let y = x + 1; y < Math.min(sorted.length, x + 1 + NEIGHBOURS); y++) this.similarNames(found, sorted[x]!, sorted[y]!);
      }
      return;
    }
    // By length (a stable sort: equal names keep row order), each name against the longer ones
    // until the difference in length alone puts the similarity below NAME_SIMILARITY.
    const sorted = block.sort((p, q) => p.name.length - q.name.length);
    for (let x = 0; x < sorted.length; x++) {
      const p = sorted[x]!;
      for (let y = x + 1; y < sorted.length; y++) {
        const q = sorted[y]!;
        if (1 - (q.name.length - p.name.length) / q.name.length < NAME_SIMILARITY) break;
        if (!mayBeSimilar(p, q)) continue;
        // The evidence names them in sorted order, whichever block found them.
        if (q.name < p.name) this.similarNames(found, q, p);
        else this.similarNames(found, p, q);
      }
    }
  }

  private similarNames(found: PairSet, p: Person, q: Person): void {
    const similarity = nameSimilarity(p.name, q.name);
    if (similarity < NAME_SIMILARITY) return;
    const how = similarity === 1 ? 'the same name' : `very similar names (${Math.round(similarity * 100)} %)`;
    found.add('name', p, q, `${how}, "${p.name}" and "${q.name}", at the same affiliation "${this.affiliations[p.affiliation]}"`);
  }

  private personOf(clientId: string, fields: Fields, provenance: Provenance | undefined): Person {
    const affiliation = this.affiliationOf(listOf(fields.affiliations)[0]);
    const words = affiliation < 0 ? [] : nameWords(textOf(fields.name));
    let longest = 0;
    for (let i = 1; i < words.length; i++) if (words[i]!.length > words[longest]!.length) longest = i;
    const name = words.join(' ');
    let letters = 0;
    for (let i = 0; i < name.length; i++) letters |= 1 << (name.charCodeAt(i) & 31);
    return {
      clientId,
      provenance,
      name,
      letters,
      longest: words[longest] ?? '',
      others: words.length === 2 ? words[1 - longest]! : words.filter((_, i) => i !== longest).join(' '),
      affiliation,
      orcids: listOf(fields.orcids),
      emails: emailsOf(fields),
    };
  }

  private affiliationOf(raw: string | undefined): number {
    if (raw === undefined) return -1;
    let id = this.affiliationByRaw.get(raw);
    if (id === undefined) {
      const text = normaliseText(raw);
      id = text === '' ? -1 : this.affiliationByText.get(text);
      if (id === undefined) {
        id = this.affiliations.push(text) - 1;
        this.affiliationByText.set(text, id);
      }
      this.affiliationByRaw.set(raw, id);
    }
    return id;
  }
}

/**
 * The run's note on the blocks compared in part: where, how large, and what may have been missed.
 * Emails and ORCID iDs are not repeated (notes are printed); the first row of the block is named.
 */
export function describePartialBlocks(blocks: readonly PartialBlock[]): string | undefined {
  if (blocks.length === 0) return undefined;
  const where = (person: DuplicatePerson) => (person.provenance ? `${person.provenance.file} row ${person.provenance.row}` : person.clientId);
  const shown = blocks.slice(0, 10).map((block) =>
    block.tier === 'name'
      ? `${block.size} rows at "${block.affiliation}" sharing the name part "${block.part}" (each compared with its ${NEIGHBOURS} nearest names in sorted order only; a typo near the start of a name there can be missed)`
      : `${block.size} rows sharing one ${block.tier === 'orcid' ? 'ORCID iD' : 'email'}, the first at ${where(block.first)} (each paired with that first row only)`,
  );
  return `The check for the same person under two client_ids compared ${blocks.length} block${blocks.length === 1 ? '' : 's'} in part only, as too large to compare in full: ${shown.join('; ')}${blocks.length > shown.length ? `; and ${blocks.length - shown.length} more` : ''}.`;
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

  add(tier: DuplicateTier, p: DuplicatePerson, q: DuplicatePerson, evidence: string): void {
    if (p.clientId === q.clientId) return;
    const [a, b] = p.clientId < q.clientId || q.owned ? [p, q] : [q, p];
    const key = `${a.clientId}\u0000${b.clientId}`;
    const known = this.byPair.get(key);
    if (known && TIER_RANK[known.tier] <= TIER_RANK[tier]) return;
    this.byPair.set(key, { tier, a: side(a), b: side(b), evidence });
  }

  /** By tier, then by client_ids: the same order whichever blocks found them first. */
  pairs(): DuplicatePair[] {
    const order = (x: string, y: string) => (x < y ? -1 : x > y ? 1 : 0);
    return [...this.byPair.values()].sort((x, y) => TIER_RANK[x.tier] - TIER_RANK[y.tier] || order(x.a.clientId, y.a.clientId) || order(x.b.clientId, y.b.clientId));
  }
}

function side(person: DuplicatePerson): DuplicatePerson {
  return { clientId: person.clientId, ...(person.provenance ? { provenance: person.provenance } : {}), ...(person.owned ? { owned: true } : {}) };
}

function textOf(value: FieldValue | undefined): string {
  return typeof value === 'string' ? value : '';
}

function listOf(value: FieldValue | undefined): string[] {
  if (!Array.isArray(value)) return [];
  // Mapped lists hold no empty strings already: copy only when one slipped in.
  return value.every((item) => item !== '') ? value : value.filter((item) => item !== '');
}

/** Emails compared case-insensitively: lower-cased (a copy only when one has a capital). */
function emailsOf(fields: Fields): string[] {
  const emails = listOf(fields.emails);
  return emails.some((email) => /[A-Z]/.test(email)) ? emails.map((email) => email.toLowerCase()) : emails;
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
  return nameWords(name).join(' ');
}

/**
 * The words of normaliseText(name), sorted. Plain ASCII (most names) is cut into words in one pass
 * over its characters, the same words the regular expressions give, without building the text twice.
 */
function nameWords(name: string): string[] {
  // Plain ASCII lower-cases to the same length, so the words are cut from `lower` where found in `name`.
  const lower = name.toLowerCase();
  const words: string[] = [];
  let start = -1;
  for (let i = 0; i <= name.length; i++) {
    const c = i < name.length ? name.charCodeAt(i) : 0x20;
    if (c > 0x7f) return normaliseText(name).split(' ').filter(Boolean).sort();
    if ((c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a) || (c >= 0x30 && c <= 0x39)) {
      if (start < 0) start = i;
    } else if (start >= 0) {
      words.push(lower.slice(start, i));
      start = -1;
    }
  }
  return words.length === 2 ? (words[1]! < words[0]! ? [words[1]!, words[0]!] : words) : words.sort();
}

/**
 * False when the names cannot be similar enough, from the characters each has that the other lacks
 * (as `letters`, one bit per class of characters): one edit adds at most one class to a name and
 * removes at most one, so the distance is at least half the classes in one name only. Exact (never
 * a false "no"), and far cheaper than the distance itself.
 */
function mayBeSimilar(p: Person, q: Person): boolean {
  let apart = p.letters ^ q.letters;
  let count = 0;
  for (; apart !== 0; count++) apart &= apart - 1;
  return 1 - Math.ceil(count / 2) / Math.max(p.name.length, q.name.length) >= NAME_SIMILARITY;
}

/** 1 for equal names, down to 0: 1 - Levenshtein distance / the longer length. */
export function nameSimilarity(a: string, b: string): number {
  if (a === b) return 1;
  const longer = Math.max(a.length, b.length);
  return longer === 0 ? 1 : 1 - distance(a, b) / longer;
}
