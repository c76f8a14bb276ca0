/** Exit codes of a run that ends in an error: operator-facing errors keep theirs; a bug after writes began does not claim "nothing was written". */
import { describe, expect, it } from 'vitest';
import { NotFoundError } from '../../src/client/errors.js';
import { EXIT, UserFacingError } from '../../src/errors/user-facing-error.js';
import { exitCodeOf, FailedAfterWritesError, failureDuringApply } from '../../src/sync/exit-code.js';

describe('failureDuringApply', () => {
  it('keeps an error meant for the operator as it is', () => {
    const refusal = new UserFacingError('group creation was ambiguous', { exitCode: EXIT.unavailable });
    expect(failureDuringApply(refusal)).toBe(refusal);
    const notFound = new NotFoundError('no such group', { method: 'POST', path: '/x', status: 404 });
    expect(failureDuringApply(notFound)).toBe(notFound);
  });

  it('wraps an unexpected failure: it says writes may have happened and exits 7, not 1', () => {
    const bug = new TypeError("Cannot read properties of undefined (reading 'hash')");
    const error = failureDuringApply(bug);
    expect(error).toBeInstanceOf(FailedAfterWritesError);
    expect(error.exitCode).toBe(EXIT.failedAfterWrites);
    expect(EXIT.failedAfterWrites).toBe(7);
    expect(error.message).toBe("unexpected failure after writes began: Cannot read properties of undefined (reading 'hash'). Some writes may have reached the service.");
    expect(error.cause).toBe(bug);
    expect(error.stack).toContain('caused by TypeError');
  });
});

describe('exitCodeOf', () => {
  it.each([
    { error: new UserFacingError('x', { exitCode: EXIT.auth }), code: EXIT.auth },
    { error: new Error('a bug before any write'), code: EXIT.usage },
    { error: 'a thrown string', code: EXIT.usage },
  ])('$error -> $code', ({ error, code }) => {
    expect(exitCodeOf(error)).toBe(code);
  });
});
