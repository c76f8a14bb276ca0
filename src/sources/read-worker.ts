/**
 * The worker side of `openSourceInWorker` (read-in-worker.ts): opens the roster with the usual
 * reader and streams its items to the main thread in batches. Rows of text cells travel as one
 * string per batch (each row's cells joined as in `SourceRow.cellsText`), not as objects, so the
 * main thread's cost per row stays small.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { SourceConfig } from './options.js';
import { UserFacingError } from '../errors/user-facing-error.js';
import { openSource } from './open-source.js';
import { SourceError } from './source-error.js';
import { cellsTextOf } from './cells-text.js';
import type { SourceItem } from './types.js';
import { ROWS_PER_BATCH, type FromWorker, type ToWorker } from './read-in-worker.js';

const { config, baseDir, readAhead } = workerData as { config: SourceConfig; baseDir: string; readAhead: number };
const port = parentPort!;

let credit = readAhead;
let wake: (() => void) | undefined;
port.on('message', (message: ToWorker) => {
  if (message.kind === 'more') {
    credit += message.batches;
    wake?.();
  }
});
const send = (message: FromWorker) => port.postMessage(message);

try {
  const opened = await openSource(config, { baseDir, packRows: true });
  const headers = opened.headers;
  send({ kind: 'opened', file: opened.file, path: opened.path, format: opened.format, sheet: opened.sheet, headers, notes: [...opened.notes] });
  // rows[i] >= 0: a row of text cells (its line or row number), its text ending at ends[i] in
  // `text`; rows[i] < 0: item -1 - rows[i] of `others` (an error, or a row with other cells).
  let rows: number[] = [];
  let ends: number[] = [];
  let text = '';
  let others: SourceItem[] = [];
  const flush = async (): Promise<void> => {
    while (credit === 0) await new Promise<void>((resolve) => (wake = resolve));
    credit--;
    const numbers = Int32Array.from(rows);
    const offsets = Uint32Array.from(ends);
    // Copied, not transferred: a transfer (detaching two small buffers) measured about 100 µs a
    // batch, 0.4 s of the reader's 3.5 s at a million rows; copying 2 KB costs next to nothing.
    send({ kind: 'batch', rows: numbers, ends: offsets, text, others });
    rows = [];
    ends = [];
    text = '';
    others = [];
  };
  for await (const item of opened.items) {
    const cells = item.kind === 'row' ? (item.row.cellsText ?? cellsTextOf(item.row.values, headers)) : undefined;
    if (item.kind === 'row' && cells !== undefined) {
      rows.push(item.row.provenance.row);
      text += cells;
    } else {
      rows.push(-others.push(item));
    }
    ends.push(text.length);
    if (rows.length === ROWS_PER_BATCH) await flush();
  }
  if (rows.length > 0) await flush();
  send({ kind: 'end', notes: [...opened.notes] });
} catch (error) {
  const failure = error as Error;
  send({
    kind: 'fail',
    error: {
      name: failure.name,
      message: failure.message,
      ...(error instanceof UserFacingError ? { userFacing: true, ...(error.hint !== undefined ? { hint: error.hint } : {}) } : {}),
      ...(error instanceof SourceError ? { file: error.file } : {}),
    },
  });
}
port.close();
