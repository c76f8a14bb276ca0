/**
 * `npx tsx bench/adoption-protocols.ts [--quick]`: the call cost of writing a client_id that is not
 * in the inventory without overwriting a record that already exists (create-if-absent).
 *
 * Protocols, each against the emulator over real HTTP (8 calls in flight, 2 ms latency per call):
 * - `blind full POST`: today's create, the baseline. It wipes fields set in the UI when the record exists;
 * - `GET first`: GET; on 404 a full POST, else a partial POST of the managed fields that differ;
 * - `partial first`: a partial POST of every managed field; on 404 a full POST.
 * Scenarios: every record new (first sync into a group given by id), every record existing and equal
 * (a lost state), every record existing with one managed field changed in the roster.
 * Figures: calls per record counted by the emulator, and wall time, median of several runs (min–max).
 */
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import pLimit from 'p-limit';
import { createClient, type ServiceClient } from '../src/client/client.js';
import { startEmulator } from '../src/emulator/server.js';

const ROOT = resolve(import.meta.dirname, '..');
const quick = process.argv.includes('--quick');
const RECORDS = quick ? 100 : 400;
const RUNS = quick ? 3 : 5;
const API_KEY = 'demo-key-0123456789';
const NOTES = '4f0b1e7c-5061-4293-8edf-4a5b6c7d8e95';

type Fields = Record<string, unknown>;
type Protocol = 'blind full POST' | 'GET first' | 'partial first';
type Scenario = 'all new' | 'all existing, equal' | 'all existing, one field changed';

const desired = (i: number, changed: boolean): Fields => ({ name: `Person ${i}${changed ? ' (renamed)' : ''}`, emails: [`p${i}@example.org`], orcids: null, affiliations: ['Leiden'], articles: null });

function isNotFound(error: unknown): boolean {
  return (error as { status?: number }).status === 404;
}

async function writeOne(client: ServiceClient, protocol: Protocol, groupId: number, clientId: string, fields: Fields): Promise<void> {
  const full = Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== null));
  if (protocol === 'blind full POST') {
    await client.putAuthor(groupId, clientId, full as never);
    return;
  }
  if (protocol === 'GET first') {
    let remote: Fields;
    try {
      remote = (await client.getAuthor(groupId, clientId)) as Fields;
    } catch (error) {
      if (!isNotFound(error)) throw error;
      await client.putAuthor(groupId, clientId, full as never);
      return;
    }
    const diff = Object.fromEntries(Object.entries(fields).filter(([key, value]) => JSON.stringify(remote[key] ?? null) !== JSON.stringify(value)));
    if (Object.keys(diff).length > 0) await client.patchAuthor(groupId, clientId, diff as never);
    return;
  }
  try {
    await client.patchAuthor(groupId, clientId, fields as never);
  } catch (error) {
    if (!isNotFound(error)) throw error;
    await client.putAuthor(groupId, clientId, full as never);
  }
}

interface Measure {
  protocol: Protocol;
  scenario: Scenario;
  callsPerRecord: number;
  writesPerRecord: number;
  uiFieldsSurviving: number;
  ms: { median: number; min: number; max: number };
}

async function measure(protocol: Protocol, scenario: Scenario): Promise<Measure> {
  const times: number[] = [];
  let calls = 0;
  let writes = 0;
  let surviving = 0;
  for (let run = 0; run < RUNS; run += 1) {
    const emulator = await startEmulator({ port: 0, latencyMs: 2 });
    try {
      const client = createClient({ baseUrl: emulator.url, apiKey: API_KEY, rateLimit: { rps: 100_000, burst: 1000, maxInFlight: 8 } });
      const { authors_group_id: groupId } = await client.createGroup({ group_name: 'Bench', owner_team: 'Editorial Office', editor_teams: [], viewer_teams: [] });
      const group = emulator.world.orgs[0]!.groups.get(groupId)!;
      if (scenario !== 'all new') {
        // Records already in the group, each with a field an editor set in the UI.
        for (let i = 0; i < RECORDS; i += 1) group.records.set(`p${i}`, { ...desired(i, false), [NOTES]: 'set in the UI' } as never);
      }
      emulator.stats.reset();
      const limit = pLimit(8);
      const started = performance.now();
      await Promise.all(Array.from({ length: RECORDS }, (_, i) => limit(() => writeOne(client, protocol, groupId, `p${i}`, desired(i, scenario === 'all existing, one field changed')))));
      times.push(performance.now() - started);
      const stats = emulator.stats.snapshot();
      calls = Object.values(stats.calls).reduce((sum, byStatus) => sum + Object.values(byStatus).reduce((a, b) => a + b, 0), 0);
      writes = stats.writes.total;
      surviving = [...group.records.values()].filter((record) => record[NOTES] === 'set in the UI').length;
    } finally {
      await emulator.close();
    }
  }
  const sorted = [...times].sort((a, b) => a - b);
  return {
    protocol,
    scenario,
    callsPerRecord: calls / RECORDS,
    writesPerRecord: writes / RECORDS,
    uiFieldsSurviving: scenario === 'all new' ? NaN : surviving / RECORDS,
    ms: { median: sorted[Math.floor(sorted.length / 2)]!, min: sorted[0]!, max: sorted[sorted.length - 1]! },
  };
}

const results: Measure[] = [];
for (const scenario of ['all new', 'all existing, equal', 'all existing, one field changed'] as Scenario[]) {
  for (const protocol of ['blind full POST', 'GET first', 'partial first'] as Protocol[]) {
    results.push(await measure(protocol, scenario));
    process.stderr.write('.');
  }
}
process.stderr.write('\n');
const lines = [
  `${RECORDS} records, ${RUNS} runs each, 8 in flight, 2 ms emulator latency`,
  '| scenario | protocol | calls/record | writes/record | UI fields kept | ms (median, min–max) | vs blind |',
  '|---|---|---|---|---|---|---|',
];
for (const result of results) {
  const blind = results.find((r) => r.scenario === result.scenario && r.protocol === 'blind full POST')!;
  lines.push(
    `| ${result.scenario} | ${result.protocol} | ${result.callsPerRecord.toFixed(2)} | ${result.writesPerRecord.toFixed(2)} | ${Number.isNaN(result.uiFieldsSurviving) ? '–' : `${(result.uiFieldsSurviving * 100).toFixed(0)} %`} | ${result.ms.median.toFixed(0)} (${result.ms.min.toFixed(0)}–${result.ms.max.toFixed(0)}) | ${(result.ms.median / blind.ms.median).toFixed(2)}x |`,
  );
}
process.stdout.write(`${lines.join('\n')}\n`);
writeFileSync(join(ROOT, 'bench', 'adoption-results.json'), `${JSON.stringify({ records: RECORDS, runs: RUNS, results }, null, 2)}\n`);
