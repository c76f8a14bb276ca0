/**
 * The emulator's in-memory state, built from the fixture. `reset()` rebuilds it from the same
 * fixture, so every test can start from a known world.
 *
 * Per organization: API keys, plan features, settings, teams, custom fields (indexed for O(1)
 * value checks), folders, authors groups with their records, and the manuscripts state that the
 * manuscripts/journals/marking modules fill. Shared across orgs: the scholarly database
 * (authors, articles, journals) and id counters, since service ids are global integers.
 */
import type { CustomField } from '../client/schemas.js';
import type { Fixture, FixtureArticle, FixtureAuthor, FixtureFolder, FixtureOrg } from './fixture.js';
import { validateWriteBody, type AuthorFieldIndex, type IndexedCustomField, type StoredRecord } from './record-validation.js';
import { EmulatorHttpError } from './reply.js';

/** A fixture that passed the schema but breaks a rule of the service (e.g. a record's custom field value). */
export class EmulatorFixtureError extends Error {
  override name = 'EmulatorFixtureError';
}

export interface GroupState {
  id: number;
  name: string;
  label: string | null;
  owner_team: string;
  editor_teams: string[];
  viewer_teams: string[];
  /** Records keyed by client_id. */
  records: Map<string, StoredRecord>;
}

/** A custom field with its option api_ids in a Set, for O(1) value checks. */
export interface FolderState {
  id: number;
  name: string;
  referee_finder: FixtureFolder['referee_finder'] | null;
}

export interface OrgState {
  id: number;
  name: string;
  fixture: FixtureOrg;
  apiKeys: ReadonlySet<string>;
  planFeatures: FixtureOrg['plan_features'];
  settings: FixtureOrg['settings'];
  teams: ReadonlySet<string>;
  customFields: FixtureOrg['custom_fields'];
  /** author_from_group custom fields by api_id (docs/service-contract.md, call 2: values keyed by api_id). */
  authorFieldsById: ReadonlyMap<string, IndexedCustomField>;
  /** Folders by name; created on demand by manuscript upload (docs/service-contract.md, call 6). */
  folders: Map<string, FolderState>;
  groups: Map<number, GroupState>;
  /**
   * Manuscripts keyed by origin_id. Empty here; filled by the manuscripts module, which
   * owns the value type. Rebuilt empty by `reset()`.
   */
  manuscripts: Map<string, unknown>;
  /** State of add-on modules keyed by module name; see `World.orgExtension`. Dropped by `reset()`. */
  extensions: Map<string, unknown>;
  /** The custom fields listing as docs/service-contract.md, call 8 answers it, built once. */
  customFieldsListing: Record<'author_from_group' | 'folder' | 'proposal', CustomField[]>;
}

/** Derived, read-only indexes over the fixture's scholarly database. */
export interface AuthorDatabase {
  authors: ReadonlyMap<number, FixtureAuthor>;
  /** Lower-cased email → author. */
  byEmail: ReadonlyMap<string, FixtureAuthor>;
  /** Bare ORCID iD (0000-0000-0000-000X, upper-case X) → author. */
  byOrcid: ReadonlyMap<string, FixtureAuthor>;
  /** Articles of each author, newest first (ties by id, descending). */
  articlesByAuthor: ReadonlyMap<number, readonly FixtureArticle[]>;
}

export interface WorldOptions {
  /** Base of the `service_url` links the emulator writes (author profiles, articles). */
  serviceWebUrl?: string;
}

export const DEFAULT_SERVICE_WEB_URL = 'https://service.example';

const ORCID_PATTERN = /(\d{4}-\d{4}-\d{4}-\d{3}[\dXx])/;

/** Extracts the bare ORCID iD from `0000-...`, `https://orcid.org/0000-...` and the like. */
export function normalizeOrcid(value: string): string | null {
  const match = ORCID_PATTERN.exec(value);
  return match ? match[1]!.toUpperCase() : null;
}

export class World {
  readonly fixture: Fixture;
  readonly serviceWebUrl: string;
  readonly authorDb: AuthorDatabase;
  orgs: OrgState[] = [];
  private orgsByKey = new Map<string, OrgState>();
  private counters = new Map<string, number>();

  constructor(fixture: Fixture, options: WorldOptions = {}) {
    this.fixture = fixture;
    this.serviceWebUrl = (options.serviceWebUrl ?? DEFAULT_SERVICE_WEB_URL).replace(/\/+$/, '');
    this.authorDb = buildAuthorDatabase(fixture);
    this.reset();
  }

  /** Restores the state the fixture describes: groups, records, folders; manuscripts emptied. */
  reset(): void {
    this.orgs = this.fixture.orgs.map((org, index) => buildOrgState(org, index));
    this.orgsByKey = new Map();
    for (const org of this.orgs) for (const key of org.apiKeys) this.orgsByKey.set(key, org);
    this.counters = new Map();
    const maxGroupId = Math.max(0, ...this.orgs.flatMap((org) => [...org.groups.keys()]));
    this.counters.set('group', maxGroupId);
    const maxFolderId = Math.max(0, ...this.orgs.flatMap((org) => [...org.folders.values()].map((f) => f.id)));
    this.counters.set('folder', maxFolderId);
  }

  /**
   * Per-org state of an add-on module (e.g. manuscripts, marks, webhook order), created on first use
   * with `create(org)` and dropped by `reset()`. Use one `key` per module and always the same `T`.
   */
  orgExtension<T>(org: OrgState, key: string, create: (org: OrgState) => T): T {
    if (!org.extensions.has(key)) org.extensions.set(key, create(org));
    return org.extensions.get(key) as T;
  }

  orgByApiKey(key: string | undefined): OrgState | undefined {
    return key === undefined ? undefined : this.orgsByKey.get(key);
  }

  /**
   * Next id of a global integer sequence ('group', 'folder', 'manuscript', 'webhook-order', ...).
   * Sequences start at 1 (or after the highest id the fixture uses) and restart on `reset()`.
   */
  nextId(sequence: string): number {
    const next = (this.counters.get(sequence) ?? 0) + 1;
    this.counters.set(sequence, next);
    return next;
  }

  /** Finds or creates a folder of the org by name (docs/service-contract.md, call 6: created when missing). */
  folder(org: OrgState, name: string): FolderState {
    let folder = org.folders.get(name);
    if (!folder) {
      folder = { id: this.nextId('folder'), name, referee_finder: null };
      org.folders.set(name, folder);
    }
    return folder;
  }

  /** The fixture author a record links to: first ORCID match, then first email match (case-insensitive). */
  linkedAuthorOf(record: StoredRecord): FixtureAuthor | null {
    for (const orcid of record.orcids ?? []) {
      const bare = typeof orcid === 'string' ? normalizeOrcid(orcid) : null;
      const author = bare ? this.authorDb.byOrcid.get(bare) : undefined;
      if (author) return author;
    }
    for (const email of record.emails ?? []) {
      const author = typeof email === 'string' ? this.authorDb.byEmail.get(email.trim().toLowerCase()) : undefined;
      if (author) return author;
    }
    return null;
  }

  authorUrl(authorId: number): string {
    return `${this.serviceWebUrl}/authors/${authorId}/`;
  }

  articleUrl(articleId: number): string {
    return `${this.serviceWebUrl}/articles/${articleId}/`;
  }
}

function buildOrgState(org: FixtureOrg, orgIndex: number): OrgState {
  const authorFieldsById = new Map<string, IndexedCustomField>();
  for (const field of org.custom_fields.author_from_group) {
    authorFieldsById.set(field.api_id, {
      field,
      optionIds: new Set((field.options ?? []).map((option) => option.api_id)),
    });
  }
  const folders = new Map<string, FolderState>();
  org.folders.forEach((folder, index) => {
    // Fixture folders get stable ids from the org id and their position; on-demand folders
    // continue from the highest (World.reset).
    folders.set(folder.name, { id: org.id * 1000 + index + 1, name: folder.name, referee_finder: folder.referee_finder ?? null });
  });
  const groups = new Map<number, GroupState>();
  // Fixture records obey the same rules as written ones (docs/service-contract.md, call 2), so a GET never serves what a POST would refuse.
  const fieldCheck: AuthorFieldIndex = { authorFieldsById };
  org.groups.forEach((group, groupIndex) => {
    const records = new Map<string, StoredRecord>();
    for (const [clientId, record] of Object.entries(group.records)) {
      try {
        validateWriteBody(fieldCheck, record, 'full');
      } catch (error) {
        if (!(error instanceof EmulatorHttpError)) throw error;
        throw new EmulatorFixtureError(`fixture orgs.${orgIndex}.groups.${groupIndex}.records.${clientId}: ${error.message}`);
      }
      records.set(clientId, {
        ...record,
        name: typeof record.name === 'string' ? record.name : '',
        emails: stringListOrNull(record.emails),
        orcids: stringListOrNull(record.orcids),
        articles: stringListOrNull(record.articles),
        affiliations: stringListOrNull(record.affiliations),
      });
    }
    groups.set(group.id, {
      id: group.id,
      name: group.name,
      label: group.label,
      owner_team: group.owner_team,
      editor_teams: [...group.editor_teams],
      viewer_teams: [...group.viewer_teams],
      records,
    });
  });
  return {
    id: org.id,
    name: org.name,
    fixture: org,
    apiKeys: new Set(org.api_keys),
    planFeatures: org.plan_features,
    settings: org.settings,
    teams: new Set(org.teams),
    customFields: org.custom_fields,
    authorFieldsById,
    folders,
    groups,
    manuscripts: new Map(),
    extensions: new Map(),
    customFieldsListing: {
      author_from_group: org.custom_fields.author_from_group.map(listedField),
      folder: org.custom_fields.folder.map(listedField),
      proposal: org.custom_fields.proposal.map(listedField),
    },
  };
}

/** docs/service-contract.md, Custom fields: description is nullable; options present only for the option kinds. */
function listedField(field: CustomField): CustomField {
  const { options, ...rest } = field;
  const listed: CustomField = { ...rest, description: field.description ?? null };
  if (field.data_kind === 'single_option' || field.data_kind === 'multi_option') listed.options = options ?? [];
  return listed;
}

function stringListOrNull(value: unknown): string[] | null {
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : null;
}

function buildAuthorDatabase(fixture: Fixture): AuthorDatabase {
  const authors = new Map<number, FixtureAuthor>();
  const byEmail = new Map<string, FixtureAuthor>();
  const byOrcid = new Map<string, FixtureAuthor>();
  for (const author of fixture.authors) {
    authors.set(author.id, author);
    for (const email of author.emails) byEmail.set(email.trim().toLowerCase(), author);
    const orcid = author.orcid ? normalizeOrcid(author.orcid) : null;
    if (orcid) byOrcid.set(orcid, author);
  }
  const articlesByAuthor = new Map<number, FixtureArticle[]>();
  for (const article of fixture.articles) {
    for (const authorId of article.author_ids) {
      const list = articlesByAuthor.get(authorId) ?? [];
      list.push(article);
      articlesByAuthor.set(authorId, list);
    }
  }
  for (const list of articlesByAuthor.values()) list.sort((a, b) => b.year - a.year || b.id - a.id);
  return { authors, byEmail, byOrcid, articlesByAuthor };
}
