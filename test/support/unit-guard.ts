/**
 * Setup file of the `unit` project (vitest.config.ts): a unit test runs in memory and on the local
 * filesystem only. Opening a socket (client or server: the emulator, PostgreSQL, SMTP, webhooks),
 * starting a process (a CLI binary, embedded PostgreSQL, Chromium) or resolving a host name throws
 * here, and is also recorded, so a test that catches the error still fails in the hook below.
 *
 * A test that needs any of these belongs to another project: name it `*.integration.test.ts`
 * (loopback HTTP, child processes), `*.pg.test.ts` (PostgreSQL) or `*.browser.test.ts` (Chromium).
 * Worker threads stay allowed (the roster can be read in one); what runs in them is not guarded,
 * but a PostgreSQL connection there needs a server, and starting one is a process.
 */
import childProcess from 'node:child_process';
import dgram from 'node:dgram';
import dns from 'node:dns';
import { syncBuiltinESMExports } from 'node:module';
import net from 'node:net';
import tls from 'node:tls';
import { afterEach } from 'vitest';

const violations: string[] = [];

function refuse(what: string): never {
  const message =
    `unit tests may not ${what}. Move this test to the project it needs: ` +
    'name the file *.integration.test.ts (loopback HTTP, child processes), *.pg.test.ts (PostgreSQL) ' +
    'or *.browser.test.ts (Chromium), as CONTRIBUTING.md explains.';
  violations.push(message);
  throw new Error(message);
}

function forbid<T extends object>(target: T, names: readonly (keyof T & string)[], what: (name: string) => string): void {
  for (const name of names) {
    Object.defineProperty(target, name, {
      configurable: true,
      writable: true,
      value: function forbidden(): never {
        return refuse(what(name));
      },
    });
  }
}

forbid(net.Socket.prototype, ['connect'], () => 'open a network connection (net.Socket#connect)');
forbid(net.Server.prototype, ['listen'], () => 'listen on a port (net.Server#listen, http.createServer().listen)');
forbid(net, ['connect', 'createConnection'], (name) => `open a network connection (net.${name})`);
forbid(tls, ['connect'], () => 'open a network connection (tls.connect)');
forbid(dgram, ['createSocket'], () => 'open a UDP socket (dgram.createSocket)');
forbid(dns, ['lookup', 'resolve', 'resolve4', 'resolve6'], (name) => `resolve a host name (dns.${name})`);
forbid(dns.promises, ['lookup', 'resolve', 'resolve4', 'resolve6'], (name) => `resolve a host name (dns.promises.${name})`);
forbid(childProcess, ['spawn', 'spawnSync', 'exec', 'execSync', 'execFile', 'execFileSync', 'fork'], (name) => `start a process (child_process.${name})`);
// `import { spawn } from 'node:child_process'` binds to the ES module's exports: bring them in line.
syncBuiltinESMExports();

/** The refusals recorded since the last call, and forgets them (for the guard's own test). */
export function takeViolations(): string[] {
  return violations.splice(0);
}

afterEach(() => {
  const [first] = takeViolations();
  if (first) throw new Error(`this test tried what the unit project forbids (the error was caught on the way): ${first}`);
});
