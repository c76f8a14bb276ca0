/**
 * A hint that names a flag the CLI does not have sends the user to an error of its own: every
 * `--flag` in the hints of the client's errors must be an option of `rostersync sync`, the command
 * that makes the most calls.
 */
import { describe, expect, it, vi } from 'vitest';
import {
  AmbiguousGroupCreationError,
  NetworkError,
  RefusedError,
  ResponseShapeError,
  TimeoutError,
  UnexpectedResponseError,
  errorFromStatus,
  type ServiceError,
} from '../../src/client/index.js';
import { runCli } from '../support/cli.js';

const details = { method: 'POST', path: '/p/' };

function clientErrors(): ServiceError[] {
  return [
    ...[301, 400, 401, 403, 404, 408, 422, 429, 500, 503].map((status) => errorFromStatus({ ...details, status })),
    errorFromStatus({ ...details, status: 308, location: 'https://h/p//' }),
    new NetworkError('m', details),
    new TimeoutError('m', { ...details, timeoutMs: 1 }),
    new UnexpectedResponseError('m', details),
    new ResponseShapeError('m', { ...details, fieldPaths: [] }),
    new RefusedError('m', details),
    new AmbiguousGroupCreationError({ ...details, groupName: 'G' }),
  ];
}

async function syncOptions(): Promise<string[]> {
  // yargs prints completions with console.log, as the shell's completion function reads them.
  const log = vi.spyOn(console, 'log').mockImplementation(() => {});
  try {
    expect((await runCli(['--get-yargs-completions', 'rostersync', 'sync', '--'])).code).toBe(0);
    return log.mock.calls.map((call) => String(call[0]));
  } finally {
    log.mockRestore();
  }
}

describe('flags named in the hints of service errors', () => {
  it('are options of rostersync sync', async () => {
    const named = new Set(clientErrors().flatMap((error) => (error.hint ?? '').match(/--[a-z][a-z-]*/g) ?? []));
    expect([...named]).toContain('--max-rps');
    const options = await syncOptions();
    for (const flag of named) expect(options, `hint names ${flag}`).toContain(flag);
  });
});
