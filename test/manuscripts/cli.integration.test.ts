/** `rostersync manuscript upload` and `rostersync journals`, run in-process against the emulator. */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { UploadResponse, RecommendJournalsResponse } from '../../src/client/index.js';
import { parseAuthorFlag } from '../../src/cli/commands/manuscript.js';
import type { RunningEmulator } from '../../src/emulator/server.js';
import { emulatorEnv, runCli } from '../support/cli.js';
import { API_KEY, CARDIOLOGY, defaultFixture, emulatorWith } from './helpers.js';

let emulator: RunningEmulator;
beforeAll(async () => {
  emulator = await emulatorWith();
});
afterAll(() => emulator.close());

const fixturesDir = fileURLToPath(new URL('../fixtures/manuscripts/', import.meta.url));

function run(args: string[], env: Record<string, string> = {}) {
  return runCli(args, { env: emulatorEnv(emulator, env), cwd: fixturesDir });
}

const upload = (originId: string, extra: string[] = []) => [
  'manuscript', 'upload', '--folder', 'JCARD', '--origin-id', originId, '--title', CARDIOLOGY.title, '--abstract', CARDIOLOGY.abstract, ...extra,
];

describe('rostersync manuscript upload', () => {
  it('sends every field and prints the candidates as JSON', async () => {
    const result = await run(
      upload('CLI-1', [
        '--author', 'Ada Lovelace|University of Oxford, Oxford||ada@example.org',
        '--author', 'Bob Builder|||',
        '--authors-count', '3',
        '--file', 'manuscript.docx',
        '--min-h-index', '5',
        '--max-articles-count', '20',
        '--json',
      ]),
    );
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const body = JSON.parse(result.stdout) as UploadResponse;
    expect(body.origin_id).toBe('CLI-1');
    expect(body.debug_info.source_file).toBe('manuscript.docx');
    expect(body.candidates!.every((c) => c.hIndex >= 5 && c.articlesCount <= 20)).toBe(true);
  });

  it('prints a table with name, score, h-index, conflicts and groups', async () => {
    const json = JSON.parse((await run(upload('CLI-2', ['--json']))).stdout) as UploadResponse;
    const table = await run(upload('CLI-2'));
    expect(table.code).toBe(0);
    const lines = table.stdout.split('\n');
    expect(lines.find((l) => l.startsWith('#'))).toMatch(/name\s+score\s+h-index\s+conflicts\s+groups/);
    const top = json.candidates![0]!;
    expect(table.stdout).toContain(top.name);
    expect(table.stdout).toContain(top.score.toFixed(3));
    const member = json.candidates!.find((c) => c.authors_groups.length > 0)!;
    expect(table.stdout).toContain(`${member.authors_groups[0]!.group_id}:${member.authors_groups[0]!.client_id}`);
    expect(table.stdout).toContain('authors groups: highlight');
  });

  it('--exclude-candidates says no candidates were computed', async () => {
    const result = await run(upload('CLI-3', ['--exclude-candidates']));
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('not computed');
  });

  it('reads authors from --authors-file and names the bad entry', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rostersync-authors-'));
    const good = join(dir, 'good.json');
    writeFileSync(good, JSON.stringify([{ name: 'Ada Lovelace', email: 'ada@example.org' }]));
    const ok = await run(upload('CLI-4', ['--authors-file', good, '--json']));
    expect(ok.code).toBe(0);
    expect((JSON.parse(ok.stdout) as UploadResponse).debug_info.authors_info.authors_count).toBe(1);
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, JSON.stringify([{ name: 'A' }, { nam: 'typo' }]));
    const refused = await run(upload('CLI-5', ['--authors-file', bad]));
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('1');
    expect(refused.stderr).toContain('bad.json');
  });

  it.each([
    ['Name|Aff|0000-0002-1825-0097|a@b.org', { name: 'Name', affiliation: 'Aff', orcid: '0000-0002-1825-0097', email: 'a@b.org' }],
    ['Only Name', { name: 'Only Name' }],
    [' Spaced | | | x@y.org ', { name: 'Spaced', email: 'x@y.org' }],
  ])('--author %j', (flag, expected) => {
    expect(parseAuthorFlag(flag)).toEqual(expected);
  });
  it.each(['|Aff', 'a|b|c|d|e'])('--author %j is refused', (flag) => {
    expect(() => parseAuthorFlag(flag)).toThrow(/--author/);
  });

  it('a file that is neither PDF nor DOCX is refused before anything is sent', async () => {
    const result = await run(upload('CLI-6', ['--file', 'generate.ts']));
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('generate.ts');
  });

  it('a plan-feature refusal exits with 4', async () => {
    const restricted = await emulatorWith((org) => (org.plan_features.referee_finder = false));
    try {
      const result = await run(upload('CLI-7'), { SERVICE_BASE_URL: restricted.url });
      expect(result.code).toBe(4);
      expect(result.stderr).not.toContain(API_KEY);
    } finally {
      await restricted.close();
    }
  });
});

describe('rostersync journals', () => {
  it('prints the recommendations as a table or JSON, for both corpora', async () => {
    await run(upload('CLI-J'));
    const json = JSON.parse((await run(['journals', 'CLI-J', '--json'])).stdout) as RecommendJournalsResponse;
    expect(json.recommended_journals.length).toBeGreaterThan(0);
    const table = await run(['journals', 'CLI-J']);
    expect(table.code).toBe(0);
    expect(table.stdout).toContain(json.recommended_journals[0]!.title);
    const org = JSON.parse((await run(['journals', 'CLI-J', '--corpus', 'org_journals', '--json'])).stdout) as RecommendJournalsResponse;
    const orgJournalIds = defaultFixture().orgs[0]!.journal_ids;
    expect(org.recommended_journals.map((j) => j.id)).toEqual(json.recommended_journals.filter((j) => orgJournalIds.includes(j.id)).map((j) => j.id));
  });

  it('an unknown origin_id exits non-zero with the 404 explained', async () => {
    const result = await run(['journals', 'NEVER']);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('404');
  });
});
