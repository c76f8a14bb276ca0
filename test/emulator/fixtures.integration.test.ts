/** The built-in default fixture and samples/fixture.yaml both load and serve; fixture records obey the value rules. */
import { describe, expect, it } from 'vitest';
import { ENDPOINTS } from '../../src/client/endpoints.js';
import { fixtureSchema, loadFixture } from '../../src/emulator/fixture.js';
import { startEmulator } from '../../src/emulator/server.js';
import { call, rawPath, recordPath } from './helpers.js';
import { DEMO_API_KEY } from '../support/cli.js';

describe('fixtures', () => {
  it('samples/fixture.yaml is valid and its preset record links to its author', async () => {
    const emulator = await startEmulator({ fixturePath: 'samples/fixture.yaml' });
    try {
      const res = await call(emulator, 'GET', recordPath(100, 'ed-001'), { key: 'sample-key-0123456789' });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        name: 'Marie Curie',
        affiliations: ['Institut du Radium, Paris, France'],
        '11111111-0000-4000-8000-000000000003': 12,
        author: { id: 101, articles_count: 1, h_index: 42, last_articles: [{ title: 'Radioactive isotopes in tumour therapy', year: 2019 }] },
      });
    } finally {
      await emulator.close();
    }
  });

  it('the sample shows every key of the fixture schema', () => {
    const sampleKeys = collectKeys(loadFixture('samples/fixture.yaml'));
    const schemaKeys = collectKeys(fixtureSchema.toJSONSchema() as Record<string, unknown>, true);
    const missing = [...schemaKeys].filter((key) => !sampleKeys.has(key));
    expect(missing).toEqual([]);
  });

  it('the built-in default fixture starts and authenticates the demo key', async () => {
    const emulator = await startEmulator();
    try {
      expect((await call(emulator, 'GET', rawPath(ENDPOINTS.listCustomFields), { key: DEMO_API_KEY })).status).toBe(200);
    } finally {
      await emulator.close();
    }
  });

  it('refuses a fixture record whose custom field value breaks the data_kind rule, naming its path', async () => {
    const fixture = fixtureSchema.parse({
      orgs: [
        {
          id: 1,
          name: 'X',
          api_keys: ['abcdefghij'],
          teams: ['T'],
          custom_fields: { author_from_group: [{ api_id: 'd1', data_kind: 'date', name: 'When' }] },
          groups: [{ id: 5, name: 'G', owner_team: 'T', records: { r1: { name: 'A', d1: '2023-02-30' } } }],
        },
      ],
    });
    await expect(startEmulator({ fixture })).rejects.toThrow(/orgs\.0\.groups\.0\.records\.r1: custom field "When" \(d1, date\)/);
  });
});

/** Property names appearing anywhere in a value (or, for a JSON Schema, under `properties`). */
function collectKeys(value: unknown, jsonSchema = false, into = new Set<string>()): Set<string> {
  if (Array.isArray(value)) for (const item of value) collectKeys(item, jsonSchema, into);
  else if (value && typeof value === 'object') {
    for (const [key, child] of Object.entries(value)) {
      if (jsonSchema) {
        if (key === 'properties' && child && typeof child === 'object') for (const name of Object.keys(child)) into.add(name);
        // Record-valued keys (records by client_id) have no fixed names.
      } else if (!/^[0-9a-f]{8}-|^ed-\d+$/.test(key)) into.add(key);
      collectKeys(child, jsonSchema, into);
    }
  }
  return into;
}
