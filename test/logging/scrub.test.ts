/** The logger never lets the key or an email through, however a value is shaped. */
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger, scrubText } from '../../src/logging/logger.js';

const KEY = 'secret-key-123456789';

function logged(write: (log: ReturnType<typeof createLogger>) => void): string {
  const out = new PassThrough();
  const chunks: Buffer[] = [];
  out.on('data', (c: Buffer) => chunks.push(c));
  const log = createLogger({ destination: out, pretty: false, secrets: [KEY] });
  write(log);
  return Buffer.concat(chunks).toString();
}

describe('log scrubbing', () => {
  it.each([
    ['plain', 'mail alice@example.org now', 'mail [email] now'],
    ['URL-encoded in a path', '/api/external/author-from-group/1/alice%40example.org/', '/api/external/author-from-group/1/[email]/'],
    ['the key', `key=${KEY}`, 'key=[redacted]'],
  ])('%s', (_name, input, expected) => {
    expect(scrubText(input, [KEY])).toBe(expected);
  });

  it('drops values nested too deep instead of printing them raw', () => {
    let nested: Record<string, unknown> = { email: 'deep@example.org', note: 'deep@example.org' };
    for (let i = 0; i < 12; i++) nested = { inner: nested };
    const line = logged((log) => log.info({ nested }, 'deep'));
    expect(line).not.toContain('deep@example.org');
  });

  it('redacts the key header whatever its case', () => {
    const line = logged((log) => log.info({ headers: { 'X-ApiKey': 'not-the-configured-key-but-a-key' } }, 'request'));
    expect(line).not.toContain('not-the-configured-key-but-a-key');
  });
});

describe('the human log format', () => {
  it('writes one line per entry: no pretty-printed block after the run summary', () => {
    const out = new PassThrough();
    const chunks: Buffer[] = [];
    out.on('data', (c: Buffer) => chunks.push(c));
    const log = createLogger({ destination: out, pretty: true, color: false });
    log.info({ runId: 'r1', outcome: 'success', counts: { create: { planned: 2, done: 2 }, update: { planned: 0, done: 0 } } }, 'run finished');
    const text = Buffer.concat(chunks).toString();
    expect(text.trimEnd().split('\n')).toHaveLength(1);
    expect(text).toContain('run finished');
    expect(text).toContain('"outcome":"success"');
  });
});
