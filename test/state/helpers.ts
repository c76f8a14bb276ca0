/**
 * Helpers of the issue-10 tests: an emulator fixture whose organization already holds a group of
 * records with fields set in the UI, the `/_emulator/ui` controls that play an editor, and counts.
 */
import { loadFixture, type Fixture } from '../../src/emulator/fixture.js';
import type { RunningEmulator } from '../../src/emulator/server.js';

export const NOTES = '4f0b1e7c-5061-4293-8edf-4a5b6c7d8e95';
export const COI = '7d1c6a52-6a3e-4c3b-9b8e-1f0e2d3c4b5a';
export const COI_YES = '8d4b3c9f-0004-4d00-8000-000000000001';
export const EXISTING_GROUP_ID = 601;

/**
 * The built-in organization plus group 601, "Existing reviewers" (another team's group), holding
 * p1..p8 as an editor left them: a stale name, a note and a conflict of interest set in the UI.
 */
export function existingGroupFixture(): Fixture {
  const fixture = loadFixture();
  const records = Object.fromEntries(
    Array.from({ length: 8 }, (_, i) => [`p${i + 1}`, { name: `Old Name ${i + 1}`, emails: [`person${i + 1}@example.org`], [NOTES]: `set in the UI for p${i + 1}`, [COI]: COI_YES }]),
  );
  fixture.orgs[0]!.groups.push({ id: EXISTING_GROUP_ID, name: 'Existing reviewers', label: null, owner_team: 'Board Secretariat', editor_teams: [], viewer_teams: [], records });
  return fixture;
}

/** An editor sets fields of a record in the service's UI (creating it when absent). */
export async function uiSet(emu: { url: string }, groupId: number, clientId: string, fields: Record<string, unknown>): Promise<void> {
  const res = await fetch(`${emu.url}/_emulator/ui/groups/${groupId}/records/${encodeURIComponent(clientId)}`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(fields) });
  if (res.status !== 200) throw new Error(`ui set ${clientId}: ${res.status} ${await res.text()}`);
  await res.text();
}

/** Another team creates a group by hand in the UI; returns its id. */
export async function uiGroup(emu: { url: string }, name: string): Promise<number> {
  const res = await fetch(`${emu.url}/_emulator/ui/groups`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ name }) });
  const body = (await res.json()) as { authors_group_id: number };
  return body.authors_group_id;
}

/** Write calls the emulator saw so far: the total, and per "METHOD pattern" (and status). */
export function writeCalls(emu: RunningEmulator): { total: number; by(route: string, status?: number): number } {
  const snapshot = emu.stats.snapshot();
  return {
    total: snapshot.writes.total,
    by: (route, status) => {
      const byStatus = snapshot.calls[route] ?? {};
      return status === undefined ? Object.values(byStatus).reduce((a, b) => a + b, 0) : (byStatus[String(status)] ?? 0);
    },
  };
}

/** The records of one group as the service holds them (a deep copy). */
export function recordsOf(emu: RunningEmulator, groupId: number): Record<string, Record<string, unknown>> {
  const group = emu.world.orgs[0]!.groups.get(groupId);
  return group ? structuredClone(Object.fromEntries(group.records)) : {};
}
