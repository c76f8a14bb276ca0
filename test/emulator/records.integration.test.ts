/** docs/service-contract.md, calls 1–4 (author-from-group records) and the custom field value rules, over real HTTP. */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ENDPOINTS } from '../../src/client/endpoints.js';
import type { RunningEmulator } from '../../src/emulator/server.js';
import { call, FIELD, KEY_NO_GROUPS, OPTION, PRESET_GROUP_ID, rawPath, recordPath, startTestEmulator } from './helpers.js';

let emulator: RunningEmulator;
let groupId: number;

beforeAll(async () => {
  emulator = await startTestEmulator();
});
afterAll(() => emulator.close());
beforeEach(async () => {
  await call(emulator, 'POST', '/_emulator/reset', { key: null });
  const created = await call(emulator, 'POST', rawPath(ENDPOINTS.createGroup), {
    body: { group_name: 'Roster', owner_team: 'Editors', editor_teams: [], viewer_teams: [] },
  });
  groupId = created.body.authors_group_id;
});

const full = (clientId: string, body: unknown) => call(emulator, 'POST', recordPath(groupId, clientId), { body });
const partial = (clientId: string, body: unknown) => call(emulator, 'POST', recordPath(groupId, clientId, true), { body });
const get = (clientId: string) => call(emulator, 'GET', recordPath(groupId, clientId));

describe('full POST (create or replace)', () => {
  it('creates a record and reads it back with every standard field', async () => {
    const res = await full('c1', { name: 'Grace Hopper', emails: ['grace@example.org'], [FIELD.reviews]: 3.5 });
    expect(res).toMatchObject({ status: 200, body: { ok: true } });
    const read = await get('c1');
    expect(read.status).toBe(200);
    expect(read.body).toEqual({
      name: 'Grace Hopper',
      emails: ['grace@example.org'],
      orcids: null,
      articles: null,
      affiliations: null,
      [FIELD.reviews]: 3.5,
      author: null,
    });
  });

  it('fully replaces: omitted standard fields become null and omitted custom fields lose their value', async () => {
    await full('c1', { name: 'A', emails: ['a@example.org'], affiliations: ['Uni'], [FIELD.notes]: 'keep?', [FIELD.level]: OPTION.senior });
    await full('c1', { name: 'B', [FIELD.level]: OPTION.junior });
    const read = await get('c1');
    expect(read.body).toEqual({ name: 'B', emails: null, orcids: null, articles: null, affiliations: null, [FIELD.level]: OPTION.junior, author: null });
  });

  it('a custom field sent as null has no value and is not returned', async () => {
    await full('c1', { name: 'A', [FIELD.notes]: null });
    expect(Object.keys((await get('c1')).body)).not.toContain(FIELD.notes);
  });

  it('handles client ids with reserved characters (percent-encoded in the path)', async () => {
    await full('a/b c?#', { name: 'Odd' });
    expect((await get('a/b c?#')).body.name).toBe('Odd');
  });
});

describe('partial POST', () => {
  it('changes only the sent fields; null clears a field', async () => {
    await full('c1', { name: 'A', emails: ['a@example.org'], orcids: ['0000-0001-0000-0001'], [FIELD.notes]: 'n', [FIELD.reviews]: 1 });
    const res = await partial('c1', { emails: null, [FIELD.reviews]: 2, [FIELD.notes]: null });
    expect(res).toMatchObject({ status: 200, body: { ok: true } });
    expect((await get('c1')).body).toEqual({
      name: 'A',
      emails: null,
      orcids: ['0000-0001-0000-0001'],
      articles: null,
      affiliations: null,
      [FIELD.reviews]: 2,
      author: null,
    });
  });

  it('answers 404 when the record does not exist, and creates nothing', async () => {
    const res = await partial('missing', { name: 'X' });
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ ok: false, error: { code: 'not_found' } });
    expect((await get('missing')).status).toBe(404);
  });

  it('is atomic: an invalid field leaves the record untouched', async () => {
    await full('c1', { name: 'A', [FIELD.reviews]: 1 });
    const res = await partial('c1', { name: 'Changed', [FIELD.reviews]: 'two' });
    expect(res.status).toBe(400);
    expect((await get('c1')).body).toMatchObject({ name: 'A', [FIELD.reviews]: 1 });
  });

  it('refuses a null name', async () => {
    await full('c1', { name: 'A' });
    expect((await partial('c1', { name: null })).status).toBe(400);
  });
});

describe('DELETE and GET', () => {
  it('deletes an existing record, then 404 on GET and on a second DELETE', async () => {
    await full('c1', { name: 'A' });
    expect(await call(emulator, 'DELETE', recordPath(groupId, 'c1'))).toMatchObject({ status: 200, body: { ok: true } });
    expect((await get('c1')).status).toBe(404);
    expect((await call(emulator, 'DELETE', recordPath(groupId, 'c1'))).status).toBe(404);
  });

  it.each([
    ['GET', undefined],
    ['POST', { name: 'A' }],
    ['DELETE', undefined],
  ])('%s on an unknown group answers 404', async (method, body) => {
    const res = await call(emulator, method, recordPath(999_999, 'c1'), body === undefined ? {} : { body });
    expect(res.status).toBe(404);
    expect(res.body.error.message).toContain('999999');
  });

  it('a non-integer group id is 404', async () => {
    expect((await call(emulator, 'GET', recordPath('abc', 'c1'))).status).toBe(404);
  });

  it("another org's group is invisible (404)", async () => {
    const res = await call(emulator, 'GET', recordPath(PRESET_GROUP_ID, 'pre-1'), { key: KEY_NO_GROUPS });
    expect(res.status).toBe(404);
  });

  it('serves records of pre-existing fixture groups', async () => {
    const res = await call(emulator, 'GET', recordPath(PRESET_GROUP_ID, 'pre-1'));
    expect(res.body).toMatchObject({ name: 'Preset Person', emails: ['preset@example.org'], orcids: null, author: null });
  });
});

describe('linked author', () => {
  const expectedAda = (emulatorUrlBase: string) => ({
    id: 11,
    service_url: `${emulatorUrlBase}/authors/11/`,
    name: 'Ada Lovelace',
    articles_count: 4,
    h_index: 12,
    // The last three by year, newest first.
    last_articles: [
      { service_url: `${emulatorUrlBase}/articles/2/`, title: 'Newest', year: 2023 },
      { service_url: `${emulatorUrlBase}/articles/4/`, title: 'Recent', year: 2020 },
      { service_url: `${emulatorUrlBase}/articles/3/`, title: 'Middle', year: 2015 },
    ],
  });

  it.each([
    ['ORCID', { orcids: ['0000-0002-1825-0097'] }],
    ['ORCID URL', { orcids: ['https://orcid.org/0000-0002-1825-0097'] }],
    ['email, case-insensitive', { emails: ['ada@EXAMPLE.org'] }],
  ])('links by %s', async (_label, fields) => {
    await full('c1', { name: 'Someone', ...fields });
    expect((await get('c1')).body.author).toEqual(expectedAda(emulator.world.serviceWebUrl));
  });

  it('is null when nothing matches, and follows the current record after an update', async () => {
    await full('c1', { name: 'Someone', emails: ['nobody@example.org'] });
    expect((await get('c1')).body.author).toBeNull();
    await partial('c1', { emails: ['alan@example.org'] });
    expect((await get('c1')).body.author).toMatchObject({ id: 12, name: 'Alan Turing', articles_count: 1, last_articles: [{ title: 'Newest' }] });
  });
});

describe('value checks per data_kind', () => {
  it.each([
    ['number as JSON number', FIELD.reviews, 7],
    ['number float', FIELD.reviews, 2.25],
    ['str', FIELD.notes, 'free text'],
    ['date', FIELD.lastReview, '2024-02-29'],
    ['single_option', FIELD.level, OPTION.senior],
    ['multi_option', FIELD.areas, [OPTION.oncology, OPTION.cardiology]],
    ['multi_option empty', FIELD.areas, []],
    ['null clears any kind', FIELD.level, null],
  ])('accepts %s', async (_label, field, value) => {
    const res = await full('c1', { name: 'A', [field]: value });
    expect(res.status).toBe(200);
    const read = await get('c1');
    if (value === null) expect(read.body).not.toHaveProperty(field);
    else expect(read.body[field]).toEqual(value);
  });

  it.each([
    ['unknown key', 'not-a-field', 'x', 'unknown_field'],
    ['number given as string', FIELD.reviews, '7', 'validation_error'],
    ['str given as number', FIELD.notes, 5, 'validation_error'],
    ['date in the wrong format', FIELD.lastReview, '29/02/2024', 'validation_error'],
    ['impossible date', FIELD.lastReview, '2023-02-30', 'validation_error'],
    ['impossible month', FIELD.lastReview, '2023-13-01', 'validation_error'],
    ['date as number', FIELD.lastReview, 20230101, 'validation_error'],
    ['single_option unknown option', FIELD.level, 'o-nope', 'unknown_option'],
    ['single_option given the label', FIELD.level, 'Senior', 'unknown_option'],
    ['single_option as array', FIELD.level, [OPTION.senior], 'validation_error'],
    ['multi_option as string', FIELD.areas, OPTION.oncology, 'validation_error'],
    ['multi_option with unknown option', FIELD.areas, [OPTION.oncology, 'o-nope'], 'unknown_option'],
    ["multi_option with another field's option", FIELD.areas, [OPTION.senior], 'unknown_option'],
  ])('refuses %s with 400', async (_label, field, value, code) => {
    const res = await full('c1', { name: 'A', [field]: value });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ ok: false, error: { code } });
    expect(res.body.error.message).toContain(field);
    expect((await get('c1')).status).toBe(404);
  });

  it.each([
    ['missing name', { emails: [] }],
    ['empty name', { name: '' }],
    ['name as number', { name: 5 }],
    ['emails as string', { name: 'A', emails: 'a@example.org' }],
    ['orcids with a number', { name: 'A', orcids: [1] }],
    ['articles as object', { name: 'A', articles: {} }],
    ['affiliations with null item', { name: 'A', affiliations: [null] }],
    ['body is an array', [{ name: 'A' }]],
    ['body is a string', 'A'],
  ])('refuses %s with 400', async (_label, body) => {
    const res = await full('c1', body);
    expect(res.status).toBe(400);
    expect(res.body.ok).toBe(false);
  });

  it('refuses malformed JSON with 400 invalid_json', async () => {
    const res = await call(emulator, 'POST', recordPath(groupId, 'c1'), { rawBody: '{"name": "A",' });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('invalid_json');
  });
});

describe('the UI route, as an editor sets fields', () => {
  it('takes custom fields by name with option labels, as `author patch` does; the API still takes api_ids only', async () => {
    await full('ui1', { name: 'Ada Lovelace' });
    const set = await call(emulator, 'POST', `/_emulator/ui/groups/${groupId}/records/ui1`, { body: { Level: 'Senior', Areas: ['Oncology', 'Cardiology'], [FIELD.reviews]: 4 } });
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    expect((await get('ui1')).body).toMatchObject({ [FIELD.level]: OPTION.senior, [FIELD.areas]: [OPTION.oncology, OPTION.cardiology], [FIELD.reviews]: 4 });
    // The service's API knows no field by its name.
    expect((await partial('ui1', { Level: 'Junior' })).status).toBe(400);
  });
});
