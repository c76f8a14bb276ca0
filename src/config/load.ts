/**
 * Loading pipeline and mapping files: read, parse (YAML or JSON), validate with the one zod
 * schema per file kind, then resolve relative paths. Every problem becomes a ConfigError naming
 * the file, the dot-path and, when the parser knows it, the line.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { basename, dirname, extname, resolve } from 'node:path';
import { LineCounter, parseDocument } from 'yaml';
import type { z } from 'zod';
import { mappingFileSchema, type MappingFile } from '../mapping/schema.js';
import { ConfigError, type ConfigProblem } from '../errors/config-error.js';
import { closestMatch, editDistance } from '../errors/did-you-mean.js';
import type { SourceFileConfig } from '../sources/options.js';
import { pipelineSchema, type PipelineFile } from './pipeline.js';
import type { ResolvedOverlay } from '../sources/overlays.js';

export interface LoadedMapping {
  /** Absolute path. */
  file: string;
  mapping: MappingFile;
  /** sha256 (hex) of the file's text. */
  hash: string;
}

export interface ResolvedSource extends SourceFileConfig {
  /** Absolute path of the roster file. */
  file: string;
  format: 'csv' | 'xlsx';
  /** `source.overlays`, in order, paths absolute (none: an empty list). */
  overlays: ResolvedOverlay[];
}

export interface ResolvedPipeline {
  /** `name:` from the file, else the file name without extension. */
  name: string;
  /** Absolute path of the pipeline file. */
  file: string;
  /** Directory of the pipeline file; relative paths inside it resolve from here. */
  dir: string;
  /** sha256 (hex) of the pipeline file's text. */
  hash: string;
  /** The validated file with defaults applied (paths as written). */
  config: PipelineFile;
  source: ResolvedSource;
  /** Absolute path of the mapping file. */
  mappingFile: string;
  mapping: MappingFile;
  /** sha256 (hex) of the mapping file's text. */
  mappingHash: string;
}

export function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

function readText(file: string, what: string, pathInParent?: { file: string; path: string }): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const reason = code === 'ENOENT' ? 'not found' : code === 'EISDIR' ? 'is a directory' : `cannot be read (${code ?? 'error'})`;
    if (pathInParent) {
      throw new ConfigError(pathInParent.file, [{ path: pathInParent.path, message: `${what} ${file} ${reason}` }], {
        hint: 'Paths in a pipeline file are relative to the pipeline file itself.',
        cause: error,
      });
    }
    throw new ConfigError(file, [{ path: '', message: `${what} ${reason}` }], {
      hint: 'Check the path (relative paths start from the current directory); the samples live in pipelines/ and mappings/.',
      cause: error,
    });
  }
}

/**
 * Parses YAML (JSON is a subset) and validates it with `schema`. Problems name the dot-path and
 * line; unknown keys are named one by one.
 */
export function parseConfigText<S extends z.ZodType>(text: string, file: string, schema: S, what: string): z.output<S> {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, uniqueKeys: true, prettyErrors: true });
  if (doc.errors.length) {
    throw new ConfigError(
      file,
      doc.errors.slice(0, 10).map((e) => {
        const pos = e.linePos?.[0];
        return { path: '', message: `${pos ? `line ${pos.line}, column ${pos.col}: ` : ''}not valid YAML or JSON: ${firstLine(e.message)}` };
      }),
      { hint: `Fix the syntax of this ${what}; a YAML linter or the JSON Schema in your editor helps.` },
    );
  }
  const value: unknown = doc.toJS();
  if (value === null || value === undefined) {
    throw new ConfigError(file, [{ path: '', message: `the ${what} is empty` }], {
      hint: `See docs/mapping.md and the samples under pipelines/ and mappings/ for a working ${what}.`,
    });
  }
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const lineOf = (path: (string | number)[]): string => {
    const node = doc.getIn(path, true) as { range?: [number, number, number] } | undefined;
    if (!node || typeof node !== 'object' || !node.range) return '';
    return ` (line ${lineCounter.linePos(node.range[0]).line})`;
  };
  const problems: ConfigProblem[] = [];
  for (const issue of result.error.issues) {
    const path = issue.path.filter((p): p is string | number => typeof p !== 'symbol');
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) {
        const suggestion = closestMatch(key, schemaKeysAt(schema, path).filter((known) => !(known in objectAt(value, path))));
        problems.push({ path: [...path, key].join('.'), message: `unknown key "${key}"${lineOf([...path, key])}${suggestion ? `; did you mean "${suggestion}"?` : ''}` });
      }
      continue;
    }
    const message = issue.code === 'invalid_union' ? describeUnion(schema, path, (value as Record<string, unknown>) ?? {}) : describeIssue(issue);
    problems.push({ path: path.join('.'), message: `${message}${lineOf(path)}` });
  }
  throw new ConfigError(file, problems.slice(0, 20), {
    hint: `Fix the ${what}; its JSON Schema (${what === 'mapping file' ? 'mappings' : 'pipelines'}/schema.json) lists every key.`,
  });
}

/** The keys the schema accepts for the object at `path` (all alternatives of a union): the suggestions for an unknown key. */
function schemaKeysAt(schema: z.ZodType, path: readonly (string | number)[]): string[] {
  let nodes: z.core.$ZodType[] = [schema];
  for (const segment of [...path, undefined]) {
    const next: z.core.$ZodType[] = [];
    const keys: string[] = [];
    const visit = (node: z.core.$ZodType): void => {
      const def = node._zod.def as z.core.$ZodTypeDef & Record<string, unknown>;
      switch (def.type) {
        case 'optional':
        case 'nullable':
        case 'default':
        case 'prefault':
        case 'readonly':
        case 'catch':
          return visit(def.innerType as z.core.$ZodType);
        case 'pipe':
          return visit(def.in as z.core.$ZodType);
        case 'lazy':
          return visit((def.getter as () => z.core.$ZodType)());
        case 'union':
          return (def.options as z.core.$ZodType[]).forEach(visit);
        case 'object': {
          const shape = def.shape as Record<string, z.core.$ZodType>;
          if (segment === undefined) keys.push(...Object.keys(shape));
          else if (typeof segment === 'string' && shape[segment]) next.push(shape[segment]);
          return;
        }
        case 'record':
          if (segment !== undefined) next.push(def.valueType as z.core.$ZodType);
          return;
        case 'array':
          if (typeof segment === 'number') next.push(def.element as z.core.$ZodType);
          return;
        default:
          return;
      }
    };
    nodes.forEach(visit);
    if (segment === undefined) return [...new Set(keys)];
    nodes = next;
  }
  return [];
}

/** The alternatives of the union at `path`: each object form as its keys (`?` when optional). */
function unionFormsAt(schema: z.ZodType, path: readonly (string | number)[]): { keys: string[]; optional: Set<string> }[] {
  let nodes: z.core.$ZodType[] = [schema];
  const forms: { keys: string[]; optional: Set<string> }[] = [];
  const unwrap = (node: z.core.$ZodType): z.core.$ZodType => {
    const def = node._zod.def as z.core.$ZodTypeDef & Record<string, unknown>;
    if (['optional', 'nullable', 'default', 'prefault', 'readonly', 'catch'].includes(def.type)) return unwrap(def.innerType as z.core.$ZodType);
    if (def.type === 'pipe') return unwrap(def.in as z.core.$ZodType);
    if (def.type === 'lazy') return unwrap((def.getter as () => z.core.$ZodType)());
    return node;
  };
  for (const segment of path) {
    const next: z.core.$ZodType[] = [];
    for (const node of nodes.map(unwrap)) {
      const def = node._zod.def as z.core.$ZodTypeDef & Record<string, unknown>;
      const options = def.type === 'union' ? (def.options as z.core.$ZodType[]).map(unwrap) : [node];
      for (const option of options) {
        const d = option._zod.def as z.core.$ZodTypeDef & Record<string, unknown>;
        if (d.type === 'object' && typeof segment === 'string') {
          const child = (d.shape as Record<string, z.core.$ZodType>)[segment];
          if (child) next.push(child);
        } else if (d.type === 'record' && typeof segment === 'string') next.push(d.valueType as z.core.$ZodType);
        else if (d.type === 'array' && typeof segment === 'number') next.push(d.element as z.core.$ZodType);
      }
    }
    nodes = next;
  }
  for (const node of nodes.map(unwrap)) {
    const def = node._zod.def as z.core.$ZodTypeDef & Record<string, unknown>;
    if (def.type !== 'union') continue;
    for (const option of (def.options as z.core.$ZodType[]).map(unwrap)) {
      const d = option._zod.def as z.core.$ZodTypeDef & Record<string, unknown>;
      if (d.type !== 'object') continue;
      const shape = d.shape as Record<string, z.core.$ZodType>;
      const optional = new Set(Object.keys(shape).filter((key) => ['optional', 'default', 'prefault'].includes((shape[key]!._zod.def as z.core.$ZodTypeDef).type)));
      forms.push({ keys: Object.keys(shape), optional });
    }
  }
  return forms;
}

/**
 * A value that fits none of a union's forms: the forms, and the nearest one with the keys to
 * rename (`target: { id: 9 }` → `{ group_id, share? }`, "id" → "group_id").
 */
function describeUnion(schema: z.ZodType, path: readonly (string | number)[], value: unknown): string {
  const forms = unionFormsAt(schema, path);
  if (forms.length === 0) return describeIssue({ code: 'invalid_union' } as z.core.$ZodIssue);
  const show = (form: { keys: string[]; optional: Set<string> }): string => `{ ${form.keys.map((k) => (form.optional.has(k) ? `${k}?` : k)).join(', ')} }`;
  const given = Object.keys(objectAt(value, path));
  // A given key costs nothing when the form has it, 1 when it is a word of one of its keys
  // ("id" of "group_id"), else its distance to the closest key.
  const cost = (form: { keys: string[] }, key: string): number =>
    form.keys.includes(key) ? 0 : form.keys.some((k) => k.split('_').includes(key)) ? 1 : Math.min(...form.keys.map((k) => editDistance(key, k)));
  const scored = forms.map((form) => ({ form, score: given.reduce((sum, key) => sum + cost(form, key), 0) })).sort((a, b) => a.score - b.score);
  const nearest = given.length > 0 ? scored[0]!.form : undefined;
  const renames = nearest
    ? given.filter((key) => !nearest.keys.includes(key)).map((key) => {
        const to = nearest.keys.find((k) => k.split('_').includes(key)) ?? closestMatch(key, nearest.keys);
        return to ? `"${key}" → "${to}"` : `"${key}" is not a key of it`;
      })
    : [];
  return `does not match any accepted form: ${forms.map(show).join(' or ')}${nearest ? `; nearest: ${show(nearest)}${renames.length ? ` (${renames.join(', ')})` : ''}` : ''}`;
}

/** The object found at `path` in a parsed file (empty when there is none). */
function objectAt(value: unknown, path: readonly (string | number)[]): object {
  let node = value;
  for (const segment of path) node = node !== null && typeof node === 'object' ? (node as Record<string | number, unknown>)[segment] : undefined;
  return node !== null && typeof node === 'object' ? node : {};
}

function describeIssue(issue: z.core.$ZodIssue): string {
  if (issue.code === 'invalid_union') {
    return 'does not match any accepted form (see the JSON Schema for the alternatives)';
  }
  if (issue.code === 'invalid_type' && issue.message.includes('received undefined')) return 'is required';
  return issue.message;
}

function firstLine(text: string): string {
  return text.split('\n')[0] ?? text;
}

export function loadMapping(path: string): LoadedMapping {
  const file = resolve(path);
  const text = readText(file, 'mapping file');
  return { file, mapping: parseConfigText(text, file, mappingFileSchema, 'mapping file'), hash: sha256(text) };
}

const FORMAT_BY_EXTENSION: Record<string, 'csv' | 'xlsx'> = { '.csv': 'csv', '.tsv': 'csv', '.txt': 'csv', '.xlsx': 'xlsx' };

export function loadPipeline(path: string): ResolvedPipeline {
  const file = resolve(path);
  const dir = dirname(file);
  const text = readText(file, 'pipeline file');
  const config = parseConfigText(text, file, pipelineSchema, 'pipeline file');

  const problems: ConfigProblem[] = [];
  const sourceFile = resolve(dir, config.source.file);
  const format = config.source.format ?? FORMAT_BY_EXTENSION[extname(sourceFile).toLowerCase()];
  if (!format) {
    problems.push({ path: 'source.format', message: `cannot tell the format of "${config.source.file}" from its extension; set format: csv or format: xlsx` });
  }
  if (format === 'xlsx' && config.source.csv) problems.push({ path: 'source.csv', message: 'CSV options given for an xlsx source' });
  if (format === 'csv' && config.source.xlsx) problems.push({ path: 'source.xlsx', message: 'xlsx options given for a CSV source' });
  const overlays: ResolvedOverlay[] = [];
  (config.source.overlays ?? []).forEach((entry, i) => {
    const overlay = typeof entry === 'string' ? { file: entry } : entry;
    const overlayFile = resolve(dir, overlay.file);
    const overlayFormat = overlay.format ?? FORMAT_BY_EXTENSION[extname(overlayFile).toLowerCase()];
    const path = `source.overlays.${i}`;
    if (!overlayFormat) problems.push({ path, message: `cannot tell the format of "${overlay.file}" from its extension; write it as { file: ..., format: csv }` });
    else if (overlayFormat === 'xlsx' && overlay.csv) problems.push({ path: `${path}.csv`, message: 'CSV options given for an xlsx overlay' });
    else if (overlayFormat === 'csv' && overlay.xlsx) problems.push({ path: `${path}.xlsx`, message: 'xlsx options given for a CSV overlay' });
    else {
      // A CSV overlay named by its file alone is read in the encoding the pipeline declares
      // (src/sources/overlays.ts): guessing could refuse a short file or pick another code page.
      const declared = format === 'csv' ? config.source.csv?.encoding : undefined;
      const inherit = overlayFormat === 'csv' && overlay.csv === undefined && declared !== undefined && declared !== 'auto';
      overlays.push({ ...overlay, ...(inherit ? { sourceEncoding: declared } : {}), file: overlayFile, format: overlayFormat });
    }
  });
  const fallbackName = basename(file, extname(file));
  const name = config.name ?? fallbackName;
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(name)) {
    problems.push({ path: 'name', message: `the file name "${fallbackName}" cannot name the pipeline; add name: with letters, digits, dot, dash or underscore` });
  }
  if (problems.length || !format) {
    throw new ConfigError(file, problems, { hint: 'Fix the pipeline file; pipelines/schema.json lists every key.' });
  }

  const mappingFile = resolve(dir, config.mapping);
  const mappingText = readText(mappingFile, 'mapping file', { file, path: 'mapping' });
  const mapping = parseConfigText(mappingText, mappingFile, mappingFileSchema, 'mapping file');
  return {
    name,
    file,
    dir,
    hash: sha256(text),
    config,
    source: { ...withoutOverlays(config.source), file: sourceFile, format, overlays },
    mappingFile,
    mapping,
    mappingHash: sha256(mappingText),
  };
}

function withoutOverlays(source: PipelineFile['source']): SourceFileConfig {
  const { overlays: _overlays, ...file } = source;
  return file;
}
