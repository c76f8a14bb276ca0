/**
 * `rostersync demo` (what `npm start` runs): starts the emulator in-process with its built-in
 * fixture (the organization whose custom fields the sample mappings name), syncs `pipelines/demo.yaml` into it, then syncs again to show that an unchanged
 * roster makes zero write calls. State goes to a fresh temporary directory, so every demo starts
 * from an empty service, and the reports go to `reports/` in the current directory (or `--dir`):
 * never beside the pipeline, which after a global install is the package folder, read-only for
 * a user who is not root.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Argv } from 'yargs';
import { startEmulator } from '../../emulator/server.js';
import { runSync } from '../../sync/run-sync.js';
import { action, type CommandFactory } from '../command.js';
import { printResult } from './sync.js';

const PROJECT_ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const DEMO_KEY = 'demo-key-0123456789';

interface DemoArgs {
  pipeline?: string;
  fixture?: string;
  'api-key'?: string;
  dir?: string;
  [flag: string]: unknown;
}

/** `--dir`, else the container's ROSTERSYNC_REPORT_DIR (its /reports volume), else ./reports. */
function demoReportDir(dir: string | undefined, cwd: string, env: NodeJS.ProcessEnv): string {
  if (dir !== undefined) return resolve(cwd, dir, 'reports');
  return env.ROSTERSYNC_REPORT_DIR ? resolve(cwd, env.ROSTERSYNC_REPORT_DIR) : resolve(cwd, 'reports');
}

export const demoCommand: CommandFactory = (ctx) => ({
  command: 'demo',
  describe: 'Sync the sample roster into an in-process emulator and print the report (what `npm start` runs)',
  builder: (y: Argv) =>
    y
      .option('pipeline', { type: 'string', default: join(PROJECT_ROOT, 'pipelines/demo.yaml'), describe: 'Pipeline to run' })
      .option('fixture', { type: 'string', describe: 'Emulator fixture (default: the built-in demo organization)' })
      .option('api-key', { type: 'string', default: DEMO_KEY, describe: 'Key of the fixture organization (not a secret: emulator only)' })
      .option('dir', { type: 'string', describe: 'Folder that receives the reports, under reports/ (default: the current directory, or ROSTERSYNC_REPORT_DIR when set, as in the container image)' }),
  handler: action(ctx, async (args: DemoArgs) => {
    const out = ctx.io.stdout;
    const emulator = await startEmulator(args.fixture ? { fixturePath: resolve(ctx.io.cwd, args.fixture) } : {});
    const stateDir = await mkdtemp(join(tmpdir(), 'rostersync-demo-'));
    try {
      out.write(`emulator listening on ${emulator.url} (fixture: ${args.fixture ?? 'built-in demo organization'})\n\n`);
      const options = {
        pipelinePath: resolve(ctx.io.cwd, String(args.pipeline)),
        service: { baseUrl: emulator.url, apiKey: String(args['api-key']) },
        stateDir,
        // The demo's state is throw-away: never the shared database ROSTERSYNC_STATE_URL may name.
        // Its reports (and their run history) go where the user is, whatever the pipeline says.
        env: { ...ctx.io.env, ROSTERSYNC_STATE_URL: '', ROSTERSYNC_REPORT_DIR: demoReportDir(args.dir, ctx.io.cwd, ctx.io.env) },
        cwd: ctx.io.cwd,
        ...(ctx.io.signal ? { signal: ctx.io.signal } : {}),
      };
      out.write('first sync: the group is created (an explicit first run: --create-group) with every valid record of the roster\n');
      const first = await runSync({ ...options, createGroup: true });
      printResult(first, {}, ctx.io);
      if (first.exitCode !== 0) return first.exitCode;

      const writesBefore = emulator.stats.snapshot().writes.total;
      out.write('\nsecond sync of the unchanged roster:\n');
      const second = await runSync(options);
      printResult(second, {}, ctx.io);
      out.write(`\nwrite calls made by the second sync: ${emulator.stats.snapshot().writes.total - writesBefore}\n`);
      out.write(`open the admin report: ${first.written.files.html}\n`);
      return second.exitCode;
    } finally {
      await emulator.close();
      await rm(stateDir, { recursive: true, force: true });
    }
  }),
});
