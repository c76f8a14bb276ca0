import { defineConfig } from 'vitest/config';

/**
 * Three projects, all run by `npm test`:
 * - `fast`: every unit and integration test (emulator over real HTTP included), the inner loop:
 *   `npm run test:fast`;
 * - `campaign`: the crash and fault campaigns (many real runs killed and resumed), the slow part;
 * - `package`: the built package installed and run as a user would.
 */
const SLOW = ['test/campaign/**', 'test/package/**'];

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    projects: [
      { extends: true, test: { name: 'fast', include: ['test/**/*.test.ts'], exclude: SLOW } },
      { extends: true, test: { name: 'campaign', include: ['test/campaign/**/*.test.ts'] } },
      { extends: true, test: { name: 'package', include: ['test/package/**/*.test.ts'] } },
    ],
  },
});
