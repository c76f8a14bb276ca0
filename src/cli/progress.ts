/**
 * A one-line progress bar on stderr when it is a TTY (records done / total, rate, ETA).
 * Off a TTY it prints nothing: structured logs and the final summary tell the story.
 */
import type { CliIo } from './io.js';

export function progressReporter(io: CliIo, now: () => number = Date.now): { update: (done: number, total: number) => void; done: () => void } {
  const stream = io.stderr as NodeJS.WriteStream;
  if (!stream.isTTY) return { update: () => {}, done: () => {} };
  const started = now();
  let lastDraw = 0;
  let drawn = false;
  return {
    update(done, total) {
      const t = now();
      if (t - lastDraw < 100 && done < total) return;
      lastDraw = t;
      drawn = true;
      const rate = done / Math.max(0.001, (t - started) / 1000);
      const eta = rate > 0 ? Math.round((total - done) / rate) : 0;
      const width = 30;
      const filled = total === 0 ? width : Math.round((done / total) * width);
      stream.write(`\r[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${done}/${total}  ${rate.toFixed(1)}/s  ETA ${eta}s   `);
    },
    done() {
      if (drawn) stream.write('\n');
      drawn = false;
    },
  };
}
