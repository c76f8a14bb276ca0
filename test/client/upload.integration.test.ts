import { afterEach, describe, expect, it } from 'vitest';
import { ClientInputError, createClient, detectSourceFileKind } from '../../src/client/index.js';
import { API_KEY, sendJson, startTinyServer, type TinyServer } from './helpers.js';

let server: TinyServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const uploadAnswer = {
  version: 7,
  manuscript_id: 41,
  origin_id: 'MS-1',
  candidates: null,
  authors_groups_settings: null,
  debug_info: {
    source_file: 'paper.pdf',
    parsed_text_len: 10,
    parsed_references: 0,
    extracted_concepts: 0,
    authors_info: { authors_count: 2, emails_count: 1, orcids_count: 1 },
  },
};

async function parseForm(seen: { headers: Record<string, string | string[] | undefined>; body: Buffer }) {
  const response = new Response(seen.body, { headers: { 'content-type': String(seen.headers['content-type']) } });
  return response.formData();
}

describe('uploadManuscript multipart encoding', () => {
  it('sends every spec field, the authors, filters, exclude flag and the file', async () => {
    server = await startTinyServer((_req, res) => sendJson(res, 200, uploadAnswer));
    const client = createClient({ baseUrl: server.url, apiKey: API_KEY });
    const pdf = Buffer.from('%PDF-1.7\nhello');
    const answer = await client.uploadManuscript({
      folder: 'JCARD',
      originId: 'MS-1',
      title: 'Heart failure outcomes',
      abstract: 'We study…',
      authors: [
        { name: 'Ada Okafor', affiliation: 'Tokyo', orcid: '0000-0200-1591-7195', email: 'ada@example.org' },
        { name: 'Ben Tanaka' },
      ],
      filters: { minHIndex: 5, maxAcademicAge: 40, minArticlesCount: 10 },
      excludeCandidates: true,
      sourceFile: { filename: 'paper.pdf', data: pdf },
    });
    expect(answer.manuscript_id).toBe(41);

    const seen = server.requests[0]!;
    expect(seen.url).toBe('/api/external/proposal/');
    expect(seen.headers['x-apikey']).toBe(API_KEY);
    expect(String(seen.headers['content-type'])).toMatch(/^multipart\/form-data; boundary=/);
    const form = await parseForm(seen);
    const text = Object.fromEntries([...form.entries()].filter(([, v]) => typeof v === 'string'));
    expect(text).toEqual({
      api_key: API_KEY,
      folder: 'JCARD',
      origin_id: 'MS-1',
      title: 'Heart failure outcomes',
      abstract: 'We study…',
      authors_count: '2',
      author1_name: 'Ada Okafor',
      author1_aff: 'Tokyo',
      author1_orcid: '0000-0200-1591-7195',
      author1_email: 'ada@example.org',
      author2_name: 'Ben Tanaka',
      min_h_index: '5',
      max_academic_age: '40',
      min_articles_count: '10',
      exclude_candidates: 'true',
    });
    const file = form.get('source_file') as File;
    expect(file.name).toBe('paper.pdf');
    expect(file.type).toBe('application/pdf');
    expect(Buffer.from(await file.arrayBuffer()).equals(pdf)).toBe(true);
  });

  it('omits exclude_candidates unless asked (any value skips candidates) and uses authorsCount when given', async () => {
    server = await startTinyServer((_req, res) => sendJson(res, 200, { ...uploadAnswer, candidates: [] }));
    const client = createClient({ baseUrl: server.url, apiKey: API_KEY });
    await client.uploadManuscript({ folder: 'F', originId: 'MS-2', title: 't', abstract: 'a', authorsCount: 5 });
    const form = await parseForm(server.requests[0]!);
    expect(form.has('exclude_candidates')).toBe(false);
    expect(form.has('source_file')).toBe(false);
    expect(form.get('authors_count')).toBe('5');
  });

  it('sends a DOCX with its content type, and re-sends the whole form on retry', async () => {
    server = await startTinyServer((_req, res, index) =>
      index === 0 ? sendJson(res, 503, { detail: 'busy' }) : sendJson(res, 200, uploadAnswer),
    );
    const client = createClient({ baseUrl: server.url, apiKey: API_KEY, retry: { baseDelayMs: 1 } });
    const docx = Buffer.from([0x50, 0x4b, 0x03, 0x04, 1, 2, 3]);
    await client.uploadManuscript({ folder: 'F', originId: 'MS-3', title: 't', abstract: 'a', sourceFile: { filename: 'p.docx', data: docx } });
    expect(server.requests).toHaveLength(2);
    const file = (await parseForm(server.requests[1]!)).get('source_file') as File;
    expect(file.type).toBe('application/vnd.openxmlformats-officedocument.wordprocessingml.document');
    expect(file.size).toBe(docx.length);
  });

  it.each([
    ['a text file', { sourceFile: { filename: 'p.txt', data: Buffer.from('hello') } }, /neither a PDF nor a DOCX/],
    ['an empty title', { title: ' ' }, /title/],
    ['a fractional filter', { filters: { minHIndex: 2.5 } }, /minHIndex/],
  ])('refuses %s before sending', async (_name, change, message) => {
    server = await startTinyServer((_req, res) => sendJson(res, 200, uploadAnswer));
    const client = createClient({ baseUrl: server.url, apiKey: API_KEY });
    const error = await client
      .uploadManuscript({ folder: 'F', originId: 'MS', title: 't', abstract: 'a', ...change })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ClientInputError);
    expect((error as Error).message).toMatch(message);
    expect(server.requests).toHaveLength(0);
  });

  it.each([
    ['%PDF-1.4', 'pdf'],
    ['PK\x03\x04rest', 'docx'],
    ['PK\x05\x06', undefined],
    ['', undefined],
    ['<html>', undefined],
  ])('detects %j as %s', (head, kind) => {
    expect(detectSourceFileKind(Buffer.from(head, 'latin1'))).toBe(kind);
  });
});
