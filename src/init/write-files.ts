/**
 * Renders the pipeline and mapping files `rostersync init` proposes, commented so a person can
 * read why each column went where, and writes them without overwriting (unless forced). Strings
 * are written JSON-quoted: valid YAML whatever characters a header holds.
 */
import { writeFileSync } from 'node:fs';
import { basename, dirname, extname, relative } from 'node:path';
import type { ColumnMatch, MatchResult } from './match.js';
import { detectedCsvOptions, type RosterSample } from './read-roster.js';

const q = (s: string): string => JSON.stringify(s);

function specLines(m: ColumnMatch, indent: string): string[] {
  const out: string[] = [];
  out.push(m.columns.length > 1 ? `${indent}columns: [${m.columns.map(q).join(', ')}]` : `${indent}column: ${q(m.columns[0]!)}`);
  if (m.split) out.push(`${indent}split: [${m.split.map(q).join(', ')}]`);
  if (m.transforms?.length) out.push(`${indent}transforms: [${m.transforms.join(', ')}]`);
  if (m.decimal) out.push(`${indent}decimal: ${q(m.decimal)}`);
  if (m.date_formats) out.push(`${indent}date_formats: [${m.date_formats.join(', ')}]`);
  if (m.values) {
    out.push(`${indent}values:`);
    for (const [from, to] of Object.entries(m.values)) out.push(`${indent}  ${q(from)}: ${q(to)}`);
  }
  return out;
}

function comment(m: ColumnMatch, indent: string): string {
  if (m.question !== undefined) {
    const others = m.alternatives?.length ? `, or put ${m.alternatives.map(q).join(' or ')} in its place` : '';
    return `${indent}# QUESTION, not taken: ${m.reason}, but ${m.question}. Uncomment the lines below if ${m.columns.map(q).join(' + ')} is right${others}.`;
  }
  return `${indent}# ${m.sure ? '' : 'GUESS, check: '}${m.reason}`;
}

/** A match's lines; a question's lines are written commented out: init does not answer it. */
function entry(m: ColumnMatch, indent: string, lines: string[]): string[] {
  return [comment(m, indent), ...(m.question !== undefined ? lines.map((l) => l.replace(/^(\s*)/, '$1# ')) : lines)];
}

export function renderMapping(roster: string, result: MatchResult): string {
  const out = [`# Written by \`rostersync init\` from ${roster}. Check every "GUESS" line, then run`, '# `rostersync validate` on the pipeline. The mapping language is described in docs/mapping.md.', 'version: 1', ''];
  const id = result.matches.find((m) => m.target.kind === 'client_id');
  const emails = result.matches.find((m) => m.target.kind === 'field' && m.target.field === 'emails');
  out.push('# The id that ties a row to its record on every run: it must not change when a person does.');
  if (id) out.push(...entry(id, '', ['client_id:', `  column: ${q(id.columns[0]!)}`]));
  else if (emails?.question !== undefined) out.push('# QUESTION, not taken: no id column found; the email column would do (a poor id: people change address), once you choose it below.', '# client_id:', `#   column: ${q(emails.columns[0]!)}`, '#   transforms: [trim, lower]');
  else out.push('# GUESS, check: no id column found; the email is a poor id (people change address).', 'client_id:', `  column: ${q(emails?.columns[0] ?? 'CHANGE ME')}`, '  transforms: [trim, lower]');
  out.push('', 'fields:');
  for (const field of ['name', 'emails', 'orcids', 'affiliations'] as const) {
    const m = result.matches.find((x) => x.target.kind === 'field' && x.target.field === field);
    if (m) out.push(...entry(m, '  ', [`  ${field}:`, ...specLines(m, '    ')]));
    else if (field === 'name') out.push('  # GUESS, check: no name column found', '  name:', '    column: "CHANGE ME"');
  }
  const custom = result.matches.filter((m) => m.target.kind === 'custom');
  const active = custom.filter((m) => m.question === undefined).length;
  out.push('', active ? 'custom_fields:' : custom.length ? 'custom_fields: {}   # drop the {} when you uncomment an entry below' : 'custom_fields: {}');
  for (const m of custom) {
    if (m.target.kind !== 'custom') continue;
    out.push(...entry(m, '  ', [`  ${q(m.target.field)}:`, ...specLines(m, '    ')]));
  }
  const skips = result.matches.filter((m) => m.target.kind === 'skip_if');
  if (skips.length) {
    out.push('', 'skip_rows:');
    for (const m of skips) if (m.target.kind === 'skip_if') out.push(comment(m, '  '), `  - { column: ${q(m.columns[0]!)}, equals: ${q(m.target.equals)} }`);
  }
  if (result.unmapped.length) {
    out.push('', '# Columns left out:');
    for (const u of result.unmapped) out.push(`#   ${u.column}: ${u.reason}`);
  }
  return `${out.join('\n')}\n`;
}

export interface PipelinePaths {
  pipeline: string;
  mapping: string;
  roster: string;
}

export function renderPipeline(paths: PipelinePaths, roster: RosterSample): string {
  const dir = dirname(paths.pipeline);
  const rel = (p: string): string => relative(dir, p).split('\\').join('/') || '.';
  const name = basename(paths.roster, extname(paths.roster));
  const out = [
    `# Written by \`rostersync init\` from ${basename(paths.roster)}. Paths are relative to this file.`,
    'version: 1',
    'source:',
    `  file: ${q(rel(paths.roster))}`,
  ];
  const { csv, xlsx } = roster.source;
  if (xlsx) {
    out.push('  xlsx:', `    sheet: ${typeof xlsx.sheet === 'string' ? q(xlsx.sheet) : xlsx.sheet}`);
    if (xlsx.header_row > 1) out.push(`    header_row: ${xlsx.header_row}   # the rows above are titles`);
  } else if (csv) {
    const detected = detectedCsvOptions(roster.notes, csv.encoding === 'auto' ? undefined : csv.encoding);
    if (detected.encoding || detected.delimiter || csv.header_row > 1) {
      out.push('  csv:   # as detected; `auto` would detect them again on every run');
      if (detected.encoding) out.push(`    encoding: ${detected.encoding}`);
      if (detected.delimiter) out.push(`    delimiter: ${q(detected.delimiter)}`);
      if (csv.header_row > 1) out.push(`    header_row: ${csv.header_row}   # the lines above are titles`);
    }
  }
  out.push(
    `mapping: ${q(rel(paths.mapping))}`,
    'target:',
    '  # A group to create on the first run (`rostersync sync --create-group`); or, for an existing one, replace `group:` with `group_id: <its id>`.',
    '  group:',
    `    name: ${q(name)}`,
    '    owner_team: "CHANGE ME"   # a team of your organization',
    'policy:',
    '  # upsert never deletes; mirror deletes records whose rows left the roster.',
    '  mode: upsert',
  );
  return `${out.join('\n')}\n`;
}

/** Writes a file; `wx` refuses to replace one that exists unless forced (checked by the caller first). */
export function writeNew(path: string, text: string, force: boolean): void {
  writeFileSync(path, text, { flag: force ? 'w' : 'wx', mode: 0o644 });
}
