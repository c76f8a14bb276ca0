/**
 * The unit project's guard (unit-guard.ts, its setup file): inside a unit test, sockets, servers,
 * processes and host lookups throw, and a refusal the code under test catches is still recorded
 * (the guard's afterEach fails such a test; here the records are taken to check them).
 */
import { execFileSync, spawn } from 'node:child_process';
import { lookup } from 'node:dns/promises';
import { createServer } from 'node:http';
import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { takeViolations } from './unit-guard.js';

const REFUSAL = /unit tests may not .*\*\.integration\.test\.ts/;

afterEach(() => {
  // Whatever a test here provoked was checked by the test itself.
  takeViolations();
});

describe('the unit project guard', () => {
  it('refuses a TCP connection', () => {
    expect(() => connect(5432, '127.0.0.1')).toThrow(REFUSAL);
    expect(takeViolations()).toEqual([expect.stringMatching(/net\.connect/)]);
  });

  it('refuses to listen, so no emulator or webhook receiver starts', () => {
    const server = createServer();
    expect(() => server.listen(0, '127.0.0.1')).toThrow(/listen on a port/);
  });

  it('refuses an HTTP request even when the caller turns the error into a rejection', async () => {
    await expect(request('http://127.0.0.1:9/')).rejects.toThrow();
    expect(takeViolations().join('\n')).toMatch(/open a network connection/);
  });

  it('refuses to start a process through the ES module bindings', () => {
    expect(() => spawn('true')).toThrow(/start a process \(child_process\.spawn\)/);
    expect(() => execFileSync('true')).toThrow(/child_process\.execFileSync/);
  });

  it('refuses a host name lookup', () => {
    expect(() => lookup('localhost')).toThrow(/resolve a host name/);
  });
});
