/**
 * Masked means masked: rosters whose every personal cell (names, emails, ORCID iDs, free text, a
 * column no field maps, an option label the service lacks) carries a marker go through every
 * command that masks (`plan --mask`, with `--json` too, and `revert --mask`) and every alert kind (failure, refused, rejects, drift,
 * success; webhook and e-mail), in the situations that quote people: an identity-change guard's
 * examples, an uncertain encoding's evidence, rejected rows. Every byte written where masking or an
 * alert applies (stdout, stderr, the report folder, the job summary, the alert bodies) is searched
 * for every marker.
 */
import { mkdtemp, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import iconv from 'iconv-lite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningEmulator } from '../../src/emulator/server.js';
import { startHttpReceiver, startSmtpReceiver, type HttpReceiver, type SmtpReceiver } from '../notify/receivers.js';
import { cli, emulator } from '../support/project.js';

/** An ORCID iD with its ISO 7064 11,2 check digit. */
function orcid(n: number): string {
  const digits = `000000021825${String(1000 + n).padStart(3, '0')}`.slice(0, 15);
  let total = 0;
  for (const digit of digits) total = (total + Number(digit)) * 2;
  const check = (12 - (total % 11)) % 11;
  const all = `${digits}${check === 10 ? 'X' : String(check)}`;
  return all.match(/.{4}/g)!.join('-');
}

interface Row {
  id: string;
  name: string;
  email: string;
  orcid: string;
  level: string;
  areas: string;
  notes: string;
  private: string;
}

const person = (n: number, overrides: Partial<Row> = {}): Row => ({
  id: `p${n}`,
  name: `Mkqgiven${n} Mkqfamily${n}`,
  email: `mkqmail${n}@example.org`,
  orcid: orcid(n),
  level: 'Senior',
  areas: 'Oncology',
  notes: `mkqnote ${n}, prefers mail`,
  private: `mkqprivate ${n}`,
  ...overrides,
});

const HEADER = 'ID,Full name,Email,ORCID,Level,Areas,Comments,Private';
const csv = (rows: Row[]) =>
  `${[HEADER, ...rows.map((r) => [r.id, r.name, r.email, r.orcid, r.level, r.areas, r.notes, r.private].map((v) => (/[",]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v)).join(','))].join('\n')}\n`;

const MAPPING = `client_id: { column: ID }
fields:
  name: { column: Full name }
  emails: { column: Email, split: ";", transforms: [trim, lower] }
  orcids: { column: ORCID, transforms: [orcid] }
custom_fields:
  Expertise level: { column: Level }
  Subject areas: { column: Areas, split: ";" }
  Notes: { column: Comments }
`;

const ROWS = 12;
/** An ORCID iD whose check digit is wrong: a rejected row's value. */
const BAD_ORCID = orcid(ROWS + 3).replace(/.$/, (digit) => (digit === '0' ? '1' : '0'));
const ORCIDS = [...Array.from({ length: ROWS + 3 }, (_, i) => orcid(i + 1)), BAD_ORCID];

/** Every marker found in `text`. */
function markers(text: string): string[] {
  const found = new Set<string>();
  for (const match of text.matchAll(/mkq\w*/gi)) found.add(match[0]);
  for (const id of ORCIDS) if (text.includes(id) || text.includes(id.replaceAll('-', ''))) found.add(id);
  return [...found];
}

async function filesUnder(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) if (entry.isFile()) out.push(join(entry.parentPath, entry.name));
  return out;
}

let emu: RunningEmulator;
let hook: HttpReceiver;
let smtp: SmtpReceiver;
let dir: string;
let runs = 0;
beforeAll(async () => {
  [emu, hook, smtp] = await Promise.all([emulator(), startHttpReceiver(), startSmtpReceiver()]);
  dir = await mkdtemp(join(tmpdir(), 'rostersync-mask-'));
  await writeFile(join(dir, 'mapping.yaml'), MAPPING);
});
afterAll(async () => {
  await Promise.all([emu.close(), hook.close(), smtp.close()]);
});

async function pipeline(options: { format?: string; encoding?: string } = {}): Promise<string> {
  const path = join(dir, 'pipeline.yaml');
  await writeFile(
    path,
    [
      'source: { file: roster.csv }',
      'mapping: mapping.yaml',
      'target:',
      '  group: { name: Mask test group, owner_team: Editorial Office }',
      'policy:',
      '  mode: mirror',
      '  max_rps: 500',
      '  drift_sample: 12',
      '  guards: { max_deletes: 50, max_delete_percent: 50, max_identity_changes: 2 }',
      'notify:',
      '  on: [failure, refused, rejects, drift, success]',
      '  webhook:',
      '    url_env: TEST_WEBHOOK_URL',
      `    format: ${options.format ?? 'json'}`,
      '  email:',
      `    smtp: { host: 127.0.0.1, port: ${smtp.port}, user: rostersync, password_env: TEST_SMTP_PASSWORD, allow_plaintext: true }`,
      '    from: rostersync@example.org',
      '    to: [office@example.org]',
      '',
    ].join('\n'),
  );
  return path;
}

/** Runs a command; returns every byte it wrote where masking applies, and its exit code. */
async function run(argv: string[], apiKey?: string): Promise<{ code: number; written: Record<string, string> }> {
  const reportDir = join(dir, `run-${++runs}`);
  const summary = join(dir, `summary-${runs}.md`);
  await writeFile(summary, '');
  const result = await cli(emu, dir, [...argv, '--report-dir', reportDir], {
    TEST_WEBHOOK_URL: hook.url,
    TEST_SMTP_PASSWORD: 'smtp-password-1234',
    GITHUB_STEP_SUMMARY: summary,
    ...(apiKey ? { SERVICE_API_KEY: apiKey } : {}),
  });
  const written: Record<string, string> = { stdout: result.stdout, stderr: result.stderr, 'job summary': await readFile(summary, 'utf8') };
  const exists = await stat(reportDir).then(
    () => true,
    () => false,
  );
  for (const file of exists ? await filesUnder(reportDir) : []) written[file.slice(dir.length + 1)] = await readFile(file, 'utf8');
  return { code: result.code, written };
}

/** The alert bodies received since `from`. */
function alertsSince(from: { posts: number; mails: number }): Record<string, string> {
  return {
    ...Object.fromEntries(hook.posts.slice(from.posts).map((post, i) => [`webhook ${i}`, post.body])),
    ...Object.fromEntries(smtp.mails.slice(from.mails).map((mail, i) => [`email ${i}`, mail.raw])),
  };
}

const mark = () => ({ posts: hook.posts.length, mails: smtp.mails.length });

function leaks(written: Record<string, string>): Record<string, string[]> {
  return Object.fromEntries(Object.entries(written).flatMap(([where, text]) => (markers(text).length > 0 ? [[where, markers(text)]] : [])));
}

describe('masked means masked', () => {
  const good = Array.from({ length: ROWS }, (_, i) => person(i + 1));
  const rejected = [person(ROWS + 1, { email: 'mkqnot-an-email' }), person(ROWS + 2, { areas: 'Mkqarea' }), person(ROWS + 3, { orcid: BAD_ORCID })];

  it('every plan --mask and every alert, across rejects, drift, success, refused and failure', async () => {
    const seen: Record<string, string[]>[] = [];
    const check = (label: string, written: Record<string, string>) => seen.push(Object.fromEntries(Object.entries(leaks(written)).map(([where, found]) => [`${label}: ${where}`, found])));

    // rejects (and the first sync): its alerts; then plan --mask of the same roster.
    await pipeline();
    await writeFile(join(dir, 'roster.csv'), csv([...good, ...rejected]));
    let from = mark();
    const first = await run(['sync', 'pipeline.yaml', '--create-group']);
    expect(first.code).toBe(2);
    check('rejects alert', alertsSince(from));
    check('plan --mask with rejected rows', (await run(['plan', 'pipeline.yaml', '--mask'])).written);

    // a changed value planned: the diff, masked.
    await writeFile(join(dir, 'roster.csv'), csv([person(1, { notes: 'mkqchanged note' }), ...good.slice(1)]));
    check('plan --mask with changes', (await run(['plan', 'pipeline.yaml', '--mask'])).written);
    // revert, the other command that masks: the plan that undoes the first sync.
    const revert = await run(['revert', 'pipeline.yaml', 'last', '--mask']);
    expect(revert.written.stdout).toMatch(/\(masked\)/);
    check('revert --mask', revert.written);

    // drift: a record deleted in the service; success after it, in each webhook format.
    for (const format of ['slack', 'teams', 'json']) {
      await pipeline({ format });
      const group = [...emu.world.orgs[0]!.groups.values()].find((g) => g.name === 'Mask test group')!;
      const victim = [...group.records.keys()].find((id) => id !== 'p1')!;
      expect((await fetch(`${emu.url}/_emulator/ui/groups/${group.id}/records/${victim}`, { method: 'DELETE' })).status).toBe(200);
      from = mark();
      await run(['sync', 'pipeline.yaml']);
      check(`drift alert (${format})`, alertsSince(from));
    }

    // refused: the ids reused for other people (names changed, no email or ORCID kept).
    const others = good.map((row, i) => (i < 6 ? { ...row, name: `Mkqwrong${i} Mkqhuman${i}`, email: `mkqother${i}@example.org`, orcid: '' } : row));
    await writeFile(join(dir, 'roster.csv'), csv(others));
    const refusedPlan = await run(['plan', 'pipeline.yaml', '--mask']);
    expect(refusedPlan.code).toBe(3);
    check('plan --mask refused by the identity guard', refusedPlan.written);
    check('plan --mask --json refused by the identity guard', (await run(['plan', 'pipeline.yaml', '--mask', '--json'])).written);
    from = mark();
    expect((await run(['sync', 'pipeline.yaml'])).code).toBe(3);
    check('refused alert', alertsSince(from));

    // failure: a key the service refuses.
    await writeFile(join(dir, 'roster.csv'), csv(good));
    from = mark();
    expect((await run(['sync', 'pipeline.yaml'], 'wrong-key-000000')).code).toBe(4);
    check('failure alert', alertsSince(from));

    // an encoding the bytes do not decide: the refusal's evidence, masked; its failure alert.
    const accented = [
      person(1, { name: 'Mkqjosé Mkqmüller', notes: '“Mkqprefers email”' }),
      person(2, { name: 'Mkqanna Mkqgroß', notes: 'Mkqbudget 100 €' }),
      person(3, { name: 'Mkqzoë Mkqo’brien', notes: '‘mkqquoted’' }),
    ];
    await writeFile(join(dir, 'roster.csv'), iconv.encode(csv(accented), 'windows-1252'));
    const encodingPlan = await run(['plan', 'pipeline.yaml', '--mask']);
    expect(encodingPlan.code).toBe(1);
    expect(encodingPlan.written.stderr).toMatch(/do not say for sure/);
    check('plan --mask refused for its encoding', encodingPlan.written);
    from = mark();
    expect((await run(['sync', 'pipeline.yaml'])).code).toBe(1);
    check('failure alert for the encoding', alertsSince(from));

    // Every alert kind was sent, by both channels.
    const kinds = new Set(hook.posts.map((post) => post.body.match(/"events":\[([^\]]*)\]/)?.[1]).filter(Boolean).join(',').split(','));
    expect(hook.posts.length).toBeGreaterThanOrEqual(7);
    expect(smtp.mails.length).toBe(hook.posts.length);
    expect([...kinds].sort()).toEqual(['"drift"', '"failure"', '"refused"', '"rejects"', '"success"']);
    expect(Object.assign({}, ...seen)).toEqual({});
  }, 120_000);
});
