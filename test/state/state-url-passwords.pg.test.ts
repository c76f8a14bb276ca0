/**
 * A password in a state URL, in the user info or the query (`?password=`, also percent-encoded),
 * is refused where it must not be written (the pipeline file, `webhook serve --store`), and never
 * printed: `state migrate`, `state show`, the `--json` error of an unreachable database.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { connectionStringFor, redactStateUrl } from '../../src/state/postgres/connect.js';
import { StateError } from '../../src/state/backend.js';
import { runCli } from '../support/cli.js';
import { postgresForFile } from '../support/postgres-server.js';
import { makeProject, people } from '../support/project.js';

const server = postgresForFile();
const SECRET = 'hunter2-secret';

describe('passwords in state URLs', () => {
  it('are redacted in every spelling pg reads', () => {
    for (const url of [
      `postgres://rs:${SECRET}@db.example.org/state`,
      `postgres://rs@db.example.org/state?password=${SECRET}`,
      `postgres://rs@db.example.org/state?sslmode=require&pass%77ord=${SECRET}`,
      `postgresql://rs@db.example.org/state?password=a&password=${SECRET}`,
    ]) {
      const shown = redactStateUrl(url);
      expect(shown, url).not.toContain(SECRET);
      expect(shown, url).toContain('db.example.org/state');
    }
    expect(redactStateUrl('postgres://rs@db.example.org/state?sslmode=require')).toBe('postgres://rs@db.example.org/state?sslmode=require');
  });

  it('are refused from a pipeline file or a flag, in the query as in the user info', () => {
    for (const url of [
      `postgres://rs:${SECRET}@db.example.org/state`,
      `postgres://rs@db.example.org/state?password=${SECRET}`,
      `postgres://rs@db.example.org/state?pass%77ord=${SECRET}`,
    ]) {
      let error: unknown;
      try {
        connectionStringFor(url, { origin: 'p.yaml: state', fromEnvironment: false }, {});
      } catch (caught) {
        error = caught;
      }
      expect(error, url).toBeInstanceOf(StateError);
      expect((error as Error).message, url).toContain('carries a password');
      expect((error as Error).message, url).not.toContain(SECRET);
    }
    // From the environment it is allowed, and PGPASSWORD does not replace it.
    const fromEnv = connectionStringFor(`postgres://rs@db.example.org/state?password=${SECRET}`, { origin: 'ROSTERSYNC_STATE_URL', fromEnvironment: true }, { PGPASSWORD: 'other' });
    expect(new URL(fromEnv).password).toBe('');
    expect(new URL(fromEnv).searchParams.get('password')).toBe(SECRET);
  });

  it('through the CLI: refused in the pipeline file and by webhook serve --store, never printed from the environment', { timeout: 60_000 }, async () => {
    const project = await makeProject(people(1));
    const url = await server().createDatabase('pw');
    const withPassword = `${url}?password=${encodeURIComponent(server().password)}`;
    const original = readFileSync(project.pipeline, 'utf8');
    writeFileSync(project.pipeline, `${original}state: ${url}?password=${SECRET}\n`);
    const inFile = await runCli(['state', 'show', project.pipeline], { cwd: project.dir, env: {} });
    expect(inFile.code).toBe(1);
    expect(inFile.stderr).toContain('carries a password');
    expect(inFile.stderr).not.toContain(SECRET);
    writeFileSync(project.pipeline, original);

    const serve = await runCli(['webhook', 'serve', '--store', `${url}?password=${SECRET}`, '--port', '0'], { cwd: project.dir, env: { SERVICE_WEBHOOK_KEY: 'k'.repeat(24) } });
    expect(serve.code).toBe(1);
    expect(serve.stderr).toContain('carries a password');
    expect(serve.stderr).not.toContain(SECRET);

    // From ROSTERSYNC_STATE_URL it connects, and is printed without it.
    const env = { ROSTERSYNC_STATE_URL: withPassword };
    const migrated = await runCli(['state', 'migrate'], { cwd: project.dir, env });
    expect(migrated.code, migrated.stderr).toBe(0);
    expect(migrated.stdout).toContain('password=redacted');
    expect(migrated.stdout).not.toContain(server().password);
    const shown = await runCli(['state', 'show', project.pipeline, '--json'], { cwd: project.dir, env });
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).not.toContain(server().password);
    const down = await runCli(['state', 'show', project.pipeline, '--json'], {
      cwd: project.dir,
      env: { ROSTERSYNC_STATE_URL: `postgres://rs@127.0.0.1:1/state?password=${SECRET}&connect_timeout=2` },
    });
    expect(down.code).toBe(6);
    expect(JSON.parse(down.stderr)).toMatchObject({ error: { exitCode: 6 } });
    expect(down.stderr).toContain('password=redacted');
    expect(down.stderr).not.toContain(SECRET);
  });
});
