/**
 * A local stand-in for the GitHub REST endpoints the review flow uses (src/review/github.ts), on
 * 127.0.0.1 port 0, with a second server as the artifact storage GitHub redirects downloads to.
 *
 * It is held to GitHub's published OpenAPI description (@octokit/openapi, api.github.com.json):
 * every request's path, query and JSON body, and every answer it gives, are validated with Ajv
 * (JSON Schema, with OpenAPI's `nullable`, formats checked by ajv-formats) against the operation's
 * schemas; answers are built from the description's own examples with the test's values patched
 * in. Any mismatch lands in `violations`, which the tests expect empty. It is no more convenient
 * than GitHub: the token is required, listings are paginated (Link header), and downloads are a
 * 302 to another origin that must not receive the token.
 */
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

interface Operation {
  parameters?: Array<{ $ref?: string; name?: string; in?: string; schema?: unknown; required?: boolean }>;
  requestBody?: { content: Record<string, { schema: unknown }> };
  responses: Record<string, { content?: Record<string, { schema: unknown; examples?: Record<string, { $ref?: string; value?: unknown }> }> }>;
}
interface Spec {
  paths: Record<string, Record<string, Operation>>;
  components: { parameters: Record<string, { name: string; in: string; schema: unknown; required?: boolean }>; examples: Record<string, { value: unknown }> };
}

let loaded: { spec: Spec; ajv: Ajv } | undefined;
function openApi(): { spec: Spec; ajv: Ajv } {
  if (loaded) return loaded;
  const path = createRequire(import.meta.url).resolve('@octokit/openapi/generated/api.github.com.json');
  const spec = JSON.parse(readFileSync(path, 'utf8')) as Spec;
  // OpenAPI 3.0 schemas are JSON Schema draft 4/7 with `nullable`, which Ajv reads natively.
  const ajv = new Ajv({ strict: false, allErrors: true, validateSchema: false });
  addFormats(ajv);
  ajv.addSchema({ $id: 'gh', components: spec.components });
  loaded = { spec, ajv };
  return loaded;
}

const compiled = new Map<string, ValidateFunction>();
function validator(key: string, schema: unknown): ValidateFunction {
  let found = compiled.get(key);
  if (!found) {
    const { ajv } = openApi();
    found = ajv.compile(JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"gh#/components/')) as object);
    compiled.set(key, found);
  }
  return found;
}

export interface StubPull {
  number: number;
  headSha: string;
  files: string[];
  merged: boolean;
  mergeCommitSha: string | null;
}
export interface StubComment {
  id: number;
  issue: number;
  body: string;
  createdAt: string;
  updatedAt: string;
}
export interface StubArtifact {
  id: number;
  name: string;
  headSha: string;
  zip: Uint8Array;
  createdAt: string;
}
export interface StubRequest {
  method: string;
  path: string;
  body: string;
  authorization: string | undefined;
}

export interface GitHubStub {
  url: string;
  token: string;
  repository: string;
  pulls: Map<number, StubPull>;
  comments: StubComment[];
  artifacts: StubArtifact[];
  /** Every request to the API, in order, with its body as received. */
  requests: StubRequest[];
  /** Requests to the storage origin (downloads after the redirect). */
  storageRequests: StubRequest[];
  /** Every mismatch with GitHub's OpenAPI description. */
  violations: string[];
  /** Page size for listings when the client asks for more (GitHub's maximum is 100). */
  pageSize: number;
  close(): Promise<void>;
}

type Handler = (stub: GitHubStub, params: Record<string, string>, query: URLSearchParams, body: unknown) => { status: number; json?: unknown; headers?: Record<string, string>; page?: unknown[] };

const OWNER = 'editorial';
const REPO = 'rosters';

function example(operation: Operation, status: string): unknown {
  const { spec } = openApi();
  const ref = Object.values(operation.responses[status]!.content!['application/json']!.examples!)[0]!;
  const value = ref.$ref ? spec.components.examples[ref.$ref.split('/').pop()!]!.value : ref.value;
  return JSON.parse(JSON.stringify(value)) as unknown;
}

function op(path: string, method: string): Operation {
  return openApi().spec.paths[path]![method]!;
}

function commentJson(stub: GitHubStub, comment: StubComment, template: Record<string, unknown>): unknown {
  return {
    ...template,
    id: comment.id,
    node_id: `IC_${comment.id}`,
    body: comment.body,
    url: `${stub.url}/repos/${stub.repository}/issues/comments/${comment.id}`,
    html_url: `https://github.com/${stub.repository}/pull/${comment.issue}#issuecomment-${comment.id}`,
    issue_url: `${stub.url}/repos/${stub.repository}/issues/${comment.issue}`,
    created_at: comment.createdAt,
    updated_at: comment.updatedAt,
  };
}

const ROUTES: Array<{ method: string; path: string; handle: Handler }> = [
  {
    method: 'get',
    path: '/repos/{owner}/{repo}/pulls/{pull_number}/files',
    handle: (stub, params) => {
      const pull = stub.pulls.get(Number(params['pull_number']));
      if (!pull) return { status: 404, json: { message: 'Not Found', documentation_url: 'https://docs.github.com/rest' } };
      const [template] = example(op('/repos/{owner}/{repo}/pulls/{pull_number}/files', 'get'), '200') as Record<string, unknown>[];
      return { status: 200, page: pull.files.map((filename) => ({ ...template, filename, status: 'modified' })) };
    },
  },
  {
    method: 'get',
    path: '/repos/{owner}/{repo}/issues/{issue_number}/comments',
    handle: (stub, params) => {
      const [template] = example(op('/repos/{owner}/{repo}/issues/{issue_number}/comments', 'get'), '200') as Record<string, unknown>[];
      return { status: 200, page: stub.comments.filter((c) => c.issue === Number(params['issue_number'])).map((c) => commentJson(stub, c, template!)) };
    },
  },
  {
    method: 'post',
    path: '/repos/{owner}/{repo}/issues/{issue_number}/comments',
    handle: (stub, params, _query, body) => {
      const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
      const comment: StubComment = { id: 1000 + stub.comments.length + 1, issue: Number(params['issue_number']), body: (body as { body: string }).body, createdAt: now, updatedAt: now };
      stub.comments.push(comment);
      return { status: 201, json: commentJson(stub, comment, example(op('/repos/{owner}/{repo}/issues/{issue_number}/comments', 'post'), '201') as Record<string, unknown>) };
    },
  },
  {
    method: 'patch',
    path: '/repos/{owner}/{repo}/issues/comments/{comment_id}',
    handle: (stub, params, _query, body) => {
      const comment = stub.comments.find((c) => c.id === Number(params['comment_id']));
      if (!comment) return { status: 404, json: { message: 'Not Found', documentation_url: 'https://docs.github.com/rest' } };
      comment.body = (body as { body: string }).body;
      comment.updatedAt = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
      return { status: 200, json: commentJson(stub, comment, example(op('/repos/{owner}/{repo}/issues/comments/{comment_id}', 'patch'), '200') as Record<string, unknown>) };
    },
  },
  {
    method: 'get',
    path: '/repos/{owner}/{repo}/commits/{commit_sha}/pulls',
    handle: (stub, params) => {
      const [template] = example(op('/repos/{owner}/{repo}/commits/{commit_sha}/pulls', 'get'), '200') as Record<string, Record<string, unknown>>[];
      const sha = params['commit_sha'];
      const pulls = [...stub.pulls.values()].filter((p) => p.headSha === sha || p.mergeCommitSha === sha);
      return {
        status: 200,
        page: pulls.map((p) => ({
          ...template,
          number: p.number,
          state: p.merged ? 'closed' : 'open',
          merged_at: p.merged ? '2026-05-01T10:00:00Z' : null,
          merge_commit_sha: p.mergeCommitSha,
          head: { ...template!['head'], sha: p.headSha },
          // The description's own example lacks `type` on its requested team, which its schema requires.
          requested_teams: [],
        })),
      };
    },
  },
  {
    method: 'get',
    path: '/repos/{owner}/{repo}/actions/artifacts',
    handle: (stub, _params, query) => {
      const page = example(op('/repos/{owner}/{repo}/actions/artifacts', 'get'), '200') as { artifacts: Record<string, Record<string, unknown>>[] };
      const template = page.artifacts[0]!;
      const name = query.get('name');
      const artifacts = stub.artifacts
        .filter((a) => name === null || a.name === name)
        .map((a) => ({
          ...template,
          id: a.id,
          name: a.name,
          size_in_bytes: a.zip.byteLength,
          expired: false,
          created_at: a.createdAt,
          url: `${stub.url}/repos/${stub.repository}/actions/artifacts/${a.id}`,
          archive_download_url: `${stub.url}/repos/${stub.repository}/actions/artifacts/${a.id}/zip`,
          workflow_run: { ...template['workflow_run'], head_sha: a.headSha },
        }));
      return { status: 200, json: { total_count: artifacts.length, artifacts } };
    },
  },
  {
    method: 'get',
    path: '/repos/{owner}/{repo}/actions/artifacts/{artifact_id}/{archive_format}',
    handle: (stub, params) => {
      const artifact = stub.artifacts.find((a) => a.id === Number(params['artifact_id']));
      if (!artifact || params['archive_format'] !== 'zip') return { status: 410, json: { message: 'Gone', documentation_url: 'https://docs.github.com/rest' } };
      return { status: 302, headers: { location: `${storageUrl(stub)}/blob/${artifact.id}?sig=stub` } };
    },
  },
];

const storageUrls = new WeakMap<GitHubStub, string>();
const storageUrl = (stub: GitHubStub) => storageUrls.get(stub)!;

function templateRegex(template: string): RegExp {
  return new RegExp(`^${template.replace(/\{([a-z_]+)\}/g, '(?<$1>[^/]+)')}$`);
}

export async function startGitHubStub(options: { token?: string } = {}): Promise<GitHubStub> {
  openApi();
  const stub: GitHubStub = {
    url: '',
    token: options.token ?? 'ghs_stubtoken0123456789',
    repository: `${OWNER}/${REPO}`,
    pulls: new Map(),
    comments: [],
    artifacts: [],
    requests: [],
    storageRequests: [],
    violations: [],
    pageSize: 100,
    close: async () => {},
  };
  const api = createServer((req, res) => void serveApi(stub, req, res));
  const storage = createServer((req, res) => {
    stub.storageRequests.push({ method: req.method ?? '', path: req.url ?? '', body: '', authorization: req.headers.authorization });
    const id = Number(/^\/blob\/(\d+)/.exec(req.url ?? '')?.[1]);
    const artifact = stub.artifacts.find((a) => a.id === id);
    if (!artifact) return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'application/zip', 'content-length': artifact.zip.byteLength }).end(Buffer.from(artifact.zip));
  });
  const listen = (server: Server) => new Promise<string>((resolve) => server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)));
  stub.url = await listen(api);
  storageUrls.set(stub, await listen(storage));
  stub.close = async () => {
    await Promise.all([api, storage].map((server) => new Promise<void>((resolve) => server.close(() => resolve()))));
  };
  return stub;
}

async function serveApi(stub: GitHubStub, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  const url = new URL(req.url ?? '/', stub.url);
  const method = (req.method ?? 'GET').toLowerCase();
  stub.requests.push({ method: method.toUpperCase(), path: url.pathname + url.search, body: text, authorization: req.headers.authorization });
  const send = (status: number, json?: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers }).end(json === undefined ? undefined : JSON.stringify(json));
  };
  if (req.headers.authorization !== `token ${stub.token}` && req.headers.authorization !== `Bearer ${stub.token}`) {
    return send(401, { message: 'Bad credentials', documentation_url: 'https://docs.github.com/rest' });
  }
  for (const route of ROUTES) {
    const match = route.method === method ? templateRegex(route.path).exec(url.pathname) : null;
    if (!match) continue;
    const params = Object.fromEntries(Object.entries(match.groups ?? {}).map(([k, v]) => [k, decodeURIComponent(v)]));
    if (params['owner'] !== OWNER || params['repo'] !== REPO) return send(404, { message: 'Not Found', documentation_url: 'https://docs.github.com/rest' });
    const operation = op(route.path, route.method);
    const where = `${method.toUpperCase()} ${route.path}`;
    checkParameters(stub, where, operation, params, url.searchParams);
    let body: unknown;
    if (operation.requestBody) {
      body = text ? (JSON.parse(text) as unknown) : undefined;
      check(stub, `${where} request body`, operation.requestBody.content['application/json']!.schema, body);
    } else if (text) stub.violations.push(`${where}: a body was sent to an operation that takes none`);
    const answer = route.handle(stub, params, url.searchParams, body);
    let json = answer.json;
    const headers = { ...answer.headers };
    if (answer.page) {
      const perPage = Math.min(Number(url.searchParams.get('per_page') ?? 30), stub.pageSize);
      const page = Number(url.searchParams.get('page') ?? 1);
      json = answer.page.slice((page - 1) * perPage, page * perPage);
      if (page * perPage < answer.page.length) {
        const next = new URL(url);
        next.searchParams.set('page', String(page + 1));
        headers['link'] = `<${next.href}>; rel="next"`;
      }
    }
    const declared = operation.responses[String(answer.status)];
    if (!declared) stub.violations.push(`${where}: answered ${answer.status}, which the description does not list`);
    else if (declared.content?.['application/json'] && answer.status < 300) check(stub, `${where} ${answer.status} answer`, declared.content['application/json'].schema, json);
    return send(answer.status, json, headers);
  }
  stub.violations.push(`${method.toUpperCase()} ${url.pathname}: not an endpoint the stub implements`);
  send(404, { message: 'Not Found', documentation_url: 'https://docs.github.com/rest' });
}

function checkParameters(stub: GitHubStub, where: string, operation: Operation, params: Record<string, string>, query: URLSearchParams): void {
  const { spec } = openApi();
  const declared = (operation.parameters ?? []).map((p) => (p.$ref ? spec.components.parameters[p.$ref.split('/').pop()!]! : p)) as Array<{ name: string; in: string; schema: unknown; required?: boolean }>;
  for (const parameter of declared) {
    const raw = parameter.in === 'path' ? params[parameter.name] : parameter.in === 'query' ? query.get(parameter.name) : undefined;
    if (raw === undefined || raw === null) {
      if (parameter.required) stub.violations.push(`${where}: required ${parameter.in} parameter ${parameter.name} missing`);
      continue;
    }
    const type = (parameter.schema as { type?: string }).type;
    const value = type === 'integer' || type === 'number' ? Number(raw) : type === 'boolean' ? raw === 'true' : raw;
    check(stub, `${where} ${parameter.in} parameter ${parameter.name}`, parameter.schema, value);
  }
  for (const name of query.keys()) {
    if (!declared.some((p) => p.in === 'query' && p.name === name)) stub.violations.push(`${where}: query parameter ${name} is not in the description`);
  }
}

function check(stub: GitHubStub, what: string, schema: unknown, value: unknown): void {
  const validate = validator(JSON.stringify(schema), schema);
  if (!validate(value)) stub.violations.push(`${what}: ${JSON.stringify(validate.errors?.slice(0, 3))}`);
}
