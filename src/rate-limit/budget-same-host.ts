/**
 * One budget per API key for the processes of one host (docs/scaling.md): their limiters keep
 * their pace in one small SQLite file per base URL and key, and take turns on it. A process that
 * finishes or dies simply stops claiming turns, so the others get its share from the next turn.
 *
 * The file holds no secret (its name is a hash of the base URL and the key) and nothing worth
 * keeping: a state untouched for STALE_MS, or one no limiter could have written (pace-times.ts),
 * is started afresh. Its times are on the host's monotonic clock.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { Clock, PaceState, PaceStore } from './rate-limiter.js';
import { ownFolderInSharedPlaceSync } from '../personal-data/private-dir.js';
import { freshPace, hostClock, plausiblePace } from './pace-times.js';

/** A pace no process touched for this long says nothing about the budget now. */
export const STALE_MS = 10 * 60_000;
/** Budget files untouched this long are removed when a process opens the folder. */
const PRUNE_MS = 24 * 3600_000;

/** The folder of the budget files: `ROSTERSYNC_BUDGET_DIR`, else one per user under the temporary folder. */
export function budgetDir(env: NodeJS.ProcessEnv): string {
  return env.ROSTERSYNC_BUDGET_DIR || join(tmpdir(), `rostersync-budget-${process.getuid?.() ?? 'user'}`);
}

/**
 * The default folder is in the shared temporary folder, where another user may have made it first
 * and put a pace in it that stalls every run: it is used only if it is this user's own and no one
 * else can write in it (../personal-data/private-dir.ts). A folder named by ROSTERSYNC_BUDGET_DIR is the operator's
 * choice and used as it is.
 */
export function budgetDirMustBeOwn(env: NodeJS.ProcessEnv): boolean {
  return !env.ROSTERSYNC_BUDGET_DIR;
}

/** `ROSTERSYNC_SHARED_BUDGET=off` keeps every process on its own pace. */
export function sharedBudgetEnabled(env: NodeJS.ProcessEnv): boolean {
  return !/^(off|0|false|no)$/i.test(env.ROSTERSYNC_SHARED_BUDGET ?? '');
}

/** The budget's name: the service counts per key, so one per base URL and key (hashed, never the key). */
export function budgetName(baseUrl: string, apiKey: string): string {
  return createHash('sha256').update(`${baseUrl.replace(/\/+$/, '')}\n${apiKey}`).digest('hex').slice(0, 24);
}

export function budgetFile(dir: string, baseUrl: string, apiKey: string): string {
  return join(dir, `budget-${budgetName(baseUrl, apiKey)}.sqlite`);
}

/** Wall-clock milliseconds with sub-millisecond steps (the benches' timestamps; the pace uses hostClock). */
export const wallClock = (): number => performance.timeOrigin + performance.now();

const open = new Map<string, Database.Database>();

/**
 * The PaceStore kept in `file`, shared with every process of this host that opens the same file.
 * `clock` is the limiter's, and must be the same for every process: the host's monotonic clock.
 */
export function sameHostPaceStore(file: string, onFailure: (error: unknown) => void, options: { clock?: Clock; ownFolder?: boolean } = {}): PaceStore {
  const clock = options.clock ?? hostClock;
  const db = openBudget(file, options.ownFolder === true);
  const read = db.prepare<[], { state: string; updated_at: number }>('SELECT state, updated_at FROM pace WHERE id = 1');
  const write = db.prepare('INSERT INTO pace (id, state, updated_at) VALUES (1, ?, ?) ON CONFLICT (id) DO UPDATE SET state = excluded.state, updated_at = excluded.updated_at');
  // The file failing mid-run (removed, disk full, locked for seconds) must not fail the run: the
  // limiter goes on alone, finding the limit afresh.
  let alone: PaceState | undefined;
  return {
    update<T>(change: (state: PaceState) => T, initial: () => PaceState): T {
      if (alone) return change(alone);
      try {
        // IMMEDIATE: the write lock is taken before reading, so no two processes claim one turn.
        return db
          .transaction(() => {
            const row = read.get();
            const now = clock();
            const stored = row && freshPace(row.updated_at, now, STALE_MS) ? decodePace(row.state) : undefined;
            const state = stored && plausiblePace(stored, now) ? stored : initial();
            const result = change(state);
            write.run(encodePace(state), now);
            return result;
          })
          .immediate();
      } catch (error) {
        onFailure(error);
        alone = initial();
        return change(alone);
      }
    },
  };
}

function openBudget(file: string, ownFolder: boolean): Database.Database {
  const known = open.get(file);
  if (known?.open) return known;
  const dir = join(file, '..');
  if (ownFolder) {
    try {
      ownFolderInSharedPlaceSync(dir, { closed: false });
    } catch (error) {
      throw new Error(`${error instanceof Error ? error.message : String(error)}: remove it, or set ROSTERSYNC_BUDGET_DIR to a folder of your own`, { cause: error });
    }
  } else {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  }
  if (open.size === 0) prune(dir);
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  // The pace is worth nothing after a crash: no fsync.
  db.pragma('synchronous = OFF');
  db.pragma('busy_timeout = 5000');
  db.exec('CREATE TABLE IF NOT EXISTS pace (id INTEGER PRIMARY KEY CHECK (id = 1), state TEXT NOT NULL, updated_at REAL NOT NULL)');
  open.set(file, db);
  return db;
}

/** Removes budget files nobody used for a day (one per base URL and key accumulates otherwise). */
function prune(dir: string): void {
  try {
    for (const name of readdirSync(dir)) {
      if (!name.startsWith('budget-')) continue;
      const path = join(dir, name);
      if (Date.now() - statSync(path).mtimeMs > PRUNE_MS) rmSync(path, { force: true });
    }
  } catch {
    // Another process pruned first, or the folder is not ours to tidy: nothing depends on it.
  }
}

/**
 * JSON has no Infinity: the state's unknown limits travel as a list of the paths that were ±Infinity
 * (JSON.stringify writes null there). No replacer or reviver: they run once per value, and the
 * state holds a second's answer times, so at a few hundred calls a second a reviver made this
 * codec the most expensive step of every call.
 */
export function encodePace(state: PaceState): string {
  const infinite: Array<[string[], 1 | -1]> = [];
  const scan = (value: object, path: string[]): void => {
    for (const [key, inner] of Object.entries(value)) {
      if (inner === Infinity || inner === -Infinity) infinite.push([[...path, key], inner > 0 ? 1 : -1]);
      else if (inner !== null && typeof inner === 'object' && !Array.isArray(inner)) scan(inner as object, [...path, key]);
    }
  };
  scan(state, []);
  return JSON.stringify(infinite.length > 0 ? { state, infinite } : { state });
}

export function decodePace(text: string): PaceState {
  const parsed = JSON.parse(text) as { state?: Record<string, unknown>; infinite?: Array<[string[], 1 | -1]> };
  // Written by an older version: the state itself, its infinite values as strings.
  if (parsed.state === undefined) return JSON.parse(text, (_key, value: unknown) => (value === 'Infinity' ? Infinity : value === '-Infinity' ? -Infinity : value)) as PaceState;
  for (const [path, sign] of parsed.infinite ?? []) {
    let at: Record<string, unknown> = parsed.state;
    for (const key of path.slice(0, -1)) at = at[key] as Record<string, unknown>;
    at[path[path.length - 1]!] = sign * Infinity;
  }
  return parsed.state as unknown as PaceState;
}
