/** The one reading of the log level: flag over environment over the command's default. */
import { describe, expect, it } from 'vitest';
import { EXIT, UserFacingError } from '../../src/errors/user-facing-error.js';
import { resolveLogLevel } from '../../src/logging/level.js';

describe('resolveLogLevel', () => {
  it.each([
    { flag: undefined, env: {}, expected: 'warn' },
    { flag: undefined, env: { ROSTERSYNC_LOG_LEVEL: 'debug' }, expected: 'debug' },
    { flag: undefined, env: { ROSTERSYNC_LOG_LEVEL: ' INFO ' }, expected: 'info' },
    { flag: 'error', env: { ROSTERSYNC_LOG_LEVEL: 'debug' }, expected: 'error' },
    { flag: undefined, env: { ROSTERSYNC_LOG_LEVEL: '' }, expected: 'warn' },
  ])('flag $flag, env $env -> $expected', ({ flag, env, expected }) => {
    expect(resolveLogLevel({ flag, env, fallback: 'warn' })).toBe(expected);
  });

  it.each([
    { flag: 'verbose', env: {}, names: /--log-level "verbose" is not a log level/ },
    { flag: undefined, env: { ROSTERSYNC_LOG_LEVEL: 'verbose' }, names: /ROSTERSYNC_LOG_LEVEL "verbose" is not a log level/ },
  ])('refuses $flag / $env as a usage error naming the levels', ({ flag, env, names }) => {
    let caught: unknown;
    try {
      resolveLogLevel({ flag, env, fallback: 'warn' });
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(UserFacingError);
    expect((caught as UserFacingError).message).toMatch(names);
    expect((caught as UserFacingError).hint).toBe('Use one of fatal, error, warn, info, debug, trace, silent.');
    expect((caught as UserFacingError).exitCode).toBe(EXIT.usage);
  });
});
