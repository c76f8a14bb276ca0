import { defineConfig } from 'vitest/config';

/**
 * Projects, all run by `npm test`. A test file's project follows from its name or folder, never
 * from a list:
 * - `unit`: every `*.test.ts` not claimed below: in memory and on the local filesystem only (SQLite
 *   included), no socket, no process, no PostgreSQL, no Chromium: test/support/unit-guard.ts makes
 *   them throw. The inner loop: `npm run test:unit`. Its files share processes and modules
 *   (`isolate: false`, half the CPU time): a unit test leaves no global state behind;
 * - `integration`: `*.integration.test.ts`, the emulator over real HTTP on 127.0.0.1, webhooks,
 *   SMTP, the CLI run as a child process, and tests that need a fresh process of their own;
 * - `postgres`: `*.pg.test.ts`, against a real PostgreSQL server the file starts;
 * - `browser`: `*.browser.test.ts`, pages rendered in Chromium;
 * - `property`: `*.property.test.ts`, many random scenarios, each replayed from its seed;
 * - `campaign`: test/campaign/, the crash and fault campaigns (many real runs killed and resumed);
 * - `package`: test/package/, the built package installed and run as a user would.
 */
const FOLDERS = ['test/campaign/**', 'test/package/**'];
const SUFFIXED = ['integration', 'pg', 'browser', 'property'].map((suffix) => `test/**/*.${suffix}.test.ts`);

function bySuffix(name: string, suffix: string) {
  return { extends: true as const, test: { name, include: [`test/**/*.${suffix}.test.ts`], exclude: FOLDERS } };
}

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // The suite's own shared-budget folder, removed at the end (test/support/budget-folder.ts).
    globalSetup: ['test/support/budget-folder.ts'],
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['test/**/*.test.ts'],
          exclude: [...FOLDERS, ...SUFFIXED],
          setupFiles: ['test/support/unit-guard.ts'],
          isolate: false,
        },
      },
      bySuffix('integration', 'integration'),
      bySuffix('postgres', 'pg'),
      bySuffix('browser', 'browser'),
      bySuffix('property', 'property'),
      { extends: true, test: { name: 'campaign', include: ['test/campaign/**/*.test.ts'] } },
      { extends: true, test: { name: 'package', include: ['test/package/**/*.test.ts'] } },
    ],
  },
});
