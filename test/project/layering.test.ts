/**
 * The layering of src/ (CONTRIBUTING.md, "Layers"; the rules in .dependency-cruiser.mjs), read
 * from the code's own imports by dependency-cruiser: no arrow against the layer order, no circle
 * of files or folders, no import of a state backend's files from outside src/state/, the emulator
 * on the service's contract alone. `npx depcruise src` prints the same verdict.
 */
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { cruise, format, type ICruiseResult, type IConfiguration } from 'dependency-cruiser';
import extractDepcruiseOptions from 'dependency-cruiser/config-utl/extract-depcruise-options';
import extractTSConfig from 'dependency-cruiser/config-utl/extract-ts-config';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const CONFIG = join(ROOT, '.dependency-cruiser.mjs');
const { LAYERS } = (await import(pathToFileURL(CONFIG).href)) as { LAYERS: { name: string; folders: string[] }[]; default: IConfiguration };

/** The verdict of the rules on the src/ of `baseDir`. */
async function cruiseSrc(baseDir: string): Promise<ICruiseResult> {
  const options = await extractDepcruiseOptions(CONFIG);
  const tsConfig = extractTSConfig(join(baseDir, 'tsconfig.json'));
  const reported = await cruise(['src'], { ...options, baseDir }, {}, { tsConfig });
  return reported.output as ICruiseResult;
}

/** The violations as `npx depcruise src` prints them, for a failure message a person can act on. */
async function printed(result: ICruiseResult): Promise<string> {
  return String((await format(result, { outputType: 'err' })).output);
}

describe('the layering of src/', () => {
  it('has no dependency against the rules', { timeout: 60_000 }, async () => {
    const result = await cruiseSrc(ROOT);
    expect(result.summary.totalCruised, 'the cruise read src/').toBeGreaterThan(100);
    expect(result.summary.violations, await printed(result)).toEqual([]);
  });

  it('places every folder of src/ in exactly one layer, and names no folder that is gone', () => {
    const entries = readdirSync(join(ROOT, 'src'), { withFileTypes: true }).map((entry) => entry.name);
    const placed = LAYERS.flatMap((layer) => layer.folders);
    expect(placed.length, 'a folder in two layers').toBe(new Set(placed).size);
    expect([...placed].sort()).toEqual([...entries].sort());
  });
});

describe('the rules catch what they exist for', () => {
  // A small tree of its own, one wrong import per rule: a rule that matches nothing passes every
  // tree, so each must be seen to bite.
  const tree = mkdtempSync(join(tmpdir(), 'rostersync-layering-'));
  afterAll(() => rmSync(tree, { recursive: true, force: true }));
  const files: Record<string, string> = {
    'tsconfig.json': JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', strict: true } }),
    // Against the order: the state importing the plan, which stands above it.
    'src/state/transfer.ts': "import { hashJson } from '../plan/canonical.js';\nexport const moved = hashJson;\n",
    'src/plan/canonical.ts': 'export const hashJson = (json: string) => json;\n',
    // Two folders of one layer are independent: apply may not use report.
    'src/apply/apply.ts': "import type { Report } from '../report/types.js';\nexport type Applied = Report;\n",
    'src/report/types.ts': 'export interface Report { runId: string }\n',
    // A backend's files are private to src/state/.
    'src/webhook/store.ts': "import { PG_SCHEMA } from '../state/postgres/migrations.js';\nexport const schema = PG_SCHEMA;\n",
    'src/state/postgres/migrations.ts': "export const PG_SCHEMA = 'rostersync';\n",
    // The emulator may not pace or retry as the client does.
    'src/emulator/router.ts': "import { retry } from '../client/retry-loop.js';\nexport const route = retry;\n",
    'src/client/retry-loop.ts': 'export const retry = () => undefined;\n',
    // The product never depends on the emulator.
    'src/sync/gather.ts': "import { route } from '../emulator/router.js';\nexport const gather = route;\n",
    // Files in a loop, and folders in a loop.
    'src/mapping/a.ts': "import { b } from './b.js';\nexport const a = () => b;\n",
    'src/mapping/b.ts': "import { a } from './a.js';\nexport const b = () => a;\n",
    'src/sources/csv/reader.ts': "import { decode } from '../encoding/decode.js';\nexport const read = decode;\n",
    'src/sources/encoding/decode.ts': "import { sniff } from '../csv/sniff.js';\nexport const decode = sniff;\n",
    'src/sources/csv/sniff.ts': 'export const sniff = () => 0;\n',
  };
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(tree, path)), { recursive: true });
    writeFileSync(join(tree, path), text);
  }

  it('names each wrong import under its rule', { timeout: 60_000 }, async () => {
    const result = await cruiseSrc(tree);
    const seen = result.summary.violations.map((violation) => `${violation.rule.name}: ${violation.from} -> ${violation.to}`);
    expect(seen, await printed(result)).toEqual(
      expect.arrayContaining([
        'layer: state: src/state/transfer.ts -> src/plan/canonical.ts',
        'layer: apply and report: src/apply/apply.ts -> src/report/types.ts',
        'state-backends-private: src/webhook/store.ts -> src/state/postgres/migrations.ts',
        'emulator-on-the-contract: src/emulator/router.ts -> src/client/retry-loop.ts',
        'emulator-started-by-entry-points: src/sync/gather.ts -> src/emulator/router.ts',
        expect.stringMatching(/^no-circular: src\/mapping\/[ab]\.ts -> src\/mapping\/[ab]\.ts$/),
        expect.stringMatching(/^no-circular-folders: src\/sources\/(csv|encoding) -> src\/sources\/(csv|encoding)$/),
      ]),
    );
  });
});
