/**
 * The baseline users write by hand (benchmark 2): read the roster, look up option ids
 * once, and POST every row as a full record, changed or not. Plain undici, no state, no diff,
 * no retries; `concurrency` requests in flight so the comparison is about calls, not parallelism.
 */
import { createReadStream } from 'node:fs';
import { parse } from 'csv-parse';
import { Agent, request } from 'undici';

export interface NaiveSyncOptions {
  baseUrl: string;
  apiKey: string;
  groupId: number;
  /** A roster made by bench/generate.ts (CSV). */
  rosterFile: string;
  /** Requests in flight at once. @default 4 */
  concurrency?: number;
}

export interface NaiveSyncResult {
  calls: number;
  failed: number;
  ms: number;
}

interface FieldDef {
  api_id: string;
  name: string;
  data_kind: string;
  options?: Array<{ api_id: string; option: string }>;
}

export async function naiveSync(options: NaiveSyncOptions): Promise<NaiveSyncResult> {
  const started = performance.now();
  const dispatcher = new Agent({ connections: options.concurrency ?? 4 });
  const headers = { 'X-ApiKey': options.apiKey, 'content-type': 'application/json' };
  let calls = 0;
  let failed = 0;
  try {
    calls++;
    const listing = await request(`${options.baseUrl}/api/external/custom-fields/all/`, { headers, dispatcher });
    const fields = ((await listing.body.json()) as { author_from_group: FieldDef[] }).author_from_group;
    const byName = new Map(fields.map((f) => [f.name, f]));
    const optionId = (field: string, label: string) => byName.get(field)?.options?.find((o) => o.option === label.trim())?.api_id;
    const id = (field: string) => byName.get(field)?.api_id ?? field;

    const rows = createReadStream(options.rosterFile).pipe(parse({ columns: true })) as AsyncIterable<Record<string, string>>;
    const iterator = rows[Symbol.asyncIterator]();
    const worker = async () => {
      for (;;) {
        const next = await iterator.next();
        if (next.done) return;
        const row = next.value;
        const body = {
          name: row['Full name'],
          emails: (row['Email'] ?? '').split(';').map((e) => e.trim().toLowerCase()).filter(Boolean),
          orcids: row['ORCID'] ? [row['ORCID']] : [],
          [id('Expertise level')]: optionId('Expertise level', row['Level'] ?? ''),
          [id('Subject areas')]: (row['Areas'] ?? '').split(';').map((a) => optionId('Subject areas', a)).filter(Boolean),
          [id('Reviews completed')]: Number(row['Reviews']),
          [id('Last review date')]: row['Last review'],
        };
        calls++;
        const response = await request(`${options.baseUrl}/api/external/author-from-group/${options.groupId}/${encodeURIComponent(row['ID'] ?? '')}/`, {
          method: 'POST',
          headers,
          body: JSON.stringify(body),
          dispatcher,
        }).catch(() => null);
        if (!response) failed++;
        else {
          await response.body.dump();
          if (response.statusCode !== 200) failed++;
        }
      }
    };
    await Promise.all(Array.from({ length: options.concurrency ?? 4 }, worker));
  } finally {
    await dispatcher.close();
  }
  return { calls, failed, ms: performance.now() - started };
}
