/**
 * The code blocks of a Markdown page, for the doc-test harness (docs.integration.test.ts). A block is found by
 * its fence (``` or ~~~, three or more, closed by the same character at least as long); its info
 * string's first word is its language. An HTML comment on the line just above the fence steers it:
 *
 *   <!-- doc-test: skip <reason> -->   a shell block a reader is not meant to run here (the reason is required)
 *   <!-- doc-test: write <path> -->    a block holding a file the page tells the reader to write, written there first
 *   <!-- doc-test: fresh -->           a shell block that starts a walkthrough of its own: run in a fresh project copy
 *
 * Shell blocks (sh, bash, shell) without a marker are run, in page order.
 */
export const SHELL_LANGUAGES: ReadonlySet<string> = new Set(['sh', 'bash', 'shell']);

export type Marker = { kind: 'skip'; reason: string } | { kind: 'write'; path: string } | { kind: 'fresh' };

export interface DocBlock {
  /** 1-based line of the opening fence. */
  line: number;
  lang: string;
  text: string;
  marker?: Marker;
}

const MARKER = /^\s*<!--\s*doc-test:\s*(\S+)\s*(.*?)\s*-->\s*$/;

export function parseMarker(line: string | undefined, where: string): Marker | undefined {
  const match = line === undefined ? null : MARKER.exec(line);
  if (!match) return undefined;
  const [, kind, rest = ''] = match;
  if (kind === 'skip') {
    if (rest === '') throw new Error(`${where}: a doc-test skip marker must say why the block is not run`);
    return { kind: 'skip', reason: rest };
  }
  if (kind === 'write') {
    if (rest === '' || /\s/.test(rest)) throw new Error(`${where}: a doc-test write marker names one relative path`);
    return { kind: 'write', path: rest };
  }
  if (kind === 'fresh' && rest === '') return { kind: 'fresh' };
  throw new Error(`${where}: unknown doc-test marker "${kind}${rest ? ` ${rest}` : ''}" (skip <reason>, write <path> or fresh)`);
}

export function docBlocks(markdown: string, file = 'page'): DocBlock[] {
  const lines = markdown.split(/\r?\n/);
  const blocks: DocBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^ {0,3}(`{3,}|~{3,})\s*([^\s`]*)/.exec(lines[i]!);
    if (!open) continue;
    const fence = open[1]!;
    const body: string[] = [];
    let j = i + 1;
    const closes = new RegExp(`^ {0,3}${fence[0] === '`' ? '`' : '~'}{${fence.length},}\\s*$`);
    while (j < lines.length && !closes.test(lines[j]!)) body.push(lines[j++]!);
    const marker = parseMarker(lines[i - 1], `${file}:${i}`);
    blocks.push({ line: i + 1, lang: (open[2] ?? '').toLowerCase(), text: body.join('\n'), ...(marker ? { marker } : {}) });
    i = j;
  }
  return blocks;
}
