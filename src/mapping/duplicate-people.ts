/**
 * The same person under two client_ids: the classic result of an old database (two person ids for
 * one reviewer, one per email). Pure: records in, pairs with their evidence out. Three tiers, the
 * strongest one a pair meets named (docs/mapping.md, "The same person under two client_ids"):
 * - `orcid`: an ORCID iD in common;
 * - `email`: an email in common (case-insensitive), unless each row has ORCID iDs and none is
 *   shared (a lab's shared mailbox holds two people);
 * - `name`: the same first affiliation, and the same name once normalised (accents, case,
 *   punctuation and word order set aside), a very similar one (normalised Levenshtein similarity
 *   at least NAME_SIMILARITY, computed by the `fastest-levenshtein` package; a short name one
 *   letter from another, "bo ys" and "bo yu", when one row's email spells the other's name,
 *   boyu@, which also picks between two names a typo is as near), or an initial for a given
 *   name ("J. Smith", "John Smith"; "De Luca, R." for a three-word name) when one full name of
 *   as many words only fits the initials there, or the initialled row's email spells it
 *   (johnsmith@; seojuncha@ for "S. Cha" and "Seo-jun Cha"). Evidence against a name pair drops it:
 *   two different ORCID iDs; different emails at one domain for a common name (COMMON_WORD_ROWS)
 *   or for a different one; two addresses at one domain that differ by a number (wang.wei@ and
 *   wang.wei2@ are two people); an initialled row's email that spells another given name.
 *   Figures on a labelled corpus: docs/mapping.md.
 *
 * Blocking, not all pairs: records are only compared inside a block (an ORCID, an email; for names,
 * the affiliation with each long word of the name, one at most a letter shorter than the longest,
 * the affiliation with the name's other words, and the affiliation with its initials), so the work
 * grows with the roster, not with its square. A typo in every long word is not found (an ORCID
 * or an email in common still is).
 *
 * Bounded: the finder keeps at most `maxRows` identities, by column (src/mapping/identity-store.ts:
 * about 20 bytes a row and its texts, its client_id one of them; past the cap, far above a million
 * rows, the check is skipped and the run says so; let go of once the check has decided: `release`),
 * pairs are not kept but handed to a sink as found (the caller keeps the strongest
 * MAX_LISTED_PAIRS and counts the rest: see PairList), and a common value must not make the check
 * quadratic, so a block past its cap is compared in part, and listed in `partialBlocks` (the
 * run's notes say so, describePartialBlocks):
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
import { IdentityStore, isAbbreviated, MAX_STORED_ROWS, nameLetters, type StoredIdentity } from './identity-store.js';
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
  /** How strong within its tier, 0 to 1: 1 for an ORCID iD or an email, the names' similarity else. */
  strength: number;
  /**
   * The owned side is gone from the roster and the new side is held back (`reject`): the owned
   * record is kept, not deleted, until the rows are merged or the policy says `warn`.
   */
  pendingRename?: true;
}

/** How many pairs a check found, by tier, and how many the report lists (the strongest). */
export interface DuplicatePeopleFound {
  found: Record<DuplicateTier, number>;
  listed: number;
  /** Found but not listed. */
  leftOut: number;
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
/**
 * A name is common when each of its words is carried by at least this many rows of the roster (a
 * common given name with a common family name: "Wei Wang", "Heitor Oliveira"; "Zhongying Ning" is
 * not). Different emails at one domain for a common name are two people, not one. Tuned on the
 * tuning half of the labelled corpus (test/fixtures/duplicate-people/; bench/duplicate-tuning.ts
 * prints the candidates): at 5 its name pairs keep a precision of 0.989 there (recall 0.847); 8
 * and 10 keep 0.95 too (0.970, 0.963) for more recall (0.869, 0.872), 12 does not (0.940). The
 * pairs 8 adds are a coin toss (9 true, 7 false there: two people of a common name at one
 * institution look exactly like one person with a new address there), so 5 is kept.
 */
export const COMMON_WORD_ROWS = 5;
/** The strength of an initials match ("J. Smith" for "John Smith"): below a typo's. */
const INITIALS_STRENGTH = 0.8;

/** A row's identity, built from the finder's columns for the rows being compared (identity-store.ts). */
type Person = StoredIdentity;

/** The sides of a pair as the inventory pass sees an owned record: no name, only its keys. */
type Keys = Pick<Person, 'orcids' | 'emails'>;

/**
 * Rows whose identities are kept for the check, at most: far above any roster a first run reads
 * (a row takes about 20 bytes plus its texts: src/mapping/identity-store.ts); past it the check
 * is skipped and the run says so.
 */
export const DUPLICATE_PEOPLE_MAX_ROWS = MAX_STORED_ROWS;

/** What a search keeps and tells: see DuplicatePeopleFinder.find. */
export interface DuplicateSearch {
  /** A pair is considered only when this accepts it (both ids); every pair without it. */
  accept?: (a: string, b: string) => boolean;
  /** The inventory's records (client_id, fields last applied), compared with the roster's new rows. */
  owned?: Iterable<readonly [string, Fields]>;
  /** Client_ids the inventory lacks (the inventory pass pairs only these); every row without it. */
  newIds?: ReadonlySet<string>;
  /** Called for every pair found, listed or not. */
  onPair?: (pair: DuplicatePair) => void;
  /** Pairs listed, the strongest first. @default MAX_LISTED_PAIRS */
  limit?: number;
}

/** Collects the roster's records (their identity only) and finds the pairs among them. */
export class DuplicatePeopleFinder {
  private store = new IdentityStore();
  /** Affiliations as the roster spells them, to their number: most repeat, so each is normalised once. */
  private readonly affiliationByRaw = new Map<string, number>();
  private readonly affiliationByText = new Map<string, number>();
  private readonly affiliations: string[] = [];
  /** More rows than `maxRows` were added: nothing is checked. */
  overflowed = false;
  /** `release` was called: the identities are gone. */
  private released = false;
  /** Blocks the last search compared in part only, as they were past their cap. */
  partialBlocks: PartialBlock[] = [];

  /**
   * `commonWordRows` is COMMON_WORD_ROWS but for the corpus's tuning (bench/duplicate-people.ts),
   * which measures the alternatives on the tuning half.
   */
  constructor(
    private readonly maxRows = DUPLICATE_PEOPLE_MAX_ROWS,
    private readonly commonWordRows = COMMON_WORD_ROWS,
  ) {}

  add(record: { clientId: string; fields: Fields; provenance?: Provenance }): void {
    this.keep(record, false);
  }

  /**
   * An owned record's fields as the inventory last applied them, for a client_id whose row the
   * plan's fast path did not map: kept unless a row of the roster holds the client_id.
   */
  addUnlessMapped(record: { clientId: string; fields: Fields; provenance?: Provenance }): void {
    this.keep(record, true);
  }

  private keep(record: { clientId: string; fields: Fields; provenance?: Provenance }, fromInventory: boolean): void {
    if (this.released) throw new Error('DuplicatePeopleFinder: a row was added after release()');
    if (this.overflowed) return;
    // Duplicate policy `last`: a later row of the same client_id replaces the earlier one (the store sorts it out).
    if (this.store.rows >= this.maxRows || !this.store.add(this.personOf(record.clientId, record.fields, record.provenance), fromInventory)) this.overflow();
  }

  private overflow(): void {
    this.overflowed = true;
    this.forget();
  }

  /**
   * Lets go of the rows' identities once the check has decided (src/plan/duplicate-people.ts):
   * a million rows hold tens of megabytes that the rest of the run (the plan, apply, the report)
   * must not carry. The pairs found, `partialBlocks` and `overflowed` stay; nothing can be added or
   * found after.
   */
  release(): void {
    this.released = true;
    this.forget();
  }

  private forget(): void {
    this.store = new IdentityStore();
    this.affiliationByRaw.clear();
    this.affiliationByText.clear();
    this.affiliations.length = 0;
  }

  /** Client_ids kept. */
  get size(): number {
    return this.store.size;
  }

  /**
   * Every pair the search accepts, each once with its strongest tier: among the rows added, then
   * the new rows against the inventory. Returns the strongest `limit` pairs and the counts.
   */
  find(search: DuplicateSearch = {}): PairList {
    if (this.released) throw new Error('DuplicatePeopleFinder: find() after release()');
    this.partialBlocks = [];
    const list = new PairList(search.limit ?? MAX_LISTED_PAIRS);
    if (this.overflowed) return list;
    const accept = search.accept ?? (() => true);
    const emit = (pair: DuplicatePair) => {
      if (!accept(pair.a.clientId, pair.b.clientId)) return;
      search.onPair?.(pair);
      list.add(pair);
    };
    // Only blocks with a new row can give a pair the search wants (a nightly run adds a few).
    const newIds = search.newIds;
    const anyNew = (members: Iterable<number>) => {
      if (newIds === undefined) return true;
      for (const i of members) if (newIds.has(this.store.clientId(i))) return true;
      return false;
    };
    this.sameKey(emit, 'orcid', anyNew);
    this.sameKey(emit, 'email', anyNew);
    this.sameNames(emit, anyNew, newIds === undefined ? undefined : (i) => newIds.has(this.store.clientId(i)));
    if (search.owned) this.againstInventory(emit, search.owned, search.newIds);
    return list;
  }

  /** Every pair among the rows added, strongest first (tests and library users; commands use find). */
  inRoster(): DuplicatePair[] {
    return this.find({ limit: Number.MAX_SAFE_INTEGER }).pairs();
  }

  /**
   * A new client_id (one the inventory does not own) with an owned record that has the same ORCID
   * iD or email as the inventory last applied it. A pair the roster's own rows already gave (the
   * owned row mapped in this run, with the key in common) is not given twice.
   */
  private againstInventory(emit: (pair: DuplicatePair) => void, owned: Iterable<readonly [string, Fields]>, newIds: ReadonlySet<string> | undefined): void {
    // An empty inventory (a first run) has nothing to compare: no index of the rows' keys is built.
    const records = owned[Symbol.iterator]();
    let record = records.next();
    if (record.done) return;
    const wanted = (i: number) => newIds === undefined || newIds.has(this.store.clientId(i));
    const byKey = { orcid: this.store.keyLookup('orcid', wanted), email: this.store.keyLookup('email', wanted) };
    if (byKey.orcid.size + byKey.email.size === 0) return;
    for (; !record.done; record = records.next()) {
      const [clientId, fields] = record.value;
      const keysOf: Keys = { orcids: listOf(fields.orcids), emails: emailsOf(fields) };
      const inRoster = this.store.indexOf(clientId);
      const rosterSide = inRoster === undefined ? undefined : this.store.identity(inRoster);
      const seen = new Set<string>();
      for (const tier of ['orcid', 'email'] as const) {
        for (const value of tier === 'orcid' ? keysOf.orcids : keysOf.emails) {
          for (const i of byKey[tier].rowsOf(value)) {
            if (this.store.clientId(i) === clientId || seen.has(this.store.clientId(i))) continue;
            const person = this.store.identity(i);
            seen.add(person.clientId);
            if (tier === 'email' && orcidsConflict(person, keysOf)) continue;
            // Found among the roster's rows already (the owned row says the same of this key).
            if (rosterSide && strongestKeyTier(person, rosterSide) !== undefined) continue;
            emit({ tier, a: side(person), b: { clientId, owned: true }, evidence: `same ${tier === 'orcid' ? 'ORCID iD' : 'email'} ${value} as the owned record ${clientId}`, strength: 1 });
          }
        }
      }
    }
  }

  /** Rows sharing an ORCID iD (or an email): every pair, or past KEY_ALL_PAIRS each with the first. */
  private sameKey(emit: (pair: DuplicatePair) => void, tier: 'orcid' | 'email', wanted: (members: Iterable<number>) => boolean): void {
    const { shared, sizeOf } = this.store.sharedKeys(tier);
    const evidence = `same ${tier === 'orcid' ? 'ORCID iD' : 'email'} `;
    const pair = (p: Person, q: Person, key: string) => {
      // Each pair once, under its strongest tier and the key of the smallest block it shares
      // (compared in full when any of them is).
      if (strongestKeyTier(p, q) !== tier || smallestShared(sizeOf, tier === 'orcid' ? p.orcids : p.emails, tier === 'orcid' ? q.orcids : q.emails) !== key) return;
      if (tier === 'email' && orcidsConflict(p, q)) return;
      const [a, b] = p.clientId < q.clientId ? [p, q] : [q, p];
      emit({ tier, a: side(a), b: side(b), evidence: evidence + key, strength: 1 });
    };
    for (const { key, members } of shared) {
      if (!wanted(members)) continue;
      const people = members.map((i) => this.store.identity(i));
      if (people.length > KEY_ALL_PAIRS) {
        this.partialBlocks.push({ tier, size: people.length, first: side(people[0]!) });
        for (let y = 1; y < people.length; y++) pair(people[0]!, people[y]!, key);
        continue;
      }
      for (let x = 0; x < people.length; x++) for (let y = x + 1; y < people.length; y++) pair(people[x]!, people[y]!, key);
    }
  }

  /** Names: grouped by affiliation first (an array index, nothing hashed), then by name part. */
  private sameNames(emit: (pair: DuplicatePair) => void, wanted: (members: Iterable<number>) => boolean, isNew?: (i: number) => boolean): void {
    const { byAffiliation, startOf, rowsByWord } = this.groupByAffiliation();
    const names = new NameJudge(emit, new Commonness(rowsByWord, this.commonWordRows), this.affiliations);
    for (let affiliation = 0; affiliation < this.affiliations.length; affiliation++) {
      const group = byAffiliation.subarray(startOf[affiliation]!, startOf[affiliation + 1]!);
      if (group.length < 2 || !wanted(group)) continue;
      const byPart = new KeyBlocks();
      const byInitials = new KeyBlocks();
      names.rowsHere = new Map();
      // The affiliation's names only (a large institution holds tens of thousands of rows); a row
      // becomes an object once it shares a block, with its keys read only when a pair is weighed.
      const rowNames: string[] = [];
      for (const [k, i] of group.entries()) {
        const name = this.store.nameOf(i);
        rowNames.push(name);
        names.rowsHere.set(name, (names.rowsHere.get(name) ?? 0) + 1);
        // The name's blocks (computed here, not kept: numbered, a row's parts are a few numbers).
        for (const part of namePartsOf(name)) byPart.add(part, k);
        for (const key of initialsOf(name)) byInitials.add(key, k);
      }
      const rows: Array<BlockRow | undefined> = [];
      const peopleOf = (members: Uint32Array) => {
        const people: BlockRow[] = [];
        for (const k of members) people.push((rows[k] ??= new BlockRow(this.store, group[k]!, k, rowNames[k]!, affiliation)));
        return people;
      };
      const rankOf = byPart.ranks();
      const compared = this.blocksToCompare(group, [byPart, byInitials], isNew);
      for (const [part, members] of byPart.shared()) {
        if (!compared(members)) {
          if (members.length > BLOCK_ALL_PAIRS) this.partialBlocks.push(this.partialNameBlock(byPart.text(part), peopleOf(members.subarray(0, 1))[0]!, members.length));
          continue;
        }
        // A pair sharing two parts is in two blocks: compared in the block of the first part they
        // share in sorted order only (no set of the pairs compared, which would grow with them).
        const at = rankOf[part]!;
        const ownBlock = (p: BlockRow, q: BlockRow) => byPart.firstShared(p.k, q.k, rankOf) === at;
        this.sameName(names, byPart.text(part), peopleOf(members), ownBlock);
      }
      for (const [, members] of byInitials.shared()) if (compared(members)) names.initials(peopleOf(members));
      names.endAffiliation();
    }
  }

  private partialNameBlock(part: string, first: Person, size: number): PartialBlock {
    return { tier: 'name', size, affiliation: this.affiliations[first.affiliation]!, part, first: side(first) };
  }

  /**
   * The blocks of an affiliation a search for pairs with a new row must compare (`isNew`; all
   * without it): those holding a row that shares a block with a new row. A pair with a new row is
   * compared in a block of the new row, and whether its similar names are ambiguous (the names
   * each side fits, NameJudge.endAffiliation) in the blocks of its other side: other blocks can
   * only give pairs of two owned rows, which the search drops. Rows by their index in `group`.
   */
  private blocksToCompare(group: Uint32Array, blocks: readonly KeyBlocks[], isNew: ((i: number) => boolean) | undefined): (members: Uint32Array) => boolean {
    if (isNew === undefined) return () => true;
    const near = new Set<number>();
    for (const byKey of blocks) for (const [, members] of byKey.shared()) if (members.some((k) => isNew(group[k]!))) for (const k of members) near.add(k);
    return (members) => members.some((k) => near.has(k));
  }

  /**
   * The rows with a name, by affiliation (a counting sort into one typed array: affiliation a's
   * rows, in order, are byAffiliation[startOf[a]] to byAffiliation[startOf[a + 1]]), and how many
   * rows carry each word of a name.
   */
  private groupByAffiliation(): { byAffiliation: Uint32Array; startOf: Uint32Array; rowsByWord: Map<string, number> } {
    const rows = this.store.size;
    const startOf = new Uint32Array(this.affiliations.length + 1);
    /** Each row's affiliation, -1 without a name (or without an affiliation: then no name is kept). */
    const groupOf = new Int32Array(rows);
    const rowsByWord = new Map<string, number>();
    for (let i = 0; i < rows; i++) {
      const name = this.store.nameOf(i);
      groupOf[i] = name === '' ? -1 : this.store.affiliationOf(i);
      if (name === '') continue;
      startOf[groupOf[i]! + 1]! += 1;
      for (const word of name.split(' ')) rowsByWord.set(word, (rowsByWord.get(word) ?? 0) + 1);
    }
    for (let a = 1; a < startOf.length; a++) startOf[a]! += startOf[a - 1]!;
    const byAffiliation = new Uint32Array(startOf[startOf.length - 1]!);
    const next = startOf.slice(0, -1);
    for (let i = 0; i < rows; i++) if (groupOf[i]! >= 0) byAffiliation[next[groupOf[i]!]!++] = i;
    return { byAffiliation, startOf, rowsByWord };
  }

  /**
   * One name block (one affiliation, one name part), its members in row order. A pair whose
   * `ownBlock` is another is compared there.
   */
  private sameName(names: NameJudge, part: string, block: BlockRow[], ownBlock: (p: BlockRow, q: BlockRow) => boolean): void {
    const consider = (p: BlockRow, q: BlockRow) => {
      if (!ownBlock(p, q)) return;
      // The evidence names them in sorted order, whichever block found them.
      if (q.name < p.name) names.similar(q, p);
      else names.similar(p, q);
    };
    if (block.length > BLOCK_ALL_PAIRS) {
      this.partialBlocks.push(this.partialNameBlock(part, block[0]!, block.length));
      const sorted = block.sort((p, q) => (p.name < q.name ? -1 : p.name > q.name ? 1 : 0));
      for (let x = 0; x < sorted.length; x++) {
        for (let y = x + 1; y < Math.min(sorted.length, x + 1 + NEIGHBOURS); y++) consider(sorted[x]!, sorted[y]!);
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
        if (1 - (q.name.length - p.name.length) / q.name.length < NAME_SIMILARITY && !(q.name.length - p.name.length === 1 && q.name.length < ONE_EDIT_IS_FAR)) break;
        if (mayBeSimilar(p, q)) consider(p, q);
      }
    }
  }

  private personOf(clientId: string, fields: Fields, provenance: Provenance | undefined): Person {
    const affiliation = this.affiliationOf(listOf(fields.affiliations)[0]);
    const words = affiliation < 0 ? [] : nameWords(textOf(fields.name));
    const name = words.join(' ');
    return {
      clientId,
      provenance,
      name,
      letters: nameLetters(name),
      abbreviated: isAbbreviated(name),
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
 * Decides name pairs: the same, a very similar or an initialled name, only where it is not
 * ambiguous at the affiliation and nothing says two people.
 */
class NameJudge {
  /** Rows by name at the affiliation being compared (set per affiliation). */
  rowsHere = new Map<string, number>();
  /** The affiliation's pairs of similar or initialled names, decided at its end. */
  private fuzzy: Fuzzy[] = [];

  constructor(
    private readonly emit: (pair: DuplicatePair) => void,
    private readonly commonness: Commonness,
    private readonly affiliations: readonly string[],
  ) {}

  similar(p: Person, q: Person): void {
    // An initial is compared as an initial (initials below): "j smith" is not a typo of "k smith".
    if (p.name !== q.name && (p.abbreviated || q.abbreviated)) return;
    if (p.name === q.name) return this.pair(p, q, 'the same name', 1);
    const edits = distance(p.name, q.name);
    const similarity = 1 - edits / Math.max(p.name.length, q.name.length);
    if (similarity >= NAME_SIMILARITY) this.fuzzy.push({ p, q, initials: false, strength: similarity });
    // One letter apart in a short name ("bo yu", "bo ys": 80 %) is a typo only when an email says so.
    else if (edits === 1 && spellEachOther(p, q)) this.fuzzy.push({ p, q, initials: false, strength: similarity, spelled: true });
  }

  /**
   * One initials block ("j smith"): a name with an initial pairs with the one full name there
   * ("john smith") of as many words; with two full names ("john smith", "jane smith") the initial
   * fits either, and nothing is said, unless the initialled row's email spells one of them in full
   * (johnsmith@, smith.john@): then that one. Only an email that spells it pairs a full name of
   * more words ("S. Cha" with seojuncha@ is "Seo-jun Cha"). An email that spells another given
   * name ("jake.smith@") is evidence against every full name there. Pairs the similarity found
   * already are not given twice.
   */
  initials(block: Person[]): void {
    const full = new Set(block.filter((person) => !person.abbreviated).map((person) => person.name));
    if (full.size === 0) return;
    for (const p of block) {
      if (!p.abbreviated) continue;
      const spelled = [...full].filter((name) => spellsName(p, name));
      let name: string | undefined;
      if (spelled.length > 0) name = spelled.length === 1 ? spelled[0] : undefined;
      else if (full.size === 1 && spelledName(p) === undefined) name = [...full].find((only) => wordCount(only) === wordCount(p.name));
      if (name === undefined) continue;
      for (const q of block) {
        if (q.name !== name || nameSimilarity(p.name, q.name) >= NAME_SIMILARITY) continue;
        this.fuzzy.push({ p, q, initials: true, strength: INITIALS_STRENGTH, spelled: spelled.length > 0 });
      }
    }
  }

  /**
   * The affiliation's similar and initialled names, once all are known: a name that fits more
   * than one other there (a typo of "lei liu" is as near "lei lin") says nothing about which,
   * unless an email picks one: "jino ahn" at jinhoahn@ is "jinho ahn", not "jin ahn".
   */
  endAffiliation(): void {
    const partners = new Map<string, number>();
    const count = (counts: Map<string, number>, clientId: string) => counts.set(clientId, (counts.get(clientId) ?? 0) + 1);
    const open = this.fuzzy.filter(({ p, q }) => strongestKeyTier(p, q) === undefined && !this.against(p, q));
    for (const { p, q } of open) {
      count(partners, p.clientId);
      count(partners, q.clientId);
    }
    const alone = (counts: Map<string, number>, p: Person, q: Person) => counts.get(p.clientId) === 1 && counts.get(q.clientId) === 1;
    // Among the ambiguous ones, the pairs an email picks (each side in one such pair only).
    const ambiguous = open.filter(({ p, q }) => !alone(partners, p, q));
    const spelledPartners = new Map<string, number>();
    for (const fuzzy of ambiguous) {
      fuzzy.spelled ??= spellEachOther(fuzzy.p, fuzzy.q);
      if (fuzzy.spelled) count(spelledPartners, fuzzy.p.clientId), count(spelledPartners, fuzzy.q.clientId);
    }
    for (const fuzzy of open) {
      if (alone(partners, fuzzy.p, fuzzy.q) || (fuzzy.spelled === true && alone(spelledPartners, fuzzy.p, fuzzy.q))) this.pair(fuzzy.p, fuzzy.q, evidenceOf(fuzzy), fuzzy.strength);
    }
    this.fuzzy = [];
  }

  private pair(p: Person, q: Person, how: string, strength: number): void {
    if (p.clientId === q.clientId || strongestKeyTier(p, q) !== undefined || this.ambiguous(p, q) || this.against(p, q)) return;
    const [a, b] = p.clientId < q.clientId ? [p, q] : [q, p];
    this.emit({ tier: 'name', a: side(a), b: side(b), evidence: `${how}, "${p.name}" and "${q.name}", at the same affiliation "${this.affiliations[p.affiliation]}"`, strength });
  }

  /**
   * A name that fits more than one other row at the affiliation says nothing about which: the same
   * name on three rows or more there, or a similar name that another row there also carries.
   */
  private ambiguous(p: Person, q: Person): boolean {
    const here = (person: Person) => this.rowsHere.get(person.name) ?? 0;
    return p.name === q.name ? here(p) > 2 : here(p) > 1 || here(q) > 1;
  }

  /**
   * Evidence that the two are different people: two ORCID iDs; or different emails at one domain
   * (both addresses were given out by the same institution) when the names differ or are common,
   * or when one address is the other with a number (wang.wei@ and wang.wei2@: the institution
   * numbered a namesake), however rare the name.
   */
  private against(p: Person, q: Person): boolean {
    if (orcidsConflict(p, q)) return true;
    if (p.emails.length === 0 || q.emails.length === 0 || firstShared(p.emails.map(domainOf), q.emails.map(domainOf)) === undefined) return false;
    return p.name !== q.name || this.commonness.isCommon(p.name) || numberedApart(p.emails, q.emails);
  }
}

/**
 * The full name an initialled two-word name's email spells ("j smith" with johnsmith7@ or
 * smith.john@ spells "john smith"), normalised; undefined when no email spells one (or the name
 * is not an initial and one word). Only letters of the address's local part count.
 */
function spelledName(person: Person): string | undefined {
  const words = person.name.split(' ');
  if (words.length !== 2) return undefined;
  const [initial, family] = words[0]!.length === 1 ? [words[0]!, words[1]!] : [words[1]!, words[0]!];
  if (initial.length !== 1 || family.length < 2) return undefined;
  const names = new Set<string>();
  for (const email of person.emails) {
    const letters = email.slice(0, email.lastIndexOf('@')).replace(/[^a-z]/g, '');
    for (const given of [letters.endsWith(family) ? letters.slice(0, -family.length) : '', letters.startsWith(family) ? letters.slice(family.length) : '']) {
      if (given.length >= 2 && given[0] === initial) names.add(given < family ? `${given} ${family}` : `${family} ${given}`);
    }
  }
  return names.size === 1 ? [...names][0] : undefined;
}

/**
 * Whether an email of `p` spells `q`'s name, and not `p`'s own: the letters of its local part are
 * `q`'s words run together in some order (johnsmith7@, smith.john@ for "john smith"; up to three
 * words). A typo'd or initialled row that kept the person's personal address says who it is.
 */
function spellsOther(p: Person, q: Person): boolean {
  return !q.abbreviated && spellsName(p, q.name);
}

/** Either's email spells the other's name (spellsOther). */
function spellEachOther(p: Person, q: Person): boolean {
  return spellsOther(p, q) || spellsOther(q, p);
}

/**
 * A similar or initialled pair at one affiliation, decided when the affiliation's are all known.
 * `spelled`: an email of one spells the other's name; known at once for initials and for short
 * names one letter apart, for other similar names worked out only when the pair is ambiguous.
 */
interface Fuzzy {
  p: Person;
  q: Person;
  initials: boolean;
  strength: number;
  spelled?: boolean;
}

function evidenceOf({ initials, strength, spelled }: Fuzzy): string {
  if (initials) return spelled === true ? 'the same initials, and an email that spells the full name' : 'the same initials';
  return `very similar names (${Math.round(strength * 100)} %)${spelled === true ? ', and an email that spells the other name' : ''}`;
}

/** Whether an email of `p` spells `name` (two or three words, run together) and not `p`'s own name. */
function spellsName(p: Person, name: string): boolean {
  if (p.emails.length === 0) return false;
  const words = name.split(' ');
  if (words.length < 2 || words.length > 3) return false;
  for (const email of p.emails) {
    const letters = localLetters(email);
    if (letters.length === name.length - words.length + 1 && runTogether(words, letters) && !runTogether(p.name.split(' '), letters)) return true;
  }
  return false;
}

function wordCount(name: string): number {
  let count = 1;
  for (let i = 0; i < name.length; i++) if (name.charCodeAt(i) === 0x20) count++;
  return count;
}

/** The letters a to z of an email's local part (johnsmith7@, john.smith@: "johnsmith"). */
function localLetters(email: string): string {
  return email.slice(0, email.lastIndexOf('@')).replace(/[^a-z]/g, '');
}

/** Whether `letters` is the words run together in some order. */
function runTogether(words: readonly string[], letters: string, from = 0): boolean {
  if (words.length === 0) return from === letters.length;
  return words.some((word, i) => letters.startsWith(word, from) && runTogether([...words.slice(0, i), ...words.slice(i + 1)], letters, from + word.length));
}

/** Whether a name is common in the roster: each of its words on COMMON_WORD_ROWS rows or more. */
class Commonness {
  constructor(
    private readonly rowsByWord: ReadonlyMap<string, number>,
    private readonly threshold: number,
  ) {}

  isCommon(name: string): boolean {
    return name.split(' ').every((word) => (this.rowsByWord.get(word) ?? 0) >= this.threshold);
  }
}

/**
 * A name's blocking parts: each of its long words (at most one letter shorter than the longest,
 * so that a typo that shortens the longest word, or lengthens another, still leaves one in
 * common) and, for each, the other words together. A two-word name's parts are its two words.
 */
function namePartsOf(name: string): string[] {
  const words = name.split(' ');
  if (words.length === 1) return words;
  let longest = 0;
  for (const word of words) longest = Math.max(longest, word.length);
  const parts = new Set<string>();
  words.forEach((word, at) => {
    if (word.length < longest - 1) return;
    parts.add(word);
    parts.add(words.filter((_, i) => i !== at).join(' '));
  });
  return [...parts];
}

/**
 * A name's initials blocks (computed when compared, not kept): a name with an initial ("j smith")
 * is one; a full name ("john smith") is one per word kept whole, the others cut to their initial
 * ("j smith", "john s"). A three-word name is also one per word cut, the others kept ("de luca r"
 * for "rigisano de luca"), and one per word kept with another's initial, the third left out ("cha
 * s" for "seo jun cha": a hyphenated given name written as one initial). None for a one-word name
 * or past four words.
 */
function initialsOf(name: string): string[] {
  const words = name.split(' ');
  if (words.length < 2 || words.length > 4) return [];
  if (words.some((word) => word.length === 1)) return [name];
  const forms = words.map((_, kept) => words.map((word, i) => (i === kept ? word : word[0]!)).sort().join(' '));
  if (words.length !== 3) return forms;
  const more = new Set(forms);
  words.forEach((word, at) => {
    more.add(words.map((other, i) => (i === at ? other[0]! : other)).sort().join(' '));
    words.forEach((other, i) => i !== at && more.add([word, other[0]!].sort().join(' ')));
  });
  return [...more];
}

/** Pairs listed in reports, at most: the strongest first; the rest are counted by tier. */
export const MAX_LISTED_PAIRS = 500;

const TIER_RANK: Record<DuplicateTier, number> = { orcid: 0, email: 1, name: 2 };

/** Strongest first: tier, then strength, then client_ids (the same order whichever block found them). */
export function comparePairs(x: DuplicatePair, y: DuplicatePair): number {
  const order = (s: string, t: string) => (s < t ? -1 : s > t ? 1 : 0);
  return TIER_RANK[x.tier] - TIER_RANK[y.tier] || y.strength - x.strength || order(x.a.clientId, y.a.clientId) || order(x.b.clientId, y.b.clientId);
}

/**
 * The pairs a search found: every one counted by tier, the strongest `limit` kept (memory bounded
 * by the limit whatever the roster: the list is cut back to it whenever it reaches twice as many).
 */
export class PairList {
  readonly found: Record<DuplicateTier, number> = { orcid: 0, email: 0, name: 0 };
  private kept: DuplicatePair[] = [];

  constructor(readonly limit: number) {}

  add(pair: DuplicatePair): void {
    this.found[pair.tier] += 1;
    this.kept.push(pair);
    if (this.kept.length >= 2 * this.limit && this.kept.length > this.limit) this.kept = this.kept.sort(comparePairs).slice(0, this.limit);
  }

  get total(): number {
    return this.found.orcid + this.found.email + this.found.name;
  }

  /** The strongest pairs, at most `limit`. */
  pairs(): DuplicatePair[] {
    this.kept = this.kept.sort(comparePairs).slice(0, this.limit);
    return this.kept;
  }
}

/** The tier two rows' keys give: an ORCID iD in common, else an email in common, else none. */
function strongestKeyTier(p: Keys, q: Keys): 'orcid' | 'email' | undefined {
  if (firstShared(p.orcids, q.orcids) !== undefined) return 'orcid';
  if (firstShared(p.emails, q.emails) !== undefined) return 'email';
  return undefined;
}

/** Both have ORCID iDs and none in common: two people. */
function orcidsConflict(p: Keys, q: Keys): boolean {
  return p.orcids.length > 0 && q.orcids.length > 0 && firstShared(p.orcids, q.orcids) === undefined;
}

function firstShared(xs: readonly string[], ys: readonly string[]): string | undefined {
  for (const x of xs) if (ys.includes(x)) return x;
  return undefined;
}

/** Two different addresses the same but for their digits (wang.wei@x, wang.wei2@x). */
function numberedApart(xs: readonly string[], ys: readonly string[]): boolean {
  const unnumbered = (email: string) => email.replace(/[0-9]+/g, '');
  return xs.some((x) => ys.some((y) => x !== y && unnumbered(x) === unnumbered(y)));
}

function domainOf(email: string): string {
  return email.slice(email.lastIndexOf('@') + 1);
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
 * One affiliation's blocks of one kind (name parts, or initials): each key a number, and what a
 * row adds kept as numbers in one list, so that a large institution's blocks are a few typed
 * arrays and one Map of its distinct keys, not a Map entry and an array per key and row. A block
 * lists the key's first row, then every later row that adds it (a row that is not the first can
 * add a key twice: listed twice), the blocks with two rows or more in the order they got their
 * second; as a Map of keys to rows, filled in that order, would.
 */
class KeyBlocks {
  private readonly ids = new Map<string, number>();
  private readonly keys: string[] = [];
  /** By key: its first row; and 1 once another row added it. */
  private readonly firstOf: number[] = [];
  private readonly isShared: number[] = [];
  /** Keys in the order they got a second row. */
  private readonly sharedOrder: number[] = [];
  /** What the rows added, in order: row and key, flat; and where each row's keys start in it. */
  private readonly added: number[] = [];
  private readonly rowStart: number[] = [0];

  /** Row `k`'s key (rows add theirs in order: 0, 1, 2...). */
  add(key: string, k: number): void {
    let id = this.ids.get(key);
    if (id === undefined) {
      id = this.keys.push(key) - 1;
      this.ids.set(key, id);
      this.firstOf.push(k);
      this.isShared.push(0);
    } else if (this.isShared[id] === 0 && this.firstOf[id] !== k) {
      this.isShared[id] = 1;
      this.sharedOrder.push(id);
    }
    // Rows without a key leave no gap: each row's keys are added[2 * rowStart[k]] to added[2 * rowStart[k + 1]].
    while (this.rowStart.length <= k + 1) this.rowStart.push(this.rowStart[this.rowStart.length - 1]!);
    this.rowStart[k + 1]! += 1;
    this.added.push(k, id);
  }

  text(id: number): string {
    return this.keys[id]!;
  }

  /** The smallest rank (`rank`) of the keys rows `p` and `q` both added; Infinity for none. */
  firstShared(p: number, q: number, rank: Uint32Array): number {
    const { added, rowStart } = this;
    let first = Infinity;
    for (let x = rowStart[p]!; x < rowStart[p + 1]!; x++) {
      const key = added[2 * x + 1]!;
      if (rank[key]! >= first) continue;
      for (let y = rowStart[q]!; y < rowStart[q + 1]!; y++) {
        if (added[2 * y + 1] === key) {
          first = rank[key]!;
          break;
        }
      }
    }
    return first;
  }

  /** Each key's rank among the keys in sorted order (by key number). */
  ranks(): Uint32Array {
    const sorted = this.keys.map((_, id) => id).sort((x, y) => (this.keys[x]! < this.keys[y]! ? -1 : this.keys[x]! > this.keys[y]! ? 1 : 0));
    const rank = new Uint32Array(this.keys.length);
    sorted.forEach((id, r) => (rank[id] = r));
    return rank;
  }

  /** The keys with two rows or more, in the order they got their second, each with its rows. */
  *shared(): IterableIterator<[number, Uint32Array]> {
    const { added, firstOf } = this;
    const count = new Uint32Array(this.keys.length + 1);
    const listed = (k: number, id: number, seen: Uint8Array) => {
      // A key's first row once; every other row each time it adds the key.
      if (k !== firstOf[id]) return true;
      if (seen[id]) return false;
      seen[id] = 1;
      return true;
    };
    let seen = new Uint8Array(this.keys.length);
    for (let at = 0; at < added.length; at += 2) if (listed(added[at]!, added[at + 1]!, seen)) count[added[at + 1]! + 1]! += 1;
    for (let id = 1; id < count.length; id++) count[id]! += count[id - 1]!;
    const members = new Uint32Array(count[count.length - 1]!);
    const next = count.slice(0, -1);
    seen = new Uint8Array(this.keys.length);
    for (let at = 0; at < added.length; at += 2) if (listed(added[at]!, added[at + 1]!, seen)) members[next[added[at + 1]!]!++] = added[at]!;
    for (const id of this.sharedOrder) yield [id, members.subarray(count[id]!, count[id + 1]!)];
  }
}

/**
 * A row as the name blocks of its affiliation compare it: its name (read once for the
 * affiliation), with its ORCID iDs, emails and provenance read from the store only when a pair is
 * weighed (most rows of a block never are). One per row of the affiliation, shared by its blocks;
 * the same values as the store's `identity`.
 */
class BlockRow implements Person {
  readonly clientId: string;
  readonly abbreviated: boolean;
  readonly letters: number;
  private whole: StoredIdentity | undefined;

  constructor(
    private readonly store: IdentityStore,
    private readonly logical: number,
    /** Its number among the affiliation's rows (its blocks' keys are KeyBlocks.keysOf(k)). */
    readonly k: number,
    readonly name: string,
    readonly affiliation: number,
  ) {
    this.clientId = store.clientId(logical);
    this.abbreviated = isAbbreviated(name);
    this.letters = nameLetters(name);
  }

  get provenance(): Provenance | undefined {
    return this.full().provenance;
  }

  get orcids(): string[] {
    return this.full().orcids;
  }

  get emails(): string[] {
    return this.full().emails;
  }

  private full(): StoredIdentity {
    return (this.whole ??= this.store.identity(this.logical));
  }
}

/** The key in both lists with the fewest rows (the first of them in `xs` order on a tie). */
function smallestShared(sizeOf: ReadonlyMap<string, number>, xs: readonly string[], ys: readonly string[]): string | undefined {
  let best: string | undefined;
  for (const x of xs) if (ys.includes(x) && (best === undefined || (sizeOf.get(x) ?? 1) < (sizeOf.get(best) ?? 1))) best = x;
  return best;
}

function side(person: DuplicatePerson): DuplicatePerson {
  return { clientId: person.clientId, ...(person.provenance ? { provenance: person.provenance } : {}), ...(person.owned ? { owned: true } : {}) };
}

function textOf(value: FieldValue | undefined): string {
  return typeof value === 'string' ? value : '';
}

/** One empty list for every row without a value: a row's identity keeps no array of its own for it. */
const NONE: string[] = [];

export function listOf(value: FieldValue | undefined): string[] {
  if (!Array.isArray(value) || value.length === 0) return NONE;
  // Mapped lists hold no empty strings already: copy only when one slipped in.
  return value.every((item) => item !== '') ? value : value.filter((item) => item !== '');
}

/**
 * Emails compared case-insensitively: lower-cased, every letter (`ИВАН@` is `иван@`), each alone
 * (a copy only when one has a capital).
 */
export function emailsOf(fields: Fields): string[] {
  const emails = listOf(fields.emails);
  return emails.some((email) => email !== email.toLowerCase()) ? emails.map((email) => email.toLowerCase()) : emails;
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
  const longer = Math.max(p.name.length, q.name.length);
  // Or one edit apart in a short name (a typo, kept when an email says so: NameJudge.similar).
  return 1 - Math.ceil(count / 2) / longer >= NAME_SIMILARITY || (count <= 2 && longer < ONE_EDIT_IS_FAR);
}

/** Names shorter than this are less than NAME_SIMILARITY alike one edit apart ("bo yu", "bo ys": 80 %). */
const ONE_EDIT_IS_FAR = 1 / (1 - NAME_SIMILARITY);

/** 1 for equal names, down to 0: 1 - Levenshtein distance / the longer length. */
export function nameSimilarity(a: string, b: string): number {
  if (a === b) return 1;
  const longer = Math.max(a.length, b.length);
  return longer === 0 ? 1 : 1 - distance(a, b) / longer;
}
