/**
 * No function in src/ is over 120 lines (CONTRIBUTING.md, "House rules"): a longer one holds
 * several steps that want names of their own. The emulator is outside the rule; a data table is a
 * literal, not a function, so it is outside by construction. Measured with the TypeScript compiler's
 * parser, from a function's first token to its last, every function, arrow and method, nested ones
 * included.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const MAX_LINES = 120;
const OUTSIDE = /^src\/emulator\//;

interface Measured {
  file: string;
  name: string;
  line: number;
  lines: number;
}

/** The name a function is known by: its own, its variable's, its property's, or `(anonymous)`. */
function ownName(node: ts.Node): string {
  const named = node as { name?: ts.Node };
  if (named.name && (ts.isIdentifier(named.name) || ts.isStringLiteral(named.name) || ts.isPrivateIdentifier(named.name))) return named.name.text;
  if (ts.isConstructorDeclaration(node)) return 'constructor';
  const parent = node.parent;
  if ((ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent)) && ts.isIdentifier(parent.name)) return parent.name.text;
  return '(anonymous)';
}

const isFunction = (node: ts.Node): node is ts.FunctionLikeDeclaration =>
  ts.isFunctionDeclaration(node) || ts.isMethodDeclaration(node) || ts.isArrowFunction(node) || ts.isFunctionExpression(node) || ts.isConstructorDeclaration(node) || ts.isGetAccessor(node) || ts.isSetAccessor(node);

/** Every function of a file with its length in lines, named within its class and enclosing functions (`Class.method`, `outer.inner`). */
function functionsOf(file: string): Measured[] {
  const source = ts.createSourceFile(file, readFileSync(join(ROOT, file), 'utf8'), ts.ScriptTarget.Latest, true);
  const found: Measured[] = [];
  const visit = (node: ts.Node, scope: readonly string[]) => {
    let inner = scope;
    if (ts.isClassLike(node) && node.name) inner = [...scope, node.name.text];
    if (isFunction(node)) {
      inner = [...scope, ownName(node)];
      const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const last = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      found.push({ file, name: inner.join('.'), line: first + 1, lines: last - first + 1 });
    }
    ts.forEachChild(node, (child) => visit(child, inner));
  };
  visit(source, []);
  return found;
}

const sources = readdirSync(join(ROOT, 'src'), { recursive: true, encoding: 'utf8' })
  .filter((path) => /\.(ts|mts|mjs|js)$/.test(path) && !path.endsWith('.d.ts'))
  .map((path) => relative(ROOT, join(ROOT, 'src', path)).split('\\').join('/'))
  .filter((file) => !OUTSIDE.test(file))
  .sort();
const functions = sources.flatMap(functionsOf);

describe(`functions of src/ (outside the emulator) are at most ${MAX_LINES} lines`, () => {
  it('reads the sources', () => {
    expect(sources.length).toBeGreaterThan(150);
    expect(functions.length).toBeGreaterThan(1000);
  });

  it('has no long function', () => {
    const long = functions.filter((fn) => fn.lines > MAX_LINES);
    expect(long.map((fn) => `${fn.file}:${fn.line} ${fn.name}: ${fn.lines} lines; split it into named steps`)).toEqual([]);
  });
});
