/**
 * A run that spools its new records to disk (a first sync or a migration of many thousand rows)
 * keeps a small live heap, but it allocates gigabytes of short-lived objects on the way (each row
 * mapped, each record read back for apply and for the report). V8 lets the old generation grow
 * to several times the live heap before a full collection when allocation is that fast: a 1M-row
 * first sync with about 130 MB live peaked at 785 MB of RSS. From the first spill on, the heap may
 * only grow by a quarter past what the last full collection left: the peak halves for about 13 %
 * more time (docs/benchmarks.md). A run with a state and a new row pays it too while the same-person
check reads the inventory (every owned record parsed, briefly); a nightly run with no new row never
does.
 *
 * The setting is the process's: a `--heap-growing-percent` given to node (NODE_OPTIONS) wins.
 */
import { setFlagsFromString } from 'node:v8';

const FLAG = '--heap-growing-percent';
const GROWING_PERCENT = 25;
let bounded = false;

export function boundHeapGrowth(): void {
  if (bounded) return;
  bounded = true;
  const given = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)].some((arg) => arg.replace(/_/g, '-').startsWith(FLAG));
  if (!given) setFlagsFromString(`${FLAG}=${GROWING_PERCENT}`);
}
