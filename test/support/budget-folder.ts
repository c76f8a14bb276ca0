/**
 * Global setup of every project (vitest.config.ts): the runs the tests start share a pace with no
 * one outside the suite. Without it each emulator (a new port, so a new budget name) left a budget
 * file and its write-ahead log in the user's own `<TMPDIR>/rostersync-budget-<uid>`, about 4 MB a
 * test, and a test could meet the pace of a rostersync run the user had going. Child processes
 * inherit the variable; tests that need the default folder give their children an env of their own.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export default function setup(): () => void {
  const dir = mkdtempSync(join(tmpdir(), 'rostersync-test-budget-'));
  process.env.ROSTERSYNC_BUDGET_DIR = dir;
  return () => rmSync(dir, { recursive: true, force: true });
}
