import { describe, expect, it } from 'vitest';
import { renderConsoleSummary } from '../../src/report/console.js';
import { aGuard, aRecord, aReport } from './builders.js';

const ESC = '\u001b';

describe('renderConsoleSummary', () => {
  const report = aReport({
    outcome: 'partial',
    exitCode: 2,
    records: [
      aRecord({ clientId: 'A-1', action: 'create', reason: 'new' }),
      aRecord({ clientId: 'A-2', outcome: 'failed', httpStatus: 503, attempts: 5, error: `gave up on ${ESC}[2J bob@x.example` }),
    ],
    noops: 1200,
    guards: [aGuard({ guard: 'max_deletes', tripped: true, message: '60 deletes planned; the limit is 12.', allowWith: '--allow-deletes 60' })],
  });

  it('prints an aligned action × outcome table, the tripped guard with its flag, failures and the paths', () => {
    const text = renderConsoleSummary(report, {
      color: false,
      files: { json: '/r/report.json', md: '/r/report.md', html: '/r/report.html' },
    });
    const lines = text.split('\n');

    expect(lines[0]).toBe('demo: INCOMPLETE, 1 RECORD FAILED (exit 2) · 3.3 s');
    expect(lines).toContain('  action    done  failed  total');
    expect(lines).toContain('  + create     1       0      1');
    expect(lines).toContain('  ~ update     0       1      1');
    expect(lines).toContain('  = noop    1200       0   1200');
    expect(text).toContain('guard max_deletes tripped: 60 deletes planned; the limit is 12. — allow with --allow-deletes 60');
    // Terminal control sequences from service text are neutralised, emails masked.
    expect(text).toContain('failed update A-2 (503): gave up on ?[2J <email>');
    expect(text).toContain('report:\n  html     /r/report.html\n  markdown /r/report.md\n  json     /r/report.json\n');
    expect(text).not.toContain(ESC);
  });

  it('colours only when asked', () => {
    const coloured = renderConsoleSummary(report, { color: true });
    expect(coloured).toContain(`${ESC}[31m`);
    expect(coloured.replace(/\u001b\[\d+m/g, '')).toBe(renderConsoleSummary(report, { color: false }));
  });

  it('says a dry run wrote nothing and shows the estimate', () => {
    const text = renderConsoleSummary(
      aReport({ dryRun: true, outcome: 'dry_run', records: [aRecord({ outcome: 'planned' })] }),
      { color: false },
    );
    expect(text.split('\n')[0]).toBe('demo: DRY RUN (exit 0) · dry run, nothing written · 3.3 s');
    expect(text).toContain('estimate: 1 calls at 10/s ≈ 1 s');
  });
});
