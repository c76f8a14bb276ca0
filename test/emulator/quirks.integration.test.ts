/** The emulator's quirks (docs/emulator.md, "Quirks"): each inconvenient behaviour, on demand. */
import { fetch } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { ENDPOINTS } from '../../src/client/endpoints.js';
import type { RunningEmulator } from '../../src/emulator/server.js';
import { UNKNOWN_KIND_FIELD } from '../../src/emulator/quirks.js';
import { call, FIELD, KEY, OPTION, PRESET_GROUP_ID, rawPath, recordPath, startTestEmulator } from './helpers.js';
import { main } from '../../src/cli/main.js';
import { outputSink, runCli } from '../support/cli.js';

let emulator: RunningEmulator | undefined;
afterEach(async () => {
  await emulator?.close();
  emulator = undefined;
});

async function start(quirks: Parameters<typeof startTestEmulator>[0] = {}): Promise<RunningEmulator> {
  emulator = await startTestEmulator(quirks);
  return emulator;
}

describe('okFalse', () => {
  it('answers 200 {"ok": false} to writes of the listed client_ids and changes nothing', async () => {
    const emu = await start({ quirks: { okFalse: ['pre-1', 'refused'] } });
    const del = await call(emu, 'DELETE', recordPath(PRESET_GROUP_ID, 'pre-1'));
    expect(del).toMatchObject({ status: 200, body: { ok: false } });
    const put = await call(emu, 'POST', recordPath(PRESET_GROUP_ID, 'refused'), { body: { name: 'R' } });
    expect(put).toMatchObject({ status: 200, body: { ok: false } });
    const patch = await call(emu, 'POST', recordPath(PRESET_GROUP_ID, 'pre-1', true), { body: { name: 'Changed' } });
    expect(patch).toMatchObject({ status: 200, body: { ok: false } });
    expect((await call(emu, 'GET', recordPath(PRESET_GROUP_ID, 'pre-1'))).body.name).toBe('Preset Person');
    expect((await call(emu, 'GET', recordPath(PRESET_GROUP_ID, 'refused'))).status).toBe(404);
    // Others are written as usual.
    expect((await call(emu, 'POST', recordPath(PRESET_GROUP_ID, 'other'), { body: { name: 'O' } })).body).toEqual({ ok: true });
  });

  it('"*" refuses every write, and can be switched at run time', async () => {
    const emu = await start();
    const set = await fetch(`${emu.url}/_emulator/quirks`, { method: 'POST', body: JSON.stringify({ okFalse: ['*'] }) });
    expect(await set.json()).toMatchObject({ okFalse: ['*'] });
    expect((await call(emu, 'POST', recordPath(PRESET_GROUP_ID, 'any'), { body: { name: 'A' } })).body).toEqual({ ok: false });
    await fetch(`${emu.url}/_emulator/quirks`, { method: 'POST', body: JSON.stringify({ okFalse: [] }) });
    expect((await call(emu, 'POST', recordPath(PRESET_GROUP_ID, 'any'), { body: { name: 'A' } })).body).toEqual({ ok: true });
  });

  it('refuses an unknown quirk naming it', async () => {
    const emu = await start();
    const res = await fetch(`${emu.url}/_emulator/quirks`, { method: 'POST', body: JSON.stringify({ okfalse: [] }) });
    expect(res.status).toBe(400);
    expect(JSON.stringify(await res.json())).toContain('okfalse');
  });
});

describe('optionOrder', () => {
  const body = { name: 'M', [FIELD.areas]: [OPTION.cardiology, OPTION.oncology] };

  it('as-sent by default', async () => {
    const emu = await start();
    await call(emu, 'POST', recordPath(PRESET_GROUP_ID, 'm'), { body });
    expect((await call(emu, 'GET', recordPath(PRESET_GROUP_ID, 'm'))).body[FIELD.areas]).toEqual([OPTION.cardiology, OPTION.oncology]);
  });

  it('service: the reverse of the field options, whatever was sent', async () => {
    const emu = await start({ quirks: { optionOrder: 'service' } });
    await call(emu, 'POST', recordPath(PRESET_GROUP_ID, 'm'), { body: { ...body, [FIELD.areas]: [OPTION.oncology, OPTION.cardiology] } });
    expect((await call(emu, 'GET', recordPath(PRESET_GROUP_ID, 'm'))).body[FIELD.areas]).toEqual([OPTION.cardiology, OPTION.oncology]);
    await call(emu, 'POST', recordPath(PRESET_GROUP_ID, 'n'), { body: { ...body, [FIELD.areas]: [OPTION.cardiology, OPTION.oncology] } });
    expect((await call(emu, 'GET', recordPath(PRESET_GROUP_ID, 'n'))).body[FIELD.areas]).toEqual([OPTION.cardiology, OPTION.oncology]);
  });
});

describe('errorShape', () => {
  const missingName = () => call(emulator!, 'POST', recordPath(PRESET_GROUP_ID, 'x'), { body: { emails: [] } });

  it('detail', async () => {
    await start({ quirks: { errorShape: 'detail' } });
    expect(await missingName()).toMatchObject({ status: 400, body: { detail: 'field "name" is required' } });
  });

  it('field-errors: the field the message names, else non_field_errors', async () => {
    await start({ quirks: { errorShape: 'field-errors' } });
    expect(await missingName()).toMatchObject({ status: 400, body: { name: ['field "name" is required'] } });
    const missing = await call(emulator!, 'GET', recordPath(PRESET_GROUP_ID, 'nobody'));
    expect(missing.status).toBe(404);
    expect(Object.keys(missing.body)).toEqual(['non_field_errors']);
  });

  it('html: an HTML page with the same 4xx status', async () => {
    await start({ quirks: { errorShape: 'html' } });
    const res = await missingName();
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toContain('text/html');
    expect(res.body).toContain('<h1>Error 400</h1>');
    expect(res.body).toContain('field "name" is required');
    const unauthorized = await call(emulator!, 'GET', recordPath(PRESET_GROUP_ID, 'pre-1'), { key: 'wrong' });
    expect(unauthorized.status).toBe(401);
    expect(unauthorized.body).toContain('<h1>Error 401</h1>');
  });

  it('never reshapes /_emulator/ answers', async () => {
    const emu = await start({ quirks: { errorShape: 'html' } });
    const res = await fetch(`${emu.url}/_emulator/quirks`, { method: 'POST', body: '[]' });
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toContain('application/json');
    await res.text();
  });
});

describe('groupCreatedStatus, slashRedirect, unknownKindField', () => {
  const createBody = { group_name: 'G', owner_team: 'Editors', editor_teams: [], viewer_teams: [] };

  it('group creation answers 201 when asked', async () => {
    const emu = await start({ quirks: { groupCreatedStatus: 201 } });
    const res = await call(emu, 'POST', rawPath(ENDPOINTS.createGroup), { body: createBody });
    expect(res.status).toBe(201);
    expect(typeof res.body.authors_group_id).toBe('number');
  });

  it('a path without its trailing slash is redirected (301) to the slashed path, query kept', async () => {
    const emu = await start({ quirks: { slashRedirect: true } });
    const res = await fetch(`${emu.url}/api/external/recommend-journals/m-1?journals_corpus=all_journals`, {
      headers: { 'X-ApiKey': KEY },
      redirect: 'manual',
    });
    await res.text();
    expect(res.status).toBe(301);
    expect(res.headers.get('location')).toBe('/api/external/recommend-journals/m-1/?journals_corpus=all_journals');
    const unknown = await fetch(`${emu.url}/api/external/nothing-here`, { headers: { 'X-ApiKey': KEY }, redirect: 'manual' });
    await unknown.text();
    expect(unknown.status).toBe(404);
  });

  it('strictClientIds: a record path whose client_id a strict server would not route is a 404', async () => {
    const emu = await start({ quirks: { strictClientIds: true } });
    for (const id of ['a/b', `x${'y'.repeat(255)}`, 'tab\there']) {
      const res = await call(emu, 'POST', recordPath(PRESET_GROUP_ID, id), { body: { name: 'N' } });
      expect(res.status, id).toBe(404);
    }
    expect((await call(emu, 'POST', recordPath(PRESET_GROUP_ID, 'plain-id'), { body: { name: 'N' } })).status).toBe(200);
  });

  it('the listing gains a field of an unknown data_kind', async () => {
    const emu = await start({ quirks: { unknownKindField: true } });
    const res = await call(emu, 'GET', rawPath(ENDPOINTS.listCustomFields));
    expect(res.body.author_from_group).toContainEqual(expect.objectContaining({ api_id: UNKNOWN_KIND_FIELD.api_id, data_kind: 'rich_text' }));
  });
});

describe('rostersync emulator --quirks', () => {
  it('refuses an unknown quirk naming it, and a value that is not JSON', async () => {
    const unknown = await runCli(['emulator', '--quirks', '{"okfalse":[]}']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/--quirks: .*okfalse/);
    const notJson = await runCli(['emulator', '--quirks', 'okFalse']);
    expect(notJson.code).toBe(1);
    expect(notJson.stderr).toMatch(/--quirks must be a JSON object/);
  });

  it('serves with the quirks given', async () => {
    const stop = new AbortController();
    const out = outputSink();
    const err = outputSink();
    const done = main(['emulator', '--quirks', '{"groupCreatedStatus":201}'], { stdout: out.stream, stderr: err.stream, env: {}, cwd: process.cwd(), signal: stop.signal });
    let url: string | undefined;
    for (let i = 0; i < 250 && url === undefined; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      url = /listening on (\S+)/.exec(out.text())?.[1];
    }
    try {
      expect(url, err.text()).toBeDefined();
      const body = { group_name: 'G', owner_team: 'Editorial Office', editor_teams: [], viewer_teams: [] };
      const res = await call({ url: url! }, 'POST', rawPath(ENDPOINTS.createGroup), { body, key: 'demo-key-0123456789' });
      expect(res.status).toBe(201);
    } finally {
      stop.abort();
    }
    expect(await done).toBe(0);
  });
});
