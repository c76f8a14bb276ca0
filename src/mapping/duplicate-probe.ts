/**
 * The same-person check of a nightly run that adds a few rows to a large roster, in proportion to
 * the new rows and the rows they can pair with, not to the roster. The full check
 * (src/sync/duplicate-people-check.ts) loads every owned record of the roster into the finder and
 * reads the inventory twice; yet a pair is only considered when one side is new, and what decides
 * a pair with a new row is known from a few rows (src/mapping/duplicate-people.ts):
 * - its ORCID iDs' and emails' blocks: every row carrying one of them (each block whole, so its
 *   size, its first row and its pairs are the full check's);
 * - its affiliation's rows, all of them: the name blocks, the names counted there (`ambiguous`),
 *   the initials and the similar names that make a partner ambiguous are the affiliation's;
 * - whether its name is common: how many rows of the roster carry each of its words, which only
 *   matters up to COMMON_WORD_ROWS (rows carrying such a word are kept until it is reached);
 * - the owned records (gone from the roster or not) sharing an ORCID iD or email with it.
 * The probe reads the inventory once and gives a finder holding the mapped rows and those owned
 * records only, added in the full check's order (mapped rows first, then the inventory's order),
 * and the owned records to compare with the new rows: the same pairs, in the same order, the same
 * blocks compared in part and the same rows held back (test/mapping/duplicate-probe.property.test.ts
 * compares both over random rosters and inventories).
 *
 * It is not used (`select` answers undefined, and the full check runs) when more than
 * PROBE_MAX_MAPPED rows were mapped (a first run, a mapping change: the finder holds most rows
 * anyway), or when the full check's finder could have been past its bounds (identity-store.ts): it
 * would have skipped the check, and the probe must say what the full check says.
 */
import type { Provenance } from '../sources/types.js';
import { COMMON_WORD_ROWS, DUPLICATE_PEOPLE_MAX_ROWS, DuplicatePeopleFinder, emailsOf, listOf, normaliseName, normaliseText } from './duplicate-people.js';
import { MAX_STORED_KEYS } from './identity-store.js';
import type { FieldValue } from './types.js';

type Fields = Record<string, FieldValue>;

/** Mapped rows the probe keeps (their identity fields only), at most: past them it is not used. */
export const PROBE_MAX_MAPPED = 10_000;
/**
 * Bytes of the identities' texts the full check's finder may hold for the probe to be used: far
 * below the identity store's bound (4,095 MiB, in chunks of 1 MiB that a text up to this size
 * cannot waste more than a small part of), so that the full check could not have skipped.
 */
const PROBE_MAX_TEXT_BYTES = 1024 * 2 ** 20;
/** A text larger than this leaves the probe unused (a chunk of the store could waste much of its room). */
const PROBE_MAX_RECORD_BYTES = 64 * 2 ** 10;

/** Affiliations whose normalised text the probe keeps while it reads the inventory, at most. */
const AFFILIATIONS_CACHED = 100_000;

type Keys = Pick<Identity, 'orcids' | 'emails'>;

/** What the check reads of a row: its normalised affiliation and name words, its ORCID iDs and emails. */
interface Identity {
  /** '' without an affiliation: then the row has no name for the check. */
  affiliation: string;
  /** The name's words as the finder counts them; none without an affiliation or a name. */
  words: string[];
  orcids: string[];
  emails: string[];
}

interface MappedRow {
  clientId: string;
  fields: Fields;
  provenance?: Provenance;
}

/** What `select` gives the decision instead of the full check's finder and inventory. */
export interface ProbeSelection {
  people: DuplicatePeopleFinder;
  /** The owned records sharing an ORCID iD or email with a new row, in the inventory's order. */
  owned: Array<readonly [string, Fields]>;
}

export class DuplicateProbe {
  /** The rows mapped, in order (as the finder was given them); undefined past PROBE_MAX_MAPPED. */
  private mapped: MappedRow[] | undefined = [];

  /** A row the roster mapped, given to the run's finder too (`DuplicatePeopleFinder.add`). */
  add(record: { clientId: string; fields: Fields; provenance?: Provenance }): void {
    if (this.mapped === undefined) return;
    if (this.mapped.length >= PROBE_MAX_MAPPED) {
      this.mapped = undefined;
      return;
    }
    const { name, affiliations, orcids, emails } = record.fields;
    const fields: Fields = {};
    for (const [key, value] of Object.entries({ name, affiliations, orcids, emails })) if (value !== undefined) fields[key] = value;
    this.mapped.push({ clientId: record.clientId, fields, ...(record.provenance ? { provenance: record.provenance } : {}) });
  }

  /**
   * Reads the inventory once and keeps what a pair with a new row depends on (see the top of this
   * file): the finder to search and the owned records to compare. Undefined when the full check
   * must run instead; the inventory may have been read in part then.
   */
  select(input: {
    /** The mapped client_ids the inventory lacks. */
    newIds: ReadonlySet<string>;
    /** The inventory's records (client_id, fields last applied), in the order the full check reads them. */
    inventory: Iterable<readonly [string, Fields]>;
    /** The first row of a client_id in the roster, or undefined (gone from the roster). */
    rosterRow: (clientId: string) => number | undefined;
    sourceFile: string;
  }): ProbeSelection | undefined {
    const mapped = this.mapped;
    if (mapped === undefined) return undefined;
    const wanted = new Wanted(mapped, input.newIds);
    const budget = new FinderBudget();
    for (const row of mapped) budget.count(row.clientId, row.fields, keysOf(row.fields));
    const people = new DuplicatePeopleFinder();
    for (const row of mapped) people.add(row);
    const affiliations = new AffiliationCache();
    const owned: Array<readonly [string, Fields]> = [];
    for (const [clientId, fields] of input.inventory) {
      const keys = keysOf(fields);
      const sharesKey = wanted.sharesKey(keys);
      if (sharesKey) owned.push([clientId, keys]);
      // Every owned record counted against the full check's bounds (those of the roster are in its finder).
      if (!budget.count(clientId, fields, keys)) return undefined;
      if (wanted.mapped.has(clientId)) continue;
      const affiliation = affiliations.of(fields);
      let words: string[] | undefined;
      if (!sharesKey && !wanted.affiliations.has(affiliation)) {
        // Read for its name's words only while a new row's word is below COMMON_WORD_ROWS.
        if (affiliation === '' || !wanted.countingWords) continue;
        words = wordsOf(fields);
        if (!wanted.countsWords(words)) continue;
      }
      const row = input.rosterRow(clientId);
      if (row === undefined) continue;
      wanted.count(affiliation === '' ? [] : (words ?? wordsOf(fields)));
      people.addUnlessMapped({ clientId, fields, provenance: { file: input.sourceFile, row } });
    }
    return { people, owned };
  }
}

/** The new rows' keys, affiliations and name words, and the counts of those words so far. */
class Wanted {
  readonly mapped = new Set<string>();
  readonly affiliations = new Set<string>();
  private readonly orcids = new Set<string>();
  private readonly emails = new Set<string>();
  /** Rows (by word, as the finder counts them) carrying each word of a new row's name. */
  private readonly wordRows = new Map<string, number>();
  /** Words of new rows' names carried fewer than COMMON_WORD_ROWS times so far. */
  private below = 0;

  constructor(mapped: readonly MappedRow[], newIds: ReadonlySet<string>) {
    // Every row of a client_id, a replaced one too: more kept than needed is the same answer.
    const latest = new Map<string, Identity>();
    for (const row of mapped) {
      const identity = identityOf(row.fields);
      latest.set(row.clientId, identity);
      if (!newIds.has(row.clientId)) continue;
      for (const orcid of identity.orcids) this.orcids.add(orcid);
      for (const email of identity.emails) this.emails.add(email);
      if (identity.words.length === 0) continue;
      this.affiliations.add(identity.affiliation);
      for (const word of identity.words) this.wordRows.set(word, 0);
    }
    this.below = this.wordRows.size;
    for (const [clientId, identity] of latest) {
      this.mapped.add(clientId);
      this.count(identity.words);
    }
  }

  /** Whether a row's words may still count (one of a new row's name words is below COMMON_WORD_ROWS). */
  get countingWords(): boolean {
    return this.below > 0;
  }

  sharesKey(keys: Keys): boolean {
    return keys.orcids.some((orcid) => this.orcids.has(orcid)) || keys.emails.some((email) => this.emails.has(email));
  }

  /** A row carrying a new row's name word that the roster's rows kept so far carry fewer than COMMON_WORD_ROWS times. */
  countsWords(words: readonly string[]): boolean {
    return words.some((word) => (this.wordRows.get(word) ?? COMMON_WORD_ROWS) < COMMON_WORD_ROWS);
  }

  /** A row kept: its words counted as the finder counts them (each word of its name). */
  count(words: readonly string[]): void {
    for (const word of words) {
      const rows = this.wordRows.get(word);
      if (rows === undefined) continue;
      this.wordRows.set(word, rows + 1);
      if (rows + 1 === COMMON_WORD_ROWS) this.below -= 1;
    }
  }
}

/**
 * The full check's finder bounds (src/mapping/identity-store.ts), counted over every row it could
 * hold (the mapped rows and every owned record): rows, ORCID iDs and emails, and the texts' UTF-8
 * bytes (the client_id, the normalised name, no longer than a plain ASCII name, the ORCID iDs and
 * emails, each behind a length of at most 5 bytes). False once it could have been past one.
 */
class FinderBudget {
  private rows = 0;
  private keys = 0;
  private bytes = 0;

  count(clientId: string, fields: Fields, keys: Keys): boolean {
    this.rows += 1;
    this.keys += keys.orcids.length + keys.emails.length;
    const name = typeof fields.name === 'string' ? fields.name : '';
    // eslint-disable-next-line no-control-regex
    let record = 15 + (/^[\x00-\x7f]*$/.test(name) ? name.length : Buffer.byteLength(normaliseName(name)));
    for (const text of [clientId, ...keys.orcids, ...keys.emails]) record += 5 + Buffer.byteLength(text);
    this.bytes += record;
    return this.rows < DUPLICATE_PEOPLE_MAX_ROWS && this.keys < MAX_STORED_KEYS && this.bytes < PROBE_MAX_TEXT_BYTES && record < PROBE_MAX_RECORD_BYTES;
  }
}

/** A row's identity as the finder reads it (DuplicatePeopleFinder's personOf). */
function identityOf(fields: Fields): Identity {
  const affiliation = affiliationOf(fields);
  return { affiliation, words: affiliation === '' ? [] : wordsOf(fields), ...keysOf(fields) };
}

function keysOf(fields: Fields): Keys {
  return { orcids: listOf(fields.orcids), emails: emailsOf(fields) };
}

/** The first affiliation, normalised; '' for none. */
function affiliationOf(fields: Fields): string {
  const raw = listOf(fields.affiliations)[0];
  return raw === undefined ? '' : normaliseText(raw);
}

/** The name's words, normalised and sorted, as the finder counts them (for a row with an affiliation). */
function wordsOf(fields: Fields): string[] {
  const name = normaliseName(typeof fields.name === 'string' ? fields.name : '');
  return name === '' ? [] : name.split(' ');
}

/** Affiliations normalised once each (most repeat), at most AFFILIATIONS_CACHED of them kept. */
class AffiliationCache {
  private readonly byRaw = new Map<string, string>();

  of(fields: Fields): string {
    const raw = listOf(fields.affiliations)[0];
    if (raw === undefined) return '';
    let text = this.byRaw.get(raw);
    if (text === undefined) {
      text = normaliseText(raw);
      if (this.byRaw.size < AFFILIATIONS_CACHED) this.byRaw.set(raw, text);
    }
    return text;
  }
}
