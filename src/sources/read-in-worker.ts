/**
 * Reading a roster on the other core. A nightly plan of a large roster is two chains of work of
 * about the same size: reading (decoding, records, cells) and planning (row keys, lookups,
 * duplicates). In one thread they add up; here the reader runs in a worker thread
 * (read-worker.ts) and the main thread plans the rows as they arrive.
 *
 * Same reader, same items: the worker runs `openSource` itself, so rows, errors, line numbers,
 * notes and refusals are those of the in-process reader. At most STEADY_BATCHES_AHEAD batches
 * wait unread (more, once, when the plan's fast path allows it), so memory stays bounded when
 * planning is the slower side (rows that must be mapped).
 */
import type { Worker } from 'node:worker_threads';
import { startModuleWorker } from '../runtime/worker-module.js';
import type { SourceConfig } from './options.js';
import type { OpenSourceOptions } from './open-source.js';
import { UserFacingError } from '../errors/user-facing-error.js';
import { SourceError } from './source-error.js';
import { PackedRow } from './cells-text.js';
import type { OpenedSource, Provenance, SourceItem } from './types.js';

/**
 * Small batches: a batch's rows live until the batch is planned, and large ones outlive the young
 * generation, which made the main thread's heap (and the peak RSS) jump by 100-200 MB in some
 * runs; 256 rows measured as fast as 2048 with no such jumps.
 */
export const ROWS_PER_BATCH = 256;
/** Batches the worker may read ahead of the plan once planning runs. */
export const STEADY_BATCHES_AHEAD = 64;
/**
 * What a plan on the fast path lets the worker read ahead at the start (`allowReadAhead`, once the
 * inventory is known to hold keys of this salt): up to 262,144 rows (about
 * 30 MB of text at 1M rows' width). The main thread loads the inventory's row keys (about 0.5 s
 * at 1M) while the worker starts reading: with 64 batches ahead the worker stood idle part of that
 * time (3.9-4.0 s in all, 215-230 MB), with 1024 it does not (3.5 s, 257-265 MB). The allowance
 * is spent once: the main thread hands a batch's credit back only while fewer than
 * STEADY_BATCHES_AHEAD wait, so a plan slower than the reader does not keep 1024 batches in
 * memory all along.
 */
export const FAST_PATH_BATCHES_AHEAD = 1024;

export type FromWorker =
  | { kind: 'opened'; file: string; path: string | undefined; format: OpenedSource['format']; sheet: string | undefined; headers: string[]; notes: string[] }
  | { kind: 'batch'; rows: Int32Array; ends: Uint32Array; text: string; others: SourceItem[] }
  | { kind: 'end'; notes: string[] }
  | { kind: 'fail'; error: { name: string; message: string; hint?: string; file?: string; userFacing?: boolean } };

/** Credit handed back to the worker: `batches` more it may send. */
export type ToWorker = { kind: 'more'; batches: number };

/**
 * Credit goes back to the worker this many batches at a time (and whenever the main thread is
 * about to wait), not a message per batch: each message interrupts the reader.
 */
const CREDIT_BATCHES = 16;

/** Below this size a worker's start (tens of milliseconds, more under tsx) costs more than it saves. */
export const WORKER_READ_MIN_BYTES = 8 * 1024 * 1024;

/**
 * `openSource`, with the reading done in a worker thread. Resolves once the header is read (or
 * rejects with the reader's own SourceError); the items then stream as the worker reads.
 */
export async function openSourceInWorker(config: SourceConfig, options: OpenSourceOptions): Promise<OpenedSource> {
  const worker = startWorker({ config, baseDir: options.baseDir, readAhead: STEADY_BATCHES_AHEAD });
  const inbox: FromWorker[] = [];
  let waiting: (() => void) | undefined;
  let exited: Error | undefined;
  worker.on('message', (message: FromWorker) => {
    inbox.push(message);
    waiting?.();
  });
  worker.on('error', (error) => {
    exited = error;
    waiting?.();
  });
  worker.on('exit', (code) => {
    exited ??= new Error(`the roster reader's worker thread stopped (exit code ${code})`);
    waiting?.();
  });
  // The worker keeps the process alive only while the main thread waits for it: a source that is
  // opened but never read must not hold a finished command open.
  worker.unref();
  /** Batches planned whose credit has not gone back to the worker yet. */
  let owed = 0;
  const handBackCredit = () => {
    if (owed === 0 || closed) return;
    worker.postMessage({ kind: 'more', batches: owed } satisfies ToWorker);
    owed = 0;
  };
  let closed = false;
  const next = async (): Promise<FromWorker> => {
    for (;;) {
      options.signal?.throwIfAborted();
      if (closed) throw new Error('the roster reader was closed before the end of the file');
      const message = inbox.shift();
      if (message) {
        if (message.kind === 'fail') throw rebuild(message.error);
        return message;
      }
      if (exited) throw exited;
      // About to wait: the worker must not be kept waiting for credit the main thread holds.
      handBackCredit();
      worker.ref();
      await new Promise<void>((resolve) => (waiting = resolve));
      worker.unref();
      waiting = undefined;
    }
  };
  const stop = () => {
    closed = true;
    void worker.terminate();
  };
  options.signal?.addEventListener('abort', stop, { once: true });

  let opened: FromWorker;
  try {
    opened = await next();
  } catch (error) {
    stop();
    throw error;
  }
  if (opened.kind !== 'opened') throw new Error(`the roster reader's worker thread answered ${opened.kind} before the header`);
  const { headers, file, sheet } = opened;
  const notes = [...opened.notes];

  const provenanceOf = (row: number): Provenance => (sheet !== undefined ? { file, sheet, row } : { file, row });
  async function* batches(): AsyncGenerator<SourceItem[]> {
    try {
      for (;;) {
        options.signal?.throwIfAborted();
        const message = await next();
        if (message.kind === 'end') {
          // Notes added while reading (an encoding switch, merged cells) come with the end.
          notes.splice(0, notes.length, ...message.notes);
          return;
        }
        if (message.kind !== 'batch') continue;
        if (inbox.length < STEADY_BATCHES_AHEAD && ++owed >= CREDIT_BATCHES) handBackCredit();
        const batch: SourceItem[] = [];
        let start = 0;
        for (let i = 0; i < message.rows.length; i++) {
          const row = message.rows[i]!;
          const end = message.ends[i]!;
          batch.push(row < 0 ? message.others[-1 - row]! : { kind: 'row', row: new PackedRow(message.text.slice(start, end), provenanceOf(row), headers) });
          start = end;
        }
        yield batch;
      }
    } finally {
      options.signal?.removeEventListener('abort', stop);
      stop();
    }
  }
  const rowBatches = batches();
  async function* items(): AsyncGenerator<SourceItem> {
    for await (const batch of rowBatches) yield* batch;
  }

  return {
    file,
    ...(opened.path !== undefined ? { path: opened.path } : {}),
    format: opened.format,
    ...(sheet !== undefined ? { sheet } : {}),
    headers,
    notes,
    items: items(),
    batches: rowBatches,
    close: stop,
    allowReadAhead: (batches) => {
      if (batches > STEADY_BATCHES_AHEAD && !closed) worker.postMessage({ kind: 'more', batches: batches - STEADY_BATCHES_AHEAD } satisfies ToWorker);
    },
  };
}

function startWorker(workerData: { config: SourceConfig; baseDir: string; readAhead: number }): Worker {
  // The reader keeps little alive (a batch, the tokenizer's text): a young generation of 8 MB
  // instead of the default measured 20 MB less peak RSS at 1M rows, at the same speed.
  const resourceLimits = { maxYoungGenerationSizeMb: 8 };
  return startModuleWorker(import.meta.url, 'read-worker', { workerData, resourceLimits });
}

function rebuild(error: { name: string; message: string; hint?: string; file?: string; userFacing?: boolean }): Error {
  const options = error.hint !== undefined ? { hint: error.hint } : {};
  if (error.name === 'SourceError' && error.file !== undefined) return new SourceError(error.file, error.message, options);
  return error.userFacing ? new UserFacingError(error.message, options) : new Error(error.message);
}
