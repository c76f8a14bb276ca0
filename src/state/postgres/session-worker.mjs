/**
 * The worker thread behind SyncConnection (sync-connection.ts): it holds the one PostgreSQL
 * session of a state store and answers each request on its port (SessionRequest → SessionReply,
 * typed in sync-connection.ts), then wakes the waiting main thread through the shared flag.
 *
 * Plain JavaScript on purpose: build copies it to dist/ as it is, so the same file runs compiled
 * and from the TypeScript sources. A .ts worker would have to register tsx first under the test
 * runner, about a second per state store opened.
 */
import pg from 'pg';
import { workerData } from 'node:worker_threads';

/** @type {{ flag: SharedArrayBuffer, port: import('node:worker_threads').MessagePort }} */
const { flag: sharedFlag, port } = workerData;
const flag = new Int32Array(sharedFlag);
/** @type {pg.Client | undefined} */
let client;
/** @type {string | null} */
let lost = null;

/** SQLSTATE classes 08 (connection) and 57P (operator intervention: shutdown, crash), and socket errors. */
function isLost(error) {
  const code = String(error?.code);
  return (
    lost !== null ||
    /^(08|57P)/.test(code) ||
    /^E(CONN|PIPE|TIMEDOUT|HOSTUNREACH|NETUNREACH|AI_AGAIN|NOTFOUND)/.test(code) ||
    /Connection terminated|not queryable|timeout/i.test(String(error?.message))
  );
}

function reply(message) {
  port.postMessage(message);
  Atomics.store(flag, 0, 1);
  Atomics.notify(flag, 0);
}

async function answer(request) {
  if (request.op === 'connect') {
    client = new pg.Client(request.config);
    client.on('error', (error) => {
      lost = error.message || 'connection lost';
    });
    client.on('end', () => {
      if (lost === null) lost = 'connection closed';
    });
    await client.connect();
    return [];
  }
  if (request.op === 'end') {
    if (client && lost === null) await client.end().catch(() => {});
    return [];
  }
  if (lost !== null) throw new Error(lost);
  const results = [];
  if (request.transaction) await client.query('BEGIN');
  try {
    for (const statement of request.statements) {
      const result = await client.query({ text: statement.text, values: statement.values, rowMode: statement.rowMode });
      results.push({ rows: result.rows, rowCount: result.rowCount ?? 0 });
    }
    if (request.transaction) await client.query('COMMIT');
  } catch (error) {
    if (request.transaction && lost === null) await client.query('ROLLBACK').catch(() => {});
    throw error;
  }
  return results;
}

port.on('message', (request) => {
  answer(request).then(
    (results) => reply({ ok: true, results }),
    (error) => reply({ ok: false, message: String(error?.message ?? error), code: error?.code, lost: isLost(error) }),
  );
});
