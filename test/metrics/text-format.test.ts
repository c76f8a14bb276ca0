/**
 * The text format as written and read back: escapes a real parser of the format
 * (parse-prometheus-text-format) reads as meant, and the reader of the previous file gets back
 * exactly what was written, or counts the lines it cannot read.
 */
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { describe, expect, it } from 'vitest';
import type { MetricFamily, Sample } from '../../src/metrics/series.js';
import { readSamples, renderFamilies } from '../../src/metrics/text-format.js';

const FAMILY: MetricFamily[] = [
  { name: 'rostersync_test_seconds', type: 'gauge', help: 'A help text with a backslash \\ and\na newline.' },
  { name: 'rostersync_test_total', type: 'counter', help: 'Runs.' },
];

describe('the Prometheus text format', () => {
  it.each([
    ['plain', 'reviewers'],
    ['quotes and backslashes', 'a "quoted" \\ name'],
    ['a newline', 'two\nlines'],
    ['braces and commas', 'x},y="z"'],
  ])('writes label values with %s so that a real parser and the reader get them back', (_, name) => {
    const samples: Sample[] = [
      { name: 'rostersync_test_seconds', labels: { pipeline: name }, value: 1.5 },
      { name: 'rostersync_test_total', labels: { pipeline: name, outcome: 'success' }, value: 3 },
    ];
    const text = renderFamilies(FAMILY, samples);
    const parsed = parsePrometheusTextFormat(text);
    expect(parsed.map((f) => [f.name, f.type])).toEqual([
      ['rostersync_test_seconds', 'GAUGE'],
      ['rostersync_test_total', 'COUNTER'],
    ]);
    expect(parsed[0]!.metrics[0]).toEqual({ labels: { pipeline: name }, value: '1.5' });
    expect(readSamples(text)).toEqual({ samples, unreadable: 0 });
  });

  it('groups the samples of a family, whatever their order, and writes no empty family', () => {
    const text = renderFamilies(FAMILY, [
      { name: 'rostersync_test_total', labels: { pipeline: 'a' }, value: 1 },
      { name: 'rostersync_test_total', labels: { pipeline: 'b' }, value: 2 },
    ]);
    expect(text).not.toContain('rostersync_test_seconds');
    expect(parsePrometheusTextFormat(text)[0]!.metrics).toHaveLength(2);
  });

  it('counts the lines of a file it did not write instead of guessing', () => {
    const { samples, unreadable } = readSamples('# HELP x y\nrostersync_a{pipeline="p"} 1\nnot a sample\nrostersync_b{pipeline="p} 2\nrostersync_c 12abc\n');
    expect(samples).toEqual([{ name: 'rostersync_a', labels: { pipeline: 'p' }, value: 1 }]);
    expect(unreadable).toBe(3);
  });
});
