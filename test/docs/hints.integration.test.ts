/**
 * Every hint is true: the commands, flags, keys and values that the source's messages and hints,
 * the files `rostersync init` writes, and the docs name exist and are accepted. The commands and
 * their flags come from the CLI itself (its yargs definitions, through `--help`), the keys and
 * values from the committed JSON Schemas; so renaming a flag or a key without its hints fails here.
 */
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { beforeAll, describe, expect, it } from 'vitest';
import { JSON_SCHEMA_FILES } from '../../src/config/json-schemas.js';
import { editDistance } from '../../src/errors/did-you-mean.js';
import { ROOT, runCli, writeFieldsFile } from '../validate/helpers.js';

// ---- what the tool accepts -------------------------------------------------------------------

interface Cli {
  /** "sync", "state set-group": the flags each accepts (the global ones included). */
  commands: Map<string, Set<string>>;
  /** Commands that take a subcommand ("state", "group", ...). */
  parents: Set<string>;
  allFlags: Set<string>;
}

const COMMAND_LINE = /^ {2}rostersync ([a-z][a-z-]*)(?: ([a-z][a-z-]*))?/gm;
const OPTION_LINE = /^ {2}(?:-\w, | {4})--([a-z][a-z0-9-]*)/gm;

/** `rostersync … --help`: yargs prints help with console.log, which is read here for the run. */
async function help(argv: string[]): Promise<string> {
  const printed: string[] = [];
  const log = console.log;
  console.log = (...parts: unknown[]) => printed.push(parts.join(' '));
  try {
    const run = await runCli([...argv, '--help']);
    return `${run.stdout}\n${printed.join('\n')}`;
  } finally {
    console.log = log;
  }
}

async function readCli(): Promise<Cli> {
  const commands = new Map<string, Set<string>>();
  const parents = new Set<string>();
  const top = await help([]);
  const global = new Set([...top.matchAll(OPTION_LINE)].map((m) => m[1]!));
  const optionsOf = async (argv: string[]): Promise<Set<string>> => {
    const text = await help(argv);
    const flags = new Set(global);
    for (const m of text.matchAll(OPTION_LINE)) {
      flags.add(m[1]!);
    }
    return flags;
  };
  for (const name of new Set([...top.matchAll(COMMAND_LINE)].map((m) => m[1]!))) {
    const text = await help([name]);
    const subs = [...text.matchAll(COMMAND_LINE)].filter((m) => m[1] === name && m[2] !== undefined).map((m) => m[2]!);
    if (subs.length > 0 && /<(command|action)>/.test(top.split('\n').find((l) => l.startsWith(`  rostersync ${name} `)) ?? '')) {
      parents.add(name);
      for (const sub of new Set(subs)) commands.set(`${name} ${sub}`, await optionsOf([name, sub]));
    }
    commands.set(name, await optionsOf([name]));
  }
  // yargs takes --no-<flag> for a boolean; the help prints only --<flag>.
  for (const flags of commands.values()) for (const flag of [...flags]) flags.add(`no-${flag}`);
  return { commands, parents, allFlags: new Set([...commands.values()].flatMap((s) => [...s])) };
}

type JsonSchema = { properties?: Record<string, JsonSchema>; additionalProperties?: boolean | JsonSchema; items?: JsonSchema; anyOf?: JsonSchema[]; oneOf?: JsonSchema[]; allOf?: JsonSchema[]; enum?: unknown[]; const?: unknown; $ref?: string; $defs?: Record<string, JsonSchema> };

interface Schemas {
  roots: JsonSchema[];
  /** Every property name of either schema, with its schemas (for enum values). */
  properties: Map<string, JsonSchema[]>;
}

function readSchemas(): Schemas {
  const roots = Object.values(JSON_SCHEMA_FILES).map((file) => JSON.parse(readFileSync(join(ROOT, file), 'utf8')) as JsonSchema);
  const properties = new Map<string, JsonSchema[]>();
  const seen = new Set<JsonSchema>();
  const walk = (node: JsonSchema | boolean | undefined, root: JsonSchema): void => {
    if (node === undefined || typeof node === 'boolean' || seen.has(node)) return;
    seen.add(node);
    for (const [key, child] of Object.entries(node.properties ?? {})) {
      properties.set(key, [...(properties.get(key) ?? []), deref(child, root)]);
      walk(child, root);
    }
    for (const child of [...(node.anyOf ?? []), ...(node.oneOf ?? []), ...(node.allOf ?? []), node.items, node.additionalProperties, ...Object.values(node.$defs ?? {})]) walk(child as JsonSchema | undefined, root);
    if (node.$ref) walk(deref(node, root), root);
  };
  for (const root of roots) walk(root, root);
  return { roots, properties };
}

function deref(node: JsonSchema, root: JsonSchema): JsonSchema {
  if (!node.$ref) return node;
  const name = node.$ref.replace(/^#\/\$defs\//, '');
  return root.$defs?.[name] ?? node;
}

/** The schemas a dotted key path reaches from `node` (through unions, records and lists). */
function resolve(node: JsonSchema, root: JsonSchema, path: string[]): JsonSchema[] {
  const here = deref(node, root);
  const alternatives = [...(here.anyOf ?? []), ...(here.oneOf ?? []), ...(here.allOf ?? [])];
  if (alternatives.length > 0) return alternatives.flatMap((a) => resolve(a, root, path));
  if (path.length === 0) return [here];
  const [head, ...rest] = path;
  const child = here.properties?.[head!] ?? (typeof here.additionalProperties === 'object' ? here.additionalProperties : undefined) ?? here.items;
  return child ? resolve(child, root, rest) : [];
}

function enumsOf(node: JsonSchema, root: JsonSchema): unknown[] | undefined {
  const here = deref(node, root);
  if (here.enum) return here.enum;
  if (here.const !== undefined) return [here.const];
  const alternatives = [...(here.anyOf ?? []), ...(here.oneOf ?? [])];
  if (alternatives.length === 0) return undefined;
  const parts = alternatives.map((a) => enumsOf(a, root));
  return parts.every((p) => p !== undefined) ? parts.flat() : undefined;
}

// ---- what the texts name ---------------------------------------------------------------------

interface Named {
  where: string;
  text: string;
  /** The text around it (a doc's line and the one before): another program's flags are not ours. */
  context?: string;
}

const FILE_EXTENSIONS = /\.(ya?ml|json|csv|tsv|md|html|ts|js|xlsx|txt|sql|sh|db|sqlite)$/;

/** Strings of the sources, as a reader sees them (a template's `${…}` reads as `X`). */
function sourceStrings(): Named[] {
  const out: Named[] = [];
  // The report's stylesheet and script, and the emulator's answers about its own HTTP bodies, name no option.
  const files = readdirSync(join(ROOT, 'src'), { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts') && f !== 'report/assets.ts' && !f.startsWith('emulator/'));
  for (const file of files) {
    const path = join(ROOT, 'src', file);
    const source = ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.Latest, true);
    const visit = (node: ts.Node): void => {
      if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) {
        out.push({ where: `src/${file}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1}`, text: node.text });
        return;
      }
      if (ts.isTemplateExpression(node)) {
        const text = [node.head.text, ...node.templateSpans.map((s) => `X${s.literal.text}`)].join('');
        out.push({ where: `src/${file}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1}`, text });
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return out;
}

/** Inline code and code blocks of README.md and docs/. */
function docTexts(): Named[] {
  const out: Named[] = [];
  for (const file of ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)]) {
    const text = readFileSync(join(ROOT, file), 'utf8');
    const lines = text.split('\n');
    let fence: string | undefined;
    lines.forEach((line, i) => {
      if (/^```/.test(line)) {
        fence = fence === undefined ? line.slice(3).trim() || 'text' : undefined;
        return;
      }
      const where = `${file}:${i + 1}`;
      if (fence !== undefined) {
        if (['sh', 'bash', 'yaml', 'yml', 'text', 'console'].includes(fence)) out.push({ where, text: fence === 'yaml' || fence === 'yml' ? line : `\`${line}\`` });
        return;
      }
      for (const m of line.matchAll(/`([^`]+)`/g)) out.push({ where, text: `\`${m[1]}\``, context: `${lines[i - 1] ?? ''}\n${line}` });
    });
  }
  return out;
}

interface Problem {
  where: string;
  what: string;
}

interface Checked {
  problems: Problem[];
  names: number;
  texts: number;
}

/**
 * Checks one text: each `rostersync <command> … --flag` (command and flags), each other `--flag`
 * in code, each dotted key path under a key of the pipeline or mapping file, and each YAML key
 * (with its value when the key takes a fixed set) written in code or braces.
 */
function check(named: Named[], cli: Cli, schemas: Schemas, options: { yamlKeys?: boolean; yamlLines?: boolean } = {}): Checked {
  const problems: Problem[] = [];
  let names = 0;
  let texts = 0;
  const topKeys = new Set(schemas.roots.flatMap((r) => Object.keys(r.properties ?? {})));
  for (const { where, text, context } of named) {
    const otherProgram = OTHER_PROGRAM.test(context ?? text);
    let counted = false;
    const count = (): void => {
      names++;
      if (!counted) texts++;
      counted = true;
    };
    // Code: backtick segments, a line that is a command, or braces.
    const code = [...text.matchAll(/`([^`]*)`/g)].map((m) => m[1]!);
    if (/^(\$ )?(npx (--no-install )?)?rostersync /.test(text)) code.push(text);
    for (const segment of code) {
      for (const m of segment.matchAll(/(?:^|[\s($])(?:npx (?:--no-install )?)?rostersync ([a-z][a-z-]*)(?: ([a-z][a-z-]*))?([^|;&]*)/g)) {
        const [, name, second, tail] = m;
        if (!cli.commands.has(name!)) {
          // Prose ("rostersync does not follow redirects") names no command; a near miss is a typo.
          if (![...cli.commands.keys()].some((c) => !c.includes(' ') && editDistance(c, name!) <= 2)) continue;
          count();
          problems.push({ where, what: `command "rostersync ${name}" does not exist` });
          continue;
        }
        count();
        let command = name!;
        if (cli.parents.has(name!) && second !== undefined) {
          count();
          if (!cli.commands.has(`${name} ${second}`)) {
            problems.push({ where, what: `command "rostersync ${name} ${second}" does not exist` });
            continue;
          }
          command = `${name} ${second}`;
        }
        for (const flag of (tail ?? '').matchAll(/(?:^|\s)--([a-z][a-z0-9-]*)/g)) {
          count();
          if (!cli.commands.get(command)!.has(flag[1]!)) problems.push({ where, what: `"rostersync ${command}" has no flag --${flag[1]}` });
        }
      }
    }
    // Other flags, in code or not ("Pass --force to replace it"), outside the command lines checked above.
    if (!otherProgram) {
      const rest = text.replace(/(?:npx (?:--no-install )?)?rostersync [a-z][a-z-]*[^`|;&]*/g, '');
      for (const flag of rest.matchAll(/(?:^|[\s(`])--([a-z][a-z0-9-]*)/g)) {
        if (NOT_OURS.has(flag[1]!)) continue;
        count();
        if (!cli.allFlags.has(flag[1]!)) problems.push({ where, what: `no command has the flag --${flag[1]}` });
      }
    }
    // Dotted key paths: policy.rejects, source.csv.header_row, target.group.owner_team, csv.header_row.
    for (const m of text.matchAll(/(?<![\w./-])([a-z_]+(?:\.[a-z_]+)+)(?![\w/-]|\.\w)/g)) {
      const path = m[1]!;
      if (FILE_EXTENSIONS.test(path) || /(^|\.)example(\.|$)/.test(path) || text.includes(`${path}: unknown key`)) continue;
      const segments = path.split('.');
      const fromRoot = topKeys.has(segments[0]!);
      const nested = !fromRoot && schemas.properties.has(segments[0]!) && schemas.properties.get(segments[0]!)!.some((s) => s.properties !== undefined);
      if (!fromRoot && !nested) continue;
      count();
      const found = fromRoot
        ? schemas.roots.some((root) => resolve(root, root, segments).length > 0)
        : schemas.roots.some((root) => schemas.properties.get(segments[0]!)!.some((s) => resolve(s, root, segments.slice(1)).length > 0));
      if (!found) problems.push({ where, what: `no key ${path} in the pipeline or mapping schema` });
    }
    // YAML keys in code or braces: `group_id: 42`, (target: { group_id: <id> }), `mode: mirror`.
    const yamlish = !options.yamlKeys ? [] : [...code, ...(/pipeline|mapping/.test(text) ? [...text.matchAll(/\{[^{}]*\}/g)].map((m) => m[0]) : [])];
    for (const segment of yamlish) {
      for (const m of segment.matchAll(/(?:^|[\s{,(`])([a-z][a-z_]*): ?([A-Za-z_][\w-]*)?/g)) {
        const [, key, value] = m;
        if (NOT_KEYS.has(key!)) continue;
        count();
        const schemasOfKey = schemas.properties.get(key!);
        if (!schemasOfKey) {
          problems.push({ where, what: `no key "${key}" in the pipeline or mapping schema` });
          continue;
        }
        const enums = schemasOfKey.map((s) => schemas.roots.map((root) => enumsOf(s, root)).find((e) => e !== undefined));
        if (value !== undefined && enums.every((e) => e !== undefined) && !enums.some((e) => e!.map(String).includes(value))) {
          problems.push({ where, what: `"${key}: ${value}": ${value} is not one of ${[...new Set(enums.flat())].join(', ')}` });
        }
      }
    }
  }
  return { problems, names, texts };
}

/** A line or span running another program: its flags are not ours. */
const OTHER_PROGRAM = /\b(kubectl|npm|npx tsx|node|node_exporter|unshare|docker|git|psql|curl|vitest|tsc)\b|\bbench\/|\bscripts\//;

/** Flags of other programs that the texts name (node, npm, vitest, docker, git, curl, psql, the shell). */
const NOT_OURS = new Set(['no-install', 'heap-growing-percent', 'trace-gc', 'single-threaded-gc', 'import', 'experimental-strip-types', 'no-warnings', 'enable-source-maps', 'max-old-space-size', 'expose-gc', 'project', 'save-exact', 'omit', 'rm', 'env-file', 'dry-run-npm', 'run', 'reporter', 'network', 'name', 'get-yargs-completions', 'silent', 'prefix', 'workspace', 'filter', 'config', 'ignore-scripts', 'no-save', 'build-arg', 'tag', 'target', 'volume', 'entrypoint', 'user', 'data-binary', 'fail', 'header', 'request', 'location', 'max-time', 'cpu-prof', 'heap-prof', 'inspect', 'watch', 'test', 'grep', 'exclude', 'include', 'help-all', 'max-semi-space-size', 'stack-size', 'input-type', 'eval', 'print', 'require', 'loader']);

/** Words written `word:` in texts that are no configuration key (URLs, headers, log fields, labels). */
const NOT_KEYS = new Set(['http', 'https', 'note', 'hint', 'fix', 'error', 'warning', 'e', 'g', 'i', 'file', 'line', 'row', 'column', 'value', 'sheet', 'msg', 'level', 'time', 'code', 'status', 'x', 'run', 'on', 'jobs', 'steps', 'uses', 'with', 'env', 'services', 'image', 'ports', 'command', 'volumes', 'environment', 'depends_on', 'healthcheck', 'test', 'interval', 'retries', 'schedule', 'cron', 'runs', 'inputs', 'outputs', 'description', 'required', 'default', 'node', 'shell', 'if', 'permissions', 'contents', 'name_or_id']);

// ---- the test ---------------------------------------------------------------------------------

let cli: Cli;
let schemas: Schemas;
const totals = { names: 0, texts: 0 };
beforeAll(async () => {
  cli = await readCli();
  schemas = readSchemas();
}, 60_000);

function expectNone(checked: Checked): void {
  totals.names += checked.names;
  totals.texts += checked.texts;
  const shown = checked.problems.map((p) => `${p.where}: ${p.what}`);
  expect(shown).toEqual([]);
}

describe('every hint is true', () => {
  it('reads the CLI: its commands and their flags', () => {
    expect(cli.commands.get('sync')).toContain('allow-deletes');
    expect(cli.commands.get('state set-group')).toBeDefined();
    expect(schemas.properties.has('group_id')).toBe(true);
  });

  it('the messages and hints of the sources', () => {
    expectNone(check(sourceStrings(), cli, schemas, { yamlKeys: true }));
  });

  it('the files init writes and what it prints', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rostersync-hints-'));
    const fields = writeFieldsFile(dir);
    const texts: Named[] = [];
    for (const [i, roster] of ['samples/reviewers.csv', 'test/fixtures/init/labelled/journal-board-assistant.csv', 'samples/editorial.xlsx'].entries()) {
      const pipeline = join(dir, `${i}.pipeline.yaml`);
      const mapping = join(dir, `${i}.mapping.yaml`);
      const run = await runCli(['init', roster, '--fields-file', fields, '--yes', '--pipeline', pipeline, '--mapping', mapping]);
      texts.push(...`${run.stdout}\n${run.stderr}`.split('\n').map((text) => ({ where: `init ${roster} (output)`, text })));
      for (const file of [pipeline, mapping]) {
        for (const line of readFileSync(file, 'utf8').split('\n')) {
          const comment = line.indexOf('#');
          if (comment >= 0) texts.push({ where: `init ${roster} (${relative(dir, file)})`, text: line.slice(comment + 1) });
        }
      }
    }
    expectNone(check(texts, cli, schemas, { yamlKeys: true }));
  });

  it('README.md and docs/', () => {
    expectNone(check(docTexts(), cli, schemas));
    console.log(`hints checked: ${totals.texts} texts naming ${totals.names} commands, flags, keys and values`);
  });
});
