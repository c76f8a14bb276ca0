import { describe, expect, it } from 'vitest';
import { docBlocks } from './doc-blocks.js';

describe('docBlocks', () => {
  it('finds blocks by their fences, with their language, line and marker', () => {
    const page = [
      '# Title',
      '<!-- doc-test: skip needs a Docker engine -->',
      '```sh',
      'docker build .',
      '```',
      '',
      '<!-- doc-test: write pipelines/mine.yaml -->',
      '~~~yaml',
      'source: { file: x.csv }',
      '```',
      '~~~',
      '````bash',
      '```',
      'rostersync sync p.yaml',
      '````',
      '<!-- doc-test: fresh -->',
      '```shell',
      'echo hi',
      '```',
    ].join('\n');
    expect(docBlocks(page)).toEqual([
      { line: 3, lang: 'sh', text: 'docker build .', marker: { kind: 'skip', reason: 'needs a Docker engine' } },
      { line: 8, lang: 'yaml', text: 'source: { file: x.csv }\n```', marker: { kind: 'write', path: 'pipelines/mine.yaml' } },
      { line: 12, lang: 'bash', text: '```\nrostersync sync p.yaml' },
      { line: 17, lang: 'shell', text: 'echo hi', marker: { kind: 'fresh' } },
    ]);
  });

  it.each([
    ['<!-- doc-test: skip -->', /must say why/],
    ['<!-- doc-test: write -->', /names one relative path/],
    ['<!-- doc-test: ignore this -->', /unknown doc-test marker "ignore this"/],
  ])('refuses the marker %s', (marker, message) => {
    expect(() => docBlocks(`${marker}\n\`\`\`sh\nls\n\`\`\`\n`, 'page.md')).toThrow(message);
  });
});
