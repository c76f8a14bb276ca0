/**
 * The shared budget in PostgreSQL reads one clock, the database's (src/rate-limit/budget-postgres.ts,
 * src/rate-limit/pace-times.ts): two hosts whose clocks disagree by an hour share the pace fairly. Each "host" is
 * a limiter with its own connection and an injected clock; they take turns at 20 a second until 40
 * turns were handed out between them. On the hosts' own clocks, the one behind waited an hour for
 * its first turn while the other took them all.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { RateLimiter } from '../../src/rate-limit/rate-limiter.js';
import { hostClock } from '../../src/rate-limit/pace-times.js';
import { postgresPaceStore } from '../../src/rate-limit/budget-postgres.js';
import { connectState } from '../../src/state/postgres/connect.js';
import { migrate } from '../../src/state/postgres/migrations.js';
import { postgresForFile } from '../support/postgres-server.js';
import { withPassword } from '../support/state-backends.js';

const server = postgresForFile();
const HOUR = 3600_000;

describe('the shared budget across hosts', () => {
  it('keeps its times on the database\'s clock: a host whose clock runs an hour behind is not starved', { timeout: 60_000 }, async () => {
    const url = await server().createDatabase('clock');
    // The budget's table, as `state migrate` makes it.
    const migrating = withPassword(server(), () => connectState(url, { origin: 'test', fromEnvironment: true }));
    migrate(migrating);
    migrating.close();
    const hosts = [0, -HOUR, +HOUR].map((skew) => {
      const clock = () => hostClock() + skew;
      const connection = withPassword(server(), () => connectState(url, { origin: 'test', fromEnvironment: true }));
      const store = postgresPaceStore(connection, 'budget-test', (error) => {
        throw error;
      }, clock);
      return { connection, limiter: new RateLimiter({ rps: 20, now: clock, sleep: (ms, signal) => delay(ms, undefined, signal ? { signal } : {}), store }), turns: 0 };
    });
    const stop = new AbortController();
    const TOTAL = 60;
    let total = 0;
    // Bounded: each host stops at the shared total, or after 20 s whatever happened.
    const deadline = setTimeout(() => stop.abort(new Error('deadline')), 20_000);
    try {
      await Promise.all(
        hosts.map(async (host) => {
          while (total < TOTAL && !stop.signal.aborted) {
            try {
              await host.limiter.turn(stop.signal);
            } catch {
              return;
            }
            host.turns += 1;
            if (++total >= TOTAL) stop.abort(new Error('done'));
          }
        }),
      );
    } finally {
      clearTimeout(deadline);
      for (const host of hosts) host.connection.close();
    }
    const turns = hosts.map((host) => host.turns);
    expect(total, `turns: ${turns.join(', ')}`).toBeGreaterThanOrEqual(TOTAL);
    // Shared fairly: a third each, give or take the start.
    for (const count of turns) expect(count, `turns: ${turns.join(', ')}`).toBeGreaterThanOrEqual(TOTAL / 6);
  });
});
