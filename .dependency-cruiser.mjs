/**
 * The layering of src/ (CONTRIBUTING.md, "Layers"), checked by test/project/layering.test.ts in
 * `npm test`, or by hand: `npx depcruise src`.
 *
 * LAYERS runs from the ground up. A folder imports only folders of the layers below its own;
 * the folders of one layer are independent of each other. Type-only imports count: a type is as
 * much a dependency of the design as a call.
 */

/** @type {{ name: string, folders: string[], why: string }[]} */
export const LAYERS = [
  { name: 'foundations', folders: ['errors', 'personal-data', 'runtime'], why: 'what every folder may use: errors a person reads, personal data kept safe, the process' },
  { name: 'logging and pace', folders: ['logging', 'rate-limit'], why: 'the log, and the rate limiter with its shared budget (its PostgreSQL session is handed in from state/)' },
  { name: 'the two edges', folders: ['client', 'sources'], why: 'the service (typed client, endpoint table) and the roster files (CSV, XLSX readers)' },
  { name: 'rows to records, and the service emulated', folders: ['mapping', 'emulator'], why: 'mapping a row to a record; the emulator, beside the product, on the contract alone' },
  { name: 'the operator\'s files', folders: ['config'], why: 'loads the pipeline and mapping files against the schemas of the folders they configure' },
  { name: 'state', folders: ['state'], why: 'inventory, journal, runs, lock, claims; SQLite and PostgreSQL behind one contract' },
  { name: 'plan', folders: ['plan'], why: 'pure planning against the inventory' },
  { name: 'apply and report', folders: ['apply', 'report', 'spill'], why: 'the only writer to the service (and what it journals to undo each write); the report of a run; the plan\'s pages on disk' },
  { name: 'after a run', folders: ['revert', 'metrics', 'notify'], why: 'undoing a run from its journal; figures and alerts from its report' },
  { name: 'commands\' work', folders: ['sync', 'webhook', 'init'], why: 'one run and its orchestration; the webhook receiver; drafting a pipeline' },
  { name: 'review', folders: ['review'], why: 'plans and applies runs in pull requests through sync/' },
  { name: 'entry points', folders: ['cli', 'index.ts'], why: 'the command line and the library entry: nothing imports them' },
];

/** `index.ts` is the one file at the root of src/; every other entry is a folder. */
const place = (entry) => (entry.endsWith('.ts') ? `${entry.replace(/\./g, '\\.')}$` : `${entry}/`);
const anyOf = (entries) => `^src/(${entries.map(place).join('|')})`;

const layerRules = LAYERS.map((layer, index) => ({
  name: `layer: ${layer.name}`,
  comment: `${layer.folders.join(', ')} import only the layers below (${LAYERS.slice(0, index).map((below) => below.name).join('; ') || 'none'})`,
  severity: 'error',
  from: { path: anyOf(layer.folders) },
  // The same or a higher layer, but not the importing folder itself ($1: the folder matched by `from`).
  to: { path: anyOf(LAYERS.slice(index).flatMap((above) => above.folders)), pathNot: '^src/$1' },
}));

/** @type {import('dependency-cruiser').IConfiguration} */
export default {
  forbidden: [
    ...layerRules,
    {
      name: 'no-circular',
      comment: 'files that import each other in a loop, type-only imports included',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'no-circular-folders',
      comment: 'folders that import each other in a loop',
      severity: 'error',
      scope: 'folder',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'state-backends-private',
      comment: 'code above the state sees its contract (state/backend.ts) and its entries (state/*.ts), never a backend\'s files',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/state/' },
      to: { path: '^src/state/(postgres|sqlite)/' },
    },
    {
      name: 'emulator-on-the-contract',
      comment:
        'the emulator takes from the client only what describes the service: the endpoint table it serves (client/endpoints.ts), the ' +
        'shapes of requests and answers (client/schemas.ts) and what a path may carry (client/path-rules.ts); nothing of how the client ' +
        'sends, retries or paces, which would make the emulator easier than the service',
      severity: 'error',
      from: { path: '^src/emulator/' },
      to: { path: '^src/', pathNot: '^src/(emulator/|runtime/|errors/|client/(endpoints|schemas|path-rules)\\.ts$)' },
    },
    {
      name: 'emulator-started-by-entry-points',
      comment: 'only the command line and the library entry start the emulator; the product never depends on it',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/(emulator/|cli/|index\\.ts$)' },
      to: { path: '^src/emulator/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    includeOnly: '^src/',
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.mjs', '.js', '.json'] },
  },
};
