// A pre-warmed rostersync process for the crash campaign: it loads the CLI (through tsx, as
// bin/rostersync.js does), says "ready", and runs `main(argv)` when told to. The campaign
// SIGKILLs it at a chosen moment of the sync itself, not of the seconds tsx needs to start.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../../../src/cli/main.ts');
process.once('message', async (message) => {
  process.chdir(message.cwd);
  Object.assign(process.env, message.env);
  const code = await main(message.argv);
  process.exitCode = code;
  process.disconnect();
});
process.send({ type: 'ready' });
