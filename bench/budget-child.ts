/**
 * One process of the shared-budget bench (bench/shared-budget.ts): a client with the limiter a
 * sync would get (shared through the host's budget file, or alone), writing `records` records
 * once the parent says go. Prints `ready`, then one JSON line with its figures.
 *
 *   tsx bench/budget-child.ts <baseUrl> <records> <tag> <shared|postgres|alone>
 */
import { createInterface } from 'node:readline';
import { createClient, RateLimiter } from '../src/client/index.js';
import { sharedLimiter, wallClock } from '../src/rate-limit/shared-budget.js';
import { budgetSessionOf } from '../src/state/shared-database.js';

const [baseUrl, recordsText, tag, mode] = process.argv.slice(2);
const API_KEY = 'demo-key-0123456789';
const GROUP_ID = 501;
const records = Number(recordsText);
const rateLimit = { maxInFlight: 4 };
const limiter =
  (mode === 'alone'
    ? undefined
    : sharedLimiter({
        baseUrl: baseUrl!,
        apiKey: API_KEY,
        env: process.env,
        rateLimit,
        // `postgres`: the state database of ROSTERSYNC_STATE_URL holds the budget, as for a pipeline kept there.
        ...(mode === 'postgres' ? { stateDatabase: budgetSessionOf({ file: 'bench', config: {} }, process.env) } : {}),
        onAlone: (reason) => process.stderr.write(`${reason}\n`),
      })) ??
  new RateLimiter({ ...rateLimit, now: wallClock, sleep: (ms) => new Promise((done) => setTimeout(done, ms)) });
const client = createClient({ baseUrl: baseUrl!, apiKey: API_KEY, limiter });
// When each 429 came ("at most 5 per process after the first 10 s").
const refusedAt: number[] = [];
const onRateLimited = limiter.onRateLimited.bind(limiter);
limiter.onRateLimited = () => {
  refusedAt.push(wallClock());
  onRateLimited();
};

process.stdout.write('ready\n');
await new Promise<void>((go) => createInterface({ input: process.stdin }).once('line', () => go()));
const startedAt = wallClock();
const writtenAt: number[] = [];
let failed = 0;
let next = 0;
const deadline = AbortSignal.timeout(Math.max(60_000, records * 1000));
await Promise.all(
  Array.from({ length: rateLimit.maxInFlight }, async () => {
    while (next < records && !deadline.aborted) {
      const i = next++;
      try {
        await client.putAuthor(GROUP_ID, `${tag}-${i}`, { name: `Expert ${tag} ${i}` }, { signal: deadline });
        writtenAt.push(wallClock());
      } catch {
        failed++;
      }
    }
  }),
);
const stats = client.stats();
process.stdout.write(`${JSON.stringify({ tag, startedAt, finishedAt: wallClock(), writtenAt, refusedAt, failed, rateLimited: stats.rateLimited, finalRate: stats.currentRate })}\n`);
process.exit(0);
