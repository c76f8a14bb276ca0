import ts from 'typescript';
import { readFileSync } from 'node:fs';
import { execSync } from 'node:child_process';
const files = execSync("git ls-files 'src/**.ts'", { encoding: 'utf8' }).split('\n').filter(Boolean);
const out = [];
for (const f of files) {
  const sf = ts.createSourceFile(f, readFileSync(f, 'utf8'), ts.ScriptTarget.Latest, true);
  const visit = (n) => {
    if (ts.isFunctionDeclaration(n) || ts.isMethodDeclaration(n) || ts.isArrowFunction(n) || ts.isFunctionExpression(n) || ts.isConstructorDeclaration(n)) {
      const a = sf.getLineAndCharacterOfPosition(n.getStart()).line, b = sf.getLineAndCharacterOfPosition(n.getEnd()).line;
      const name = n.name?.getText?.() ?? (ts.isVariableDeclaration(n.parent) ? n.parent.name.getText() : '(anon)');
      if (b - a + 1 > +(process.argv[2] ?? 120)) out.push([b - a + 1, `${f}:${a + 1} ${name}`]);
    }
    ts.forEachChild(n, visit);
  };
  visit(sf);
}
out.sort((x, y) => y[0] - x[0]).forEach(([n, s]) => console.log(n, s));
