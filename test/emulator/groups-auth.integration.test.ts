/** docs/service-contract.md, call 5 (authors group creation), § 8 (custom fields listing) and § Authentication, over real HTTP. */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ENDPOINTS } from '../../src/client/endpoints.js';
import type { RunningEmulator } from '../../src/emulator/server.js';
import { call, FIELD, KEY, KEY_NO_GROUPS, rawPath, recordPath, startTestEmulator } from './helpers.js';

let emulator: RunningEmulator;
beforeAll(async () => {
  emulator = await startTestEmulator();
});
afterAll(() => emulator.close());
beforeEach(() => call(emulator, 'POST', '/_emulator/reset', { key: null }));

const CREATE = rawPath(ENDPOINTS.createGroup);
const LIST = rawPath(ENDPOINTS.listCustomFields);
const validBody = { group_name: 'Experts', owner_team: 'Editors', editor_teams: ['Reviewers'], viewer_teams: ['Board'] };

describe('authors group creation', () => {
  it('creates a group with a fresh integer id that records can then be written to', async () => {
    const res = await call(emulator, 'POST', CREATE, { body: validBody });
    expect(res.status).toBe(200);
    expect(Number.isInteger(res.body.authors_group_id)).toBe(true);
    const id = res.body.authors_group_id as number;
    expect((await call(emulator, 'POST', recordPath(id, 'x'), { body: { name: 'X' } })).status).toBe(200);
    const state = await call(emulator, 'GET', `/_emulator/state?org=1&group=${id}`, { key: null });
    expect(state.body.orgs[0].groups).toEqual([
      { id, name: 'Experts', label: null, owner_team: 'Editors', editor_teams: ['Reviewers'], viewer_teams: ['Board'], records: { x: expect.objectContaining({ name: 'X' }) } },
    ]);
  });

  it('is not idempotent: the same body twice creates two groups', async () => {
    const a = await call(emulator, 'POST', CREATE, { body: validBody });
    const b = await call(emulator, 'POST', CREATE, { body: validBody });
    expect(a.body.authors_group_id).not.toBe(b.body.authors_group_id);
  });

  it.each([
    ['owner team', { owner_team: 'Ghosts' }, 'Ghosts'],
    ['editor team', { editor_teams: ['Reviewers', 'Phantoms'] }, 'Phantoms'],
    ['viewer team', { viewer_teams: ['Nobody'] }, 'Nobody'],
  ])('refuses an unknown %s with 400 naming it', async (_label, patch, team) => {
    const res = await call(emulator, 'POST', CREATE, { body: { ...validBody, ...patch } });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'unknown_team' });
    expect(res.body.error.message).toContain(`"${team}"`);
  });

  it.each([
    ['group_name missing', { group_name: undefined }, 'group_name'],
    ['group_name empty', { group_name: ' ' }, 'group_name'],
    ['owner_team missing', { owner_team: undefined }, 'owner_team'],
    ['editor_teams missing', { editor_teams: undefined }, 'editor_teams'],
    ['viewer_teams not an array', { viewer_teams: 'Board' }, 'viewer_teams'],
    ['unknown key', { colour: 'red' }, ''],
  ])('refuses a body with %s (400)', async (_label, patch, field) => {
    const res = await call(emulator, 'POST', CREATE, { body: { ...validBody, ...patch } });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('validation_error');
    expect(res.body.error.message).toContain(field);
  });

  it('needs the Authors groups plan feature (403) and creates nothing without it', async () => {
    const res = await call(emulator, 'POST', CREATE, { key: KEY_NO_GROUPS, body: { ...validBody, editor_teams: [], viewer_teams: [] } });
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('plan_feature_missing');
    const state = await call(emulator, 'GET', '/_emulator/state?org=2', { key: null });
    expect(state.body.orgs[0].groups).toEqual([]);
  });
});

describe('custom fields listing', () => {
  it('lists the three owners; description defaults to null and options appear only for option kinds', async () => {
    const res = await call(emulator, 'GET', LIST);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(['author_from_group', 'folder', 'proposal']);
    const byId = new Map<string, Record<string, unknown>>(res.body.author_from_group.map((f: { api_id: string }) => [f.api_id, f]));
    expect(byId.get(FIELD.reviews)).toEqual({ api_id: FIELD.reviews, data_kind: 'number', name: 'Reviews', description: null });
    expect(byId.get(FIELD.areas)).toMatchObject({ description: 'Subject areas', options: [{ option: 'Oncology' }, { option: 'Cardiology' }] });
    expect(res.body.folder).toHaveLength(1);
    expect(res.body.proposal).toEqual([]);
  });

  it('is per organization', async () => {
    const res = await call(emulator, 'GET', LIST, { key: KEY_NO_GROUPS });
    expect(res.body).toEqual({ author_from_group: [], folder: [], proposal: [] });
  });
});

describe('authentication', () => {
  it.each([
    ['missing header', null, 'missing X-ApiKey'],
    ['wrong key', 'wrong-key-123456', 'does not match'],
  ])('answers 401 JSON for a %s', async (_label, key, message) => {
    const res = await call(emulator, 'GET', LIST, { key });
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ ok: false, error: { code: 'unauthorized' } });
    expect(res.body.error.message).toContain(message);
  });

  it.each(['x-apikey', 'X-APIKEY', 'X-ApiKey'])('accepts the header name %s (case-insensitive)', async (name) => {
    const res = await call(emulator, 'GET', LIST, { key: null, headers: { [name]: KEY } });
    expect(res.status).toBe(200);
  });

  it('accepts every key of the org', async () => {
    expect((await call(emulator, 'GET', LIST, { key: 'test-key-org-one-second' })).status).toBe(200);
  });

  it('checks the key before the body (401, not 400, for a bad body without a key)', async () => {
    const res = await call(emulator, 'POST', CREATE, { key: null, rawBody: '{' });
    expect(res.status).toBe(401);
  });

  it('never echoes the key in an error', async () => {
    const res = await call(emulator, 'GET', recordPath(424242, 'x'), { key: KEY });
    expect(JSON.stringify(res.body)).not.toContain(KEY);
  });
});
