/**
 * The receiver's store on the state backends: SQLite by default, PostgreSQL for several replicas.
 * Deliveries are deduplicated by `order` through the database's key, not in a process's memory:
 * two receiver processes sharing one PostgreSQL store, fed interleaved, repeated and reordered
 * deliveries, store each delivery exactly once, and every manuscript ends at its latest order.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import type { WebhookEnvelope } from '../../src/client/index.js';
import { seededRandom } from '../../src/runtime/seeded-random.js';
import { connectState } from '../../src/state/postgres/connect.js';
import { migrate } from '../../src/state/postgres/migrations.js';
import { PgSelectionStore, SqliteSelectionStore, openSelectionStore } from '../../src/webhook/index.js';
import { postgresForFile } from '../support/postgres-server.js';
import { withPassword } from '../support/state-backends.js';

const KEY = 'whk-stores-key-7';
const CLI = fileURLToPath(new URL('../../bin/rostersync-dev.js', import.meta.url));

function envelope(order: number, manuscriptId: number): WebhookEnvelope {
  return {
    action: 'mark_as_proposal_referee',
    timestamp: 1_780_000_000 + order,
    order,
    api_key: KEY,
    payload: {
      version: 1,
      manuscript_id: manuscriptId,
      origin_id: `MS-${manuscriptId}`,
      authors_groups_settings: null,
      candidates: [
        {
          name: `Referee ${order}`,
          first_name: 'Referee',
          last_name: String(order),
          middle_name: null,
          suffix: null,
          author_id: order,
          email: `r${order}@example.org`,
          orcid: null,
          affiliation: null,
          articlesCount: 1,
          citationsCount: 1,
          hIndex: 1,
          score: 1,
          relevant_concepts: [],
          url: `https://service.example/authors/${order}/`,
          authors_groups: [],
          marked: true,
          marked_by: 'editor@office.example',
        },
      ],
    },
  };
}

const server = postgresForFile();

async function migratedDatabase(): Promise<string> {
  const url = await server().createDatabase('webhook');
  withPassword(server(), () => {
    const connection = connectState(url, { origin: 'test', fromEnvironment: true });
    migrate(connection);
    connection.close();
  });
  return url;
}

describe('webhook selection stores', () => {
  it.each(['sqlite', 'postgres'] as const)('%s: applies newer orders only, a repeated order is a no-op', async (kind) => {
    const store =
      kind === 'sqlite'
        ? SqliteSelectionStore.open(join(mkdtempSync(join(tmpdir(), 'rostersync-wh-')), 'referees.sqlite'), () => new Date())
        : await openSelectionStore(await migratedDatabase(), { env: { PGPASSWORD: server().password } });
    try {
      expect(await store.apply(envelope(5, 1))).toBe('applied');
      expect(await store.apply(envelope(5, 1))).toBe('stale');
      expect(await store.apply(envelope(3, 1))).toBe('stale');
      expect(await store.apply(envelope(9, 2))).toBe('applied');
      expect(await store.apply(envelope(7, 1))).toBe('applied');
      const listed = await store.list();
      expect(listed.map((s) => [s.manuscript_id, s.order, s.referees[0]!.author_id])).toEqual([
        [1, 7, 7],
        [2, 9, 9],
      ]);
      expect((await store.list('MS-2')).map((s) => s.order)).toEqual([9]);
      if (kind === 'sqlite') expect(statSync(store.location).mode & 0o777).toBe(0o600);
    } finally {
      await store.close();
    }
  });

  it('refuses a PostgreSQL store whose schema is behind, naming `state migrate`', async () => {
    const url = await server().createDatabase('bare');
    await expect(openSelectionStore(url, { env: { PGPASSWORD: server().password } })).rejects.toThrow(/schema version 0/);
    await expect(openSelectionStore(url, { env: { PGPASSWORD: server().password } })).rejects.toMatchObject({ hint: expect.stringContaining('rostersync state migrate') });
  });

  it('two receiver processes share one PostgreSQL store: each delivery stored exactly once, in order', { timeout: 60_000 }, async () => {
    const url = await migratedDatabase();
    const replicas: { child: ChildProcess; url: string }[] = [];
    try {
      for (let i = 0; i < 2; i++) {
        const child = spawn(process.execPath, [CLI, 'webhook', 'serve', '--port', '0', '--store', url], {
          env: { ...process.env, PGPASSWORD: server().password, SERVICE_WEBHOOK_KEY: KEY, NO_COLOR: '1' },
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        const listening = await new Promise<string>((resolve, reject) => {
          let out = '';
          let err = '';
          child.stdout!.on('data', (chunk: Buffer) => {
            out += chunk.toString();
            const match = /listening on (\S+)/.exec(out);
            if (match) resolve(match[1]!);
          });
          child.stderr!.on('data', (chunk: Buffer) => (err += chunk.toString()));
          child.once('exit', (code) => reject(new Error(`receiver exited ${code}: ${err}`)));
        });
        replicas.push({ child, url: listening });
      }
      // 60 events on 4 manuscripts; each goes to a random replica, a third of them also to the
      // other replica (the service's retry landing elsewhere behind the load balancer), in
      // concurrent batches whose order is shuffled.
      const rng = seededRandom(11);
      const events = Array.from({ length: 60 }, (_, i) => envelope(i + 1, 1 + Math.floor(rng() * 4)));
      const sends: { replica: number; event: WebhookEnvelope }[] = [];
      for (const event of events) {
        const first = Math.floor(rng() * 2);
        sends.push({ replica: first, event });
        if (rng() < 0.35) sends.push({ replica: 1 - first, event });
      }
      for (let start = 0; start < sends.length; start += 8) {
        const batch = sends.slice(start, start + 8).sort(() => rng() - 0.5);
        const statuses = await Promise.all(
          batch.map(async ({ replica, event }) => {
            const response = await request(replicas[replica]!.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(event) });
            await response.body.dump();
            return response.statusCode;
          }),
        );
        expect(statuses.every((status) => status === 200)).toBe(true);
      }
      const store = (await openSelectionStore(url, { env: { PGPASSWORD: server().password } })) as PgSelectionStore;
      try {
        const deliveries = await store.deliveries();
        expect(deliveries.map((d) => d.order)).toEqual(events.map((e) => e.order));
        expect(sends.length).toBeGreaterThan(events.length);
        const latest = new Map<number, number>();
        for (const event of events) latest.set(event.payload.manuscript_id, Math.max(latest.get(event.payload.manuscript_id) ?? 0, event.order));
        const selections = await store.list();
        expect(selections.map((s) => [s.manuscript_id, s.order])).toEqual([...latest].sort((a, b) => a[0] - b[0]));
        for (const selection of selections) expect(selection.referees[0]!.author_id).toBe(selection.order);
      } finally {
        await store.close();
      }
    } finally {
      for (const replica of replicas) replica.child.kill('SIGTERM');
      await Promise.all(replicas.map((r) => new Promise((resolve) => (r.child.exitCode !== null ? resolve(null) : r.child.once('exit', resolve)))));
    }
  });
});
