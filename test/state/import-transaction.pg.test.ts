/**
 * `state import --jsonl` is all or nothing, on both backends: a bad value at any line, a file cut
 * short or edited, and a failure while writing (records another pipeline owns) each leave the state
 * exactly as it was (every table compared row by row), with a message naming the line and why.
 */
import Database from 'better-sqlite3';
import { createHash } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { canonicalJson, hashJson } from '../../src/plan/canonical.js';
import type { StateBackend } from '../../src/state/backend.js';
import { PG_SCHEMA } from '../../src/state/postgres/migrations.js';
import { StateError } from '../../src/state/backend.js';
import { SqliteStateStore } from '../../src/state/sqlite/sqlite-store.js';
import { exportState, importState } from '../../src/state/transfer.js';
import { postgresForFile } from '../support/postgres-server.js';
import { postgresLocation } from '../support/state-backends.js';

const server = postgresForFile();
const PIPELINE = 'reviewers';
const TARGET = { baseUrl: 'http://127.0.0.1:9', groupId: 12 };

interface Location {
  open(pipeline: string, now?: () => number): StateBackend;
  /** Every row of every table of the location, in a stable order. */
  dump(): Promise<unknown>;
}

function sqlite(): Location {
  const dir = mkdtempSync(join(tmpdir(), 'rostersync-import-'));
  return {
    open: (pipeline, now) => SqliteStateStore.open(join(dir, `${pipeline}.sqlite`), pipeline, now ? { now } : {}),
    async dump() {
      const db = new Database(join(dir, `${PIPELINE}.sqlite`), { readonly: true });
      try {
        db.prepare('ATTACH DATABASE ? AS shared').run(join(dir, '_shared.sqlite'));
        const tables = ['main.meta', 'main.records', 'main.journal', 'main.runs', 'main.lock', 'main.sqlite_sequence', 'shared.claims', 'shared.targets'];
        return Object.fromEntries(tables.map((table) => [table, db.prepare(`SELECT * FROM ${table} ORDER BY 1, 2`).all()]));
      } finally {
        db.close();
      }
    },
  };
}

async function postgres(): Promise<Location> {
  const location = await postgresLocation(server());
  return {
    open: (pipeline, now) => location.open(pipeline, now ? { now } : {}),
    async dump() {
      const client = new pg.Client(server().clientConfig(location.url));
      await client.connect();
      try {
        const tables = ['meta', 'records', 'journal', 'runs', 'lock_owners', 'claims', 'targets'];
        const result: Record<string, unknown> = {};
        for (const table of tables) result[table] = (await client.query(`SELECT * FROM ${PG_SCHEMA}.${table} ORDER BY 1, 2`)).rows;
        return result;
      } finally {
        await client.end();
      }
    },
  };
}

/** The export of a state (in a location of its own) with everything an export carries: identity, records, unfinished writes, runs, a registration. */
function exportedText(location: Location): string {
  let at = Date.parse('2026-01-05T03:15:00.000Z');
  const store = location.open(PIPELINE, () => at);
  try {
    store.bindService(TARGET.baseUrl);
    store.setGroupId(TARGET.groupId);
    store.registerTarget(TARGET, ['rev-']);
    for (const n of [1, 2, 3]) {
      const fieldsJson = canonicalJson({ name: `Person ${n}`, emails: [`person${n}@example.org`] });
      store.adopt({ clientId: `rev-${n}`, fieldsJson, hash: hashJson(fieldsJson), runId: '20260105T031500Z-0001' });
    }
    store.journalSent('20260105T031500Z-0001', 'rev-2', 'update');
    store.journalFailed(store.journalSent('20260105T031500Z-0001', 'rev-4', 'create'), 503, 'service unavailable', 3);
    store.startRun({ id: '20260104T031500Z-0001', dryRun: false, sourceSha256: 'a'.repeat(64) });
    at += 60_000;
    store.finishRun({ id: '20260104T031500Z-0001', outcome: 'success', validRecords: 3, counts: { create: { done: 3 } } });
    store.startRun({ id: '20260105T031500Z-0001', dryRun: false, sourceSha256: 'b'.repeat(64) });
    let text = '';
    exportState(store, (line) => (text += line), () => at);
    return text;
  } finally {
    store.close();
  }
}

/** The file with its trailer made to match again: an edit that the counts and digest cannot catch. */
function resealed(lines: readonly object[]): string {
  const body = lines.map((line) => `${JSON.stringify(line)}\n`).join('');
  const count = (kind: string) => lines.filter((line) => (line as { kind: string }).kind === kind).length;
  const trailer = { kind: 'end', records: count('record'), unfinished: count('unfinished'), runs: count('run'), sha256: createHash('sha256').update(body).digest('hex') };
  return `${body}${JSON.stringify(trailer)}\n`;
}

/** Bad values by line kind: each passes JSON parsing but must not reach the state. */
const BAD_VALUES: Record<string, Array<[string, (line: Record<string, unknown>) => unknown]>> = {
  header: [
    ['another pipeline', (l) => ({ ...l, pipeline: 'other' })],
    ['an older format version', (l) => ({ ...l, version: 1 })],
  ],
  identity: [
    ['plain http to a remote host', (l) => ({ ...l, baseUrl: 'http://service.example.org' })],
    ['credentials in the base URL', (l) => ({ ...l, baseUrl: 'https://user:secret@service.example.org' })],
    ['a base URL that is not a URL', (l) => ({ ...l, baseUrl: 'service example' })],
    ['group id 0', (l) => ({ ...l, groupId: 0 })],
    ['a fractional group id', (l) => ({ ...l, groupId: 1.5 })],
    ['a group intent dated "yesterday"', (l) => ({ ...l, groupIntent: { name: 'G', at: 'yesterday' } })],
    ['a NUL in a shared prefix', (l) => ({ ...l, sharedPrefixes: ['rev-\u0000'] })],
  ],
  record: [
    ['fieldsJson that is not JSON', (l) => ({ ...l, fieldsJson: '{"name":' })],
    ['fieldsJson that is not an object', (l) => ({ ...l, fieldsJson: '[1]' })],
    ['a hash that does not match the fields', (l) => ({ ...l, hash: 'AAAA' })],
    ['an empty client_id', (l) => ({ ...l, clientId: '' })],
    ['a NUL in the client_id', (l) => ({ ...l, clientId: 'rev-\u00001' })],
    ['a source row past 32 bits', (l) => ({ ...l, sourceRow: 2 ** 31 })],
    ['a negative source row', (l) => ({ ...l, sourceRow: -1 })],
  ],
  unfinished: [
    ['an HTTP status of 42', (l) => ({ ...l, status: 42 })],
    ['an unknown action', (l) => ({ ...l, action: 'upsert' })],
    ['a NUL in the client_id', (l) => ({ ...l, clientId: 'rev-\u0000' })],
  ],
  run: [
    ['startedAt "yesterday"', (l) => ({ ...l, startedAt: 'yesterday' })],
    ['a finishedAt that is no date', (l) => ({ ...l, finishedAt: '2026-13-45T00:00:00.000Z', outcome: 'success' })],
    ['countsJson that is not JSON', (l) => ({ ...l, countsJson: 'counts', finishedAt: '2026-01-05T03:16:00.000Z', outcome: 'success' })],
    ['an unknown outcome', (l) => ({ ...l, outcome: 'great', finishedAt: '2026-01-05T03:16:00.000Z' })],
    ['an outcome without finishedAt', (l) => ({ ...l, outcome: 'success', finishedAt: null })],
    ['valid records past 32 bits', (l) => ({ ...l, validRecords: 2 ** 40 })],
  ],
};

/** Lines that would be fine alone but not twice. */
const DUPLICABLE = new Set(['identity', 'record', 'unfinished', 'run', 'header']);

describe.each([
  ['sqlite', async () => sqlite()],
  ['postgres', postgres],
] as const)('state import on %s is all or nothing', (_name, makeLocation) => {
  it('every kind of bad value at every line position leaves the state unchanged and names the line', { timeout: 120_000 }, async () => {
    const location = await makeLocation();
    const good = exportedText(await makeLocation());
    const lines = good.trimEnd().split('\n').slice(0, -1).map((line) => JSON.parse(line) as Record<string, unknown>);
    const store = location.open(PIPELINE);
    const clock = { at: Date.now() };
    try {
      const before = await location.dump();
      const refused = async (text: string, what: string, line?: number) => {
        let error: unknown;
        try {
          importState(store, clock, text, 'state.jsonl');
        } catch (caught) {
          error = caught;
        }
        expect(error, what).toBeInstanceOf(StateError);
        expect((error as Error).message, what).toContain(line === undefined ? 'state.jsonl' : `state.jsonl:${line}:`);
        expect((error as Error).message, what).toContain('nothing was imported');
        expect(await location.dump(), what).toEqual(before);
      };
      let cases = 0;
      for (const [index, line] of lines.entries()) {
        const kind = line.kind as string;
        for (const [what, mutate] of BAD_VALUES[kind] ?? []) {
          const edited = lines.map((other, i) => (i === index ? (mutate(other) as Record<string, unknown>) : other));
          await refused(resealed(edited), `line ${index + 1} (${kind}): ${what}`, index + 1);
          cases += 1;
        }
        if (DUPLICABLE.has(kind)) {
          const doubled = [...lines.slice(0, index + 1), line, ...lines.slice(index + 1)];
          await refused(resealed(doubled), `line ${index + 1} (${kind}) twice`, index + 2);
          cases += 1;
        }
        // Cut short after this line (the trailer lost), and this line edited under the old trailer.
        await refused(good.split('\n').slice(0, index + 1).join('\n') + '\n', `cut after line ${index + 1}`);
        const tampered = good.split('\n');
        tampered[index] = tampered[index]!.replace(/"kind":"(\w+)"/, '"kind":"$1" ');
        await refused(tampered.join('\n'), `line ${index + 1} edited`);
        cases += 2;
      }
      expect(cases).toBeGreaterThan(60);
      // The same file unedited imports whole.
      expect(importState(store, clock, good, 'state.jsonl')).toEqual({ records: 3, unfinished: 2, runs: 2 });
      expect(store.ownedCount()).toBe(3);
      expect(store.recentRuns(10).map((run) => run.id)).toEqual(['20260105T031500Z-0001', '20260104T031500Z-0001']);
    } finally {
      store.close();
    }
  });

  it('a failure while writing (records another pipeline owns) rolls everything back', { timeout: 60_000 }, async () => {
    const location = await makeLocation();
    const text = exportedText(await makeLocation());
    // Another pipeline of this location already claims rev-3 on the same target.
    const other = location.open('other');
    try {
      other.claim(TARGET, ['rev-3']);
    } finally {
      other.close();
    }
    const store = location.open(PIPELINE);
    try {
      const before = await location.dump();
      expect(() => importState(store, { at: Date.now() }, text, 'state.jsonl')).toThrow(/1 of its records are owned by other pipelines in this state location \(e\.g\. rev-3 by "other"\)\. Nothing was imported/);
      expect(await location.dump()).toEqual(before);
      expect(store.ownedCount()).toBe(0);
    } finally {
      store.close();
    }
  });
});
