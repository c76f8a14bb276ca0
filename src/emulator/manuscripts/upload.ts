/**
 * Reading the manuscript upload form (docs/service-contract.md, call 6) into validated fields, and parsing the optional
 * `source_file`. Errors are `EmulatorHttpError`s that name the form field and say what to send.
 */
import { badRequest, EmulatorHttpError } from '../reply.js';
import { FILTER_NAMES, type CandidateFilters } from './candidates.js';
import type { MultipartForm } from './multipart.js';
import type { ManuscriptAuthor } from './state.js';
import { extractText, referenceLines, sourceKind } from './text-extraction.js';

export interface UploadFields {
  apiKey: string | null;
  folder: string;
  originId: string;
  title: string;
  abstract: string;
  authorsCount: number;
  authors: ManuscriptAuthor[];
  filters: CandidateFilters;
  /** docs/service-contract.md, call 6: present with any non-empty value (even "false" or "0") skips candidates. */
  excludeCandidates: boolean;
}

const REQUIRED = ['folder', 'origin_id', 'title', 'abstract', 'authors_count'] as const;

function single(form: MultipartForm, name: string): string | null {
  const values = form.fields.get(name);
  return values && values.length > 0 ? (values[values.length - 1] as string) : null;
}

function integerField(name: string, raw: string): number {
  const trimmed = raw.trim();
  if (!/^-?\d+$/.test(trimmed)) throw badRequest('validation_error', `form field ${name}: expected an integer, got ${JSON.stringify(raw.slice(0, 40))}`);
  return Number(trimmed);
}

export function readUploadFields(form: MultipartForm): UploadFields {
  for (const name of REQUIRED) {
    const value = single(form, name);
    if (value === null || value.trim() === '') {
      throw badRequest('validation_error', `form field ${name} is required (docs/service-contract.md, call 6: folder, origin_id, title, abstract, authors_count)`);
    }
  }
  const authorsCount = integerField('authors_count', single(form, 'authors_count') as string);
  if (authorsCount < 0) throw badRequest('validation_error', 'form field authors_count: must be 0 or more');

  const filters: CandidateFilters = {};
  for (const name of FILTER_NAMES) {
    const raw = single(form, name);
    if (raw !== null && raw.trim() !== '') filters[name] = integerField(name, raw);
  }

  // authorK_name / _aff / _orcid / _email, K = 1..N; gaps in K are allowed and kept in K order.
  const byIndex = new Map<number, ManuscriptAuthor>();
  for (const [name, values] of form.fields) {
    const match = /^author(\d+)_(name|aff|orcid|email)$/.exec(name);
    if (!match) continue;
    const k = Number(match[1]);
    if (k < 1) throw badRequest('validation_error', `form field ${name}: author numbers start at 1`);
    const author = byIndex.get(k) ?? { name: null, affiliation: null, orcid: null, email: null };
    const value = (values[values.length - 1] ?? '').trim() || null;
    if (match[2] === 'name') author.name = value;
    else if (match[2] === 'aff') author.affiliation = value;
    else if (match[2] === 'orcid') author.orcid = value;
    else author.email = value;
    byIndex.set(k, author);
  }
  const authors = [...byIndex].sort((a, b) => a[0] - b[0]).map(([, author]) => author);

  const exclude = single(form, 'exclude_candidates');
  return {
    apiKey: single(form, 'api_key'),
    folder: (single(form, 'folder') as string).trim(),
    originId: (single(form, 'origin_id') as string).trim(),
    title: single(form, 'title') as string,
    abstract: single(form, 'abstract') as string,
    authorsCount,
    authors,
    filters,
    excludeCandidates: exclude !== null && exclude !== '',
  };
}

export interface ParsedSource {
  fileName: string | null;
  text: string;
  references: string[];
  authors: ManuscriptAuthor[];
}

/** Extracts what the emulator can from `source_file` (PDF or DOCX by magic bytes). */
export async function parseSource(form: MultipartForm): Promise<ParsedSource> {
  const file = form.files.find((f) => f.field === 'source_file');
  if (!file) return { fileName: null, text: '', references: [], authors: [] };
  if (sourceKind(file.data) === 'unknown') {
    throw new EmulatorHttpError(400, 'unsupported_file', `source_file ${JSON.stringify(file.filename)} is neither a PDF nor a DOCX (checked by its first bytes)`);
  }
  const text = await extractText(file.data);
  return { fileName: file.filename, text, references: referenceLines(text), authors: headerAuthors(text) };
}

const EMAIL = /[\w.+-]+@[\w-]+(?:\.[\w-]+)+/;
const ORCID = /(?:https?:\/\/orcid\.org\/)?\d{4}-\d{4}-\d{4}-\d{3}[\dXx]/;

/**
 * Authors in the text's header: lines before the Abstract heading that carry an email or an
 * ORCID, read as "Name, Affiliation … email ORCID". Crude, like any parser of free text, but
 * enough to make "prioritize parsed data" observable.
 */
export function headerAuthors(text: string): ManuscriptAuthor[] {
  const lines = text.split(/\r?\n/);
  const abstractAt = lines.findIndex((line) => /^\s*abstract\b/i.test(line));
  const header = lines.slice(0, abstractAt >= 0 ? abstractAt : Math.min(lines.length, 30));
  const authors: ManuscriptAuthor[] = [];
  for (const line of header) {
    const email = EMAIL.exec(line)?.[0] ?? null;
    const orcid = ORCID.exec(line)?.[0] ?? null;
    if (!email && !orcid) continue;
    const rest = line
      .replace(EMAIL, '')
      .replace(ORCID, '')
      .replace(/\b(orcid|email|e-mail)\s*:?/gi, '')
      .replace(/[<>()|]/g, ',');
    const parts = rest.split(/[,;]/).map((p) => p.trim()).filter(Boolean);
    authors.push({ name: parts[0] ?? null, affiliation: parts.slice(1).join(', ') || null, email, orcid });
  }
  return authors;
}
