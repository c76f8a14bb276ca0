/**
 * The client parses an upload response of an older version (no v6/v7 fields, no
 * authors_groups_settings) — served by a tiny node:http server, since the emulator always answers v7.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createClient, ResponseShapeError } from '../../src/client/index.js';
import { manuscript } from './helpers.js';

const v5Candidate = {
  name: 'Ada Lovelace', first_name: 'Ada', last_name: 'Lovelace', middle_name: null, suffix: null, author_id: 1,
  email: null, orcid: null, affiliation: null, articlesCount: 3, citationsCount: 9, hIndex: 2, score: 0.5,
  url: 'https://service.example/authors/1/', relevant_concepts: ['statistics'], authors_groups: [], marked: false,
};
let answer: unknown;
const server = createServer((req, res) => {
  req.resume();
  req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer)));
});
let url: string;
beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const debugInfo = { source_file: null, parsed_text_len: 0, parsed_references: 0, extracted_concepts: 0, authors_info: { authors_count: 0, emails_count: 0, orcids_count: 0 } };

it('accepts a version-5 response without the optional fields', async () => {
  answer = { version: 5, manuscript_id: 3, origin_id: 'OLD', candidates: [v5Candidate], debug_info: debugInfo };
  const result = await createClient({ baseUrl: url, apiKey: 'k-12345678' }).uploadManuscript(manuscript());
  expect(result.version).toBe(5);
  expect(result.candidates![0]!.relevant_articles).toBeUndefined();
  expect(result.candidates![0]!.coauth_conflicts).toBeUndefined();
});

it('names a missing required field', async () => {
  const { hIndex: _h, ...broken } = v5Candidate;
  answer = { version: 7, manuscript_id: 3, origin_id: 'OLD', candidates: [broken], debug_info: debugInfo };
  const error = await createClient({ baseUrl: url, apiKey: 'k-12345678', retry: { maxAttempts: 1 } }).uploadManuscript(manuscript()).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(ResponseShapeError);
  expect(String((error as Error).message)).toContain('hIndex');
});
