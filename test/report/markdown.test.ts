import { describe, expect, it } from 'vitest';
import { MARKDOWN_LIMITS, mdText, renderMarkdown } from '../../src/report/markdown.js';
import { aChange, aGuard, aRecord, aRejectedRow, aReport } from './builders.js';

/** The line of the counts table for one action, cells trimmed. */
function countsRow(md: string, action: string): string[] {
  const line = md.split('\n').find((l) => l.startsWith(`| `) && l.includes(` ${action} |`));
  if (!line) throw new Error(`no counts row for ${action} in:\n${md}`);
  return line.split('|').slice(1, -1).map((cell) => cell.trim());
}

describe('renderMarkdown', () => {
  it('summarises a successful run: outcome, exit code, source hash, timings, counts by action × outcome', () => {
    const report = aReport({
      records: [
        aRecord({ clientId: 'EXP-1', action: 'create', reason: 'new' }),
        aRecord({ clientId: 'EXP-2', action: 'create', reason: 'new' }),
        aRecord({ clientId: 'EXP-3', action: 'update' }),
        aRecord({ clientId: 'EXP-4', action: 'delete', reason: 'gone_from_roster', changes: [] }),
      ],
      noops: 96,
    });
    const md = renderMarkdown(report);

    expect(md).toMatch(/^## rostersync · `demo` — ✅ done \(exit 0\)\n/);
    expect(md).not.toContain('Dry run');
    expect(md).toContain('sha256 `aaaaaaaaaaaa`');
    expect(md).not.toContain('b'.repeat(52));
    expect(md).toContain('3.3 s');
    expect(md).toContain('| action | done | total |');
    expect(countsRow(md, 'create')).toEqual(['+ create', '2', '2']);
    expect(countsRow(md, 'update')).toEqual(['~ update', '1', '1']);
    expect(countsRow(md, 'delete')).toEqual(['- delete', '1', '1']);
    expect(countsRow(md, 'noop')).toEqual(['= noop', '96', '96']);
    expect(md).toContain('4 calls at 10/s ≈ 1 s');
    expect(md).toContain('4 requests in a run of 3.3 s, 1.2 per second on average; the service never answered 429 (too many requests); no call was retried.');
    expect(md).not.toContain('### Failures');
  });

  it('a dry run says nothing was written and counts planned actions', () => {
    const md = renderMarkdown(
      aReport({
        dryRun: true,
        outcome: 'dry_run',
        records: [aRecord({ action: 'create', reason: 'new', outcome: 'planned' })],
      }),
    );
    expect(md).toContain('🔍 dry run (exit 0)');
    expect(md).toContain('**Dry run** — nothing was written to the service.');
    expect(countsRow(md, 'create')).toEqual(['+ create', '1', '0', '1']);
  });

  it('a refused run names the tripped guard and the exact flag that allows it', () => {
    const md = renderMarkdown(
      aReport({
        outcome: 'refused',
        exitCode: 3,
        message: 'A safety guard refused the run; nothing was written.',
        records: [aRecord({ action: 'delete', reason: 'gone_from_roster', outcome: 'skipped', changes: [] })],
        guards: [
          aGuard({ guard: 'max_deletes', tripped: true, message: '60 deletes planned; the limit is 12.', allowWith: '--allow-deletes 60' }),
          aGuard({ guard: 'source_drop', tripped: false, message: 'Valid records 60, last run 120.' }),
          aGuard({ guard: 'inventory_missing', tripped: false, message: 'the target group is known but this pipeline owns no records in its state.' }),
        ],
      }),
    );
    expect(md).toContain('⛔ refused by a guard, nothing written (exit 3)');
    expect(md).toContain('> A safety guard refused the run; nothing was written.');
    expect(md).toContain('- ⛔ **tripped** `max_deletes` — 60 deletes planned; the limit is 12. To allow it: `--allow-deletes 60`');
    expect(md).toContain('- ✅ passed `source_drop` — Valid records 60, last run 120.');
    // A warning is not a green "passed".
    expect(md).toContain('- ⚠️ warning `inventory_missing` — the target group is known');
    expect(md).not.toContain('passed `inventory_missing`');
  });

  it('a partial run lists failures with client_id, status, attempts and error, emails masked', () => {
    const failures = Array.from({ length: MARKDOWN_LIMITS.failures + 3 }, (_, i) =>
      aRecord({ clientId: `F-${i}`, outcome: 'failed', httpStatus: 422, attempts: 1, error: `email jane.doe${i}@uni.example is invalid` }),
    );
    const md = renderMarkdown(aReport({ outcome: 'partial', exitCode: 2, records: failures }));

    expect(md).toContain('⚠️ incomplete, 23 records failed (exit 2)');
    expect(md).toContain(`### Failures (first ${MARKDOWN_LIMITS.failures} of ${failures.length})`);
    expect(md).toContain('| `F-0` | update | 422 | 1 | email &lt;email&gt; is invalid |');
    expect(md).not.toContain(`F-${MARKDOWN_LIMITS.failures} `);
    expect(md).not.toMatch(/@uni\.example/);
  });

  it('lists the first changed records with field names only, never values, names or emails', () => {
    const records = Array.from({ length: 25 }, (_, i) =>
      aRecord({
        clientId: `C-${i}`,
        changes: [
          aChange({ field: 'name', label: 'Name', before: 'Marie Curie', after: 'Marie Skłodowska-Curie' }),
          aChange({ field: 'emails', label: 'Emails', before: ['marie@sorbonne.example'], after: ['mc@sorbonne.example'] }),
        ],
      }),
    );
    const md = renderMarkdown(aReport({ records }));

    expect(md).toContain('### Changes (first 20 of 25)');
    expect(md).toContain('- `~ C-0` update (changed, done) at `experts.csv:');
    expect(md).toMatch(/`~ C-19` update .*: Name, Emails\n/);
    expect(md).not.toContain('C-20');
    expect(md).not.toMatch(/Curie|@|sorbonne/);
  });

  it('calls out client_id changes, orphans, rejected rows and notes', () => {
    const md = renderMarkdown(
      aReport({
        mode: 'upsert',
        records: [
          aRecord({ clientId: 'OLD-1', action: 'delete', reason: 'client_id_changed', pairedWith: 'NEW-1', changes: [] }),
          aRecord({ clientId: 'NEW-1', action: 'create', reason: 'client_id_changed', pairedWith: 'OLD-1' }),
        ],
        orphans: ['GONE-1', 'GONE-2'],
        rejectedRows: [aRejectedRow(), aRejectedRow({ provenance: { file: 'x.csv', row: 9 } })],
        rejectedRowsOmitted: 5,
        notes: ['Detected encoding windows-1252 and delimiter ";".', 'Row 4 mentions someone@example.org'],
      }),
    );
    expect(md).toContain('### client_id changes (delete + create)\n\n- `OLD-1` → `NEW-1`\n\n');
    expect(md).toContain('2 owned record(s) are gone from the roster and were kept (upsert mode).');
    expect(md).not.toContain('GONE-1');
    expect(md).toContain('7 row(s) rejected; see rejected.csv');
    expect(md).toContain('- Detected encoding windows-1252 and delimiter ";".');
    expect(md).toContain('- Row 4 mentions &lt;email&gt;');
    expect(md).not.toContain('Grace');
  });

  it.each([
    ['a | pipe', 'a \\| pipe'],
    ['<script>alert(1)</script>', '&lt;script&gt;alert(1)&lt;/script&gt;'],
    ['line\nbreak', 'line break'],
    ['*bold* [link](x)', '\\*bold\\* \\[link\\](x)'],
  ])('mdText(%j) keeps table cells intact: %j', (input, expected) => {
    expect(mdText(input)).toBe(expected);
  });
});
