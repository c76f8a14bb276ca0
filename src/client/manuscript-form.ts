/**
 * The multipart body of the manuscript upload (docs/service-contract.md, call 6). Built with undici's own `FormData`: the
 * global one is a different class that undici's `request` does not serialize the same way.
 */
import { FormData } from 'undici';
import { ClientInputError } from './errors.js';

export interface ManuscriptAuthor {
  name?: string | undefined;
  /** Sent as `authorK_aff`. */
  affiliation?: string | undefined;
  orcid?: string | undefined;
  email?: string | undefined;
}

export interface SourceFile {
  /** File name shown by the service in `debug_info.source_file`. */
  filename: string;
  /** The file's bytes; must start with the PDF or DOCX (zip) magic bytes. */
  data: Uint8Array;
}

/** Bounds on suggested candidates (docs/service-contract.md, call 6, and the service's stated limits); integers. */
export interface CandidateFilters {
  minHIndex?: number;
  maxHIndex?: number;
  minAcademicAge?: number;
  maxAcademicAge?: number;
  minArticlesCount?: number;
  maxArticlesCount?: number;
}

export interface ManuscriptUploadInput {
  /** Destination folder (journal code or panel name); created when missing. */
  folder: string;
  /** Client-side manuscript id; uploading the same id again updates (and may move) the manuscript. */
  originId: string;
  title: string;
  abstract: string;
  /** Authors, sent as `author1_*`, `author2_*`, ... */
  authors?: ManuscriptAuthor[];
  /**
   * Total number of authors, used by the service to check that all were parsed.
   * @default authors.length
   */
  authorsCount?: number;
  sourceFile?: SourceFile;
  filters?: CandidateFilters;
  /** Skip candidate calculation (the response then has `candidates: null`). */
  excludeCandidates?: boolean;
}

export type SourceFileKind = 'pdf' | 'docx';

const PDF_MAGIC = Buffer.from('%PDF-', 'latin1');
const ZIP_MAGIC = Buffer.from([0x50, 0x4b, 0x03, 0x04]);

/** Recognizes a PDF (`%PDF-`) or a DOCX (a zip, `PK\x03\x04`) by its first bytes. */
export function detectSourceFileKind(data: Uint8Array): SourceFileKind | undefined {
  const head = Buffer.from(data.buffer, data.byteOffset, Math.min(data.byteLength, 8));
  if (head.subarray(0, PDF_MAGIC.length).equals(PDF_MAGIC)) return 'pdf';
  if (head.subarray(0, ZIP_MAGIC.length).equals(ZIP_MAGIC)) return 'docx';
  return undefined;
}

const CONTENT_TYPES: Record<SourceFileKind, string> = {
  pdf: 'application/pdf',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
};

const FILTER_FIELDS: Record<keyof CandidateFilters, string> = {
  minHIndex: 'min_h_index',
  maxHIndex: 'max_h_index',
  minAcademicAge: 'min_academic_age',
  maxAcademicAge: 'max_academic_age',
  minArticlesCount: 'min_articles_count',
  maxArticlesCount: 'max_articles_count',
};

/** Checks the input before anything is sent; throws ClientInputError naming the field. */
export function validateManuscriptInput(input: ManuscriptUploadInput): void {
  for (const field of ['folder', 'originId', 'title', 'abstract'] as const) {
    if (typeof input[field] !== 'string' || input[field].trim() === '') {
      throw new ClientInputError(`manuscript upload: ${field} is required and must be a non-empty string`);
    }
  }
  const count = input.authorsCount ?? input.authors?.length ?? 0;
  if (!Number.isSafeInteger(count) || count < 0) {
    throw new ClientInputError(`manuscript upload: authorsCount must be a non-negative integer, got ${count}`);
  }
  for (const [key, value] of Object.entries(input.filters ?? {})) {
    if (value !== undefined && !Number.isSafeInteger(value)) {
      throw new ClientInputError(`manuscript upload: filter ${key} must be an integer, got ${String(value)}`);
    }
  }
  if (input.sourceFile && detectSourceFileKind(input.sourceFile.data) === undefined) {
    throw new ClientInputError(`manuscript upload: source file "${input.sourceFile.filename}" is neither a PDF nor a DOCX`, {
      hint: 'The service accepts only PDF (starting with %PDF-) and DOCX files; convert the file first.',
    });
  }
}

/** Builds a fresh form for one attempt (a FormData body is consumed when sent). */
export function buildManuscriptForm(input: ManuscriptUploadInput, apiKey: string): FormData {
  const form = new FormData();
  // docs/service-contract.md, Authentication: the upload also carries the key as a form field.
  form.append('api_key', apiKey);
  form.append('folder', input.folder);
  form.append('origin_id', input.originId);
  form.append('title', input.title);
  form.append('abstract', input.abstract);
  form.append('authors_count', String(input.authorsCount ?? input.authors?.length ?? 0));
  (input.authors ?? []).forEach((author, index) => {
    const k = index + 1;
    if (author.name !== undefined) form.append(`author${k}_name`, author.name);
    if (author.affiliation !== undefined) form.append(`author${k}_aff`, author.affiliation);
    if (author.orcid !== undefined) form.append(`author${k}_orcid`, author.orcid);
    if (author.email !== undefined) form.append(`author${k}_email`, author.email);
  });
  for (const [key, field] of Object.entries(FILTER_FIELDS) as [keyof CandidateFilters, string][]) {
    const value = input.filters?.[key];
    if (value !== undefined) form.append(field, String(value));
  }
  // docs/service-contract.md, call 6: any non-empty value (even "false") skips candidates, so send the field only when asked.
  if (input.excludeCandidates) form.append('exclude_candidates', 'true');
  if (input.sourceFile) {
    const kind = detectSourceFileKind(input.sourceFile.data) ?? 'pdf';
    const blob = new Blob([input.sourceFile.data], { type: CONTENT_TYPES[kind] });
    form.append('source_file', blob, input.sourceFile.filename);
  }
  return form;
}
