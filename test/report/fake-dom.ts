/**
 * Just enough of the browser DOM to run report.html's inline script in a test (no browser and no
 * DOM library are installed). It supports what that script uses: createElement, createTextNode,
 * getElementById, appendChild, textContent, className, querySelector('.class') and events.
 */
export class FakeNode {
  children: FakeNode[] = [];
  className = '';
  title = '';
  colSpan = 1;
  value = '';
  private text = '';
  private listeners = new Map<string, ((event: { target: FakeNode }) => void)[]>();

  constructor(readonly tagName: string) {}

  get textContent(): string {
    return this.children.length > 0 ? this.children.map((child) => child.textContent).join('') : this.text;
  }
  set textContent(text: string) {
    this.children = [];
    this.text = text;
  }
  appendChild(child: FakeNode): FakeNode {
    this.children.push(child);
    return child;
  }
  addEventListener(type: string, listener: (event: { target: FakeNode }) => void): void {
    this.listeners.set(type, [...(this.listeners.get(type) ?? []), listener]);
  }
  dispatch(type: string): void {
    for (const listener of this.listeners.get(type) ?? []) listener({ target: this });
  }
  querySelector(selector: string): FakeNode | null {
    const className = selector.replace(/^\./, '');
    for (const child of this.children) {
      if (child.className.split(' ').includes(className)) return child;
      const found = child.querySelector(selector);
      if (found) return found;
    }
    return null;
  }
  /** Every descendant with this tag name, depth first. */
  all(tagName: string): FakeNode[] {
    return this.children.flatMap((child) => [...(child.tagName === tagName ? [child] : []), ...child.all(tagName)]);
  }
}

/** Runs the page's inline script against fake elements for the ids it looks up. */
export function runPageScript(html: string): { byId: (id: string) => FakeNode } {
  const data = /<script type="application\/json" id="report-data">([\s\S]*?)<\/script>/.exec(html)?.[1];
  const script = /<script>([\s\S]*?)<\/script>/.exec(html)?.[1];
  if (data === undefined || script === undefined) throw new Error('report.html lacks its data or script block');

  const elements = new Map<string, FakeNode>();
  const byId = (id: string): FakeNode => {
    let node = elements.get(id);
    if (!node) {
      node = new FakeNode(id === 'report-data' ? 'script' : id.startsWith('f-') ? 'input' : 'section');
      if (id === 'report-data') node.textContent = data;
      // The server renders each table section with a heading holding a `.n` counter.
      if (node.tagName === 'section') {
        const heading = node.appendChild(new FakeNode('h2'));
        heading.appendChild(new FakeNode('span')).className = 'n';
      }
      elements.set(id, node);
    }
    return node;
  };
  const document = {
    getElementById: byId,
    createElement: (tag: string) => new FakeNode(tag),
    createTextNode: (text: string) => {
      const node = new FakeNode('#text');
      node.textContent = text;
      return node;
    },
  };
  // Filter input is debounced with setTimeout; run timers at once.
  const run = new Function('document', 'setTimeout', 'clearTimeout', script);
  run(document, (callback: () => void) => callback(), () => undefined);
  return { byId };
}

/** The body rows of the table in a section, each as its cells' text. */
export function tableRows(section: FakeNode): string[][] {
  const tbody = section.all('tbody')[0];
  if (!tbody) throw new Error('section has no table');
  return tbody.children.map((row) => row.children.map((cell) => cell.textContent));
}
