/** The identity logic of lock liveness (src/state/liveness.ts): when a pid can be trusted. */
import { describe, expect, it } from 'vitest';
import { livenessRule, lockIdentityOf, ourPidScope, parseLockIdentity, pidScopeFrom } from '../../src/state/liveness.js';

const ours = { bootId: 'b0dc4140-da16-4470-a54d-e198abda75b6', pidNamespace: 'pid:[4026531836]' };

describe('lock liveness rule', () => {
  it('consults the process only on the same boot and in the same PID namespace', () => {
    expect(livenessRule(`${ours.bootId}:123:${ours.pidNamespace}`, ours)).toBe('process');
    expect(livenessRule(`${ours.bootId}:123:pid:[4026532999]`, ours)).toBe('heartbeat');
    expect(livenessRule(`another-boot:123:${ours.pidNamespace}`, ours)).toBe('heartbeat');
  });

  it('falls back to the heartbeat for a lock that recorded no namespace, or where ours is unknown', () => {
    expect(livenessRule(`${ours.bootId}:123`, ours)).toBe('heartbeat');
    expect(livenessRule(null, ours)).toBe('heartbeat');
    expect(livenessRule('', ours)).toBe('heartbeat');
    expect(livenessRule(`${ours.bootId}:123:${ours.pidNamespace}`, null)).toBe('heartbeat');
  });

  it('records boot, start ticks and namespace for this process, and parses them back', () => {
    const scope = ourPidScope();
    if (scope === null) return expect(lockIdentityOf(process.pid)).toBeNull();
    const identity = lockIdentityOf(process.pid)!;
    expect(parseLockIdentity(identity)).toEqual({ ...scope, startTicks: expect.stringMatching(/^\d+$/) });
    expect(livenessRule(identity, scope)).toBe('process');
    expect(scope.pidNamespace).toMatch(/^pid:\[\d+\]$/);
  });
});

describe('a PID namespace that sees another namespace\'s /proc', () => {
  const seen = { ...ours, pid: 2 };
  it('has no scope when /proc/self names us by another pid, so every lock is judged by its heartbeat', () => {
    // `unshare --pid --fork` without --mount-proc: we are pid 2, the host's /proc calls us 48213.
    const scope = pidScopeFrom({ ...seen, procSelf: '48213' });
    expect(scope).toBeNull();
    expect(livenessRule(`${ours.bootId}:123:${ours.pidNamespace}`, scope)).toBe('heartbeat');
  });

  it('keeps the process rule where /proc is of our namespace', () => {
    const scope = pidScopeFrom({ ...seen, procSelf: '2' });
    expect(scope).toEqual(ours);
    expect(livenessRule(`${ours.bootId}:123:${ours.pidNamespace}`, scope)).toBe('process');
  });
});
