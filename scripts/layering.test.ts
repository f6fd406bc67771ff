/**
 * The layering check: every import (type imports too) of every source file under contract/,
 * server/, queries/, electron/ and renderer/src, parsed with TypeScript's own parser. It fails naming
 * each import cycle, each import across a boundary the style guide draws, and each folder the
 * module map (docs/ARCHITECTURE.md, "Module map") does not name or does not let import another.
 */
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '..');
const SCANNED = ['contract', 'server', 'queries', 'electron', 'renderer/src'];
const MAP_FILE = 'docs/ARCHITECTURE.md';
const MAP_HEADING = '## Module map';
/** Tests and fault runs are not part of the layering: they may reach anywhere. */
const NOT_SOURCE = /\.(test|faults|spec)\.tsx?$|\.d\.ts$/;
/** Packages that belong to one side only. */
const UI_PACKAGES = /^(react|react-dom|@tanstack\/|recharts)(\/|$)/;
const ELECTRON_PACKAGE = /^electron(\/|$)/;
/** The contract the server and the page share: the bottom layer, which every other may import. */
const CONTRACT = /^contract\//;
/** SQL statements in a string (keywords as the store writes them, upper case). */
const SQL_TEXT = /\b(SELECT\s[\s\S]*\bFROM\b|INSERT\s+(OR\s+\w+\s+)?INTO\b|CREATE\s+(TABLE|INDEX|VIEW)\b|DELETE\s+FROM\b|UPDATE\s+\w+\s+SET\b|PRAGMA\s+\w)/;

interface Edge {
  from: string;
  to: string;
  /** Erased at build time (`import type`, `import { type A }`, `typeof import(...)`). */
  typeOnly: boolean;
}

interface SourceFile {
  file: string;
  edges: Edge[];
  /** Bare specifiers (packages and node: modules). */
  packages: string[];
  /** The texts of its string and template literals. */
  strings: string[];
}

function walk(dir: string, out: string[]): void {
  for (const e of fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
    const rel = `${dir}/${e.name}`;
    if (e.isDirectory()) {
      if (e.name !== 'node_modules') walk(rel, out);
    } else if (/\.tsx?$/.test(e.name) && !NOT_SOURCE.test(e.name)) out.push(rel);
  }
}

function resolve(from: string, spec: string): string | undefined {
  const base = path.posix.join(path.posix.dirname(from), spec);
  for (const candidate of [base, `${base}.ts`, `${base}.tsx`, `${base}/index.ts`, `${base}/index.tsx`]) {
    const full = path.join(ROOT, candidate);
    if (fs.existsSync(full) && fs.statSync(full).isFile()) return candidate;
  }
  return undefined;
}

function allTypeOnly(elements: ts.NodeArray<ts.ImportSpecifier | ts.ExportSpecifier>): boolean {
  return elements.length > 0 && elements.every((e) => e.isTypeOnly);
}

function parse(file: string): SourceFile {
  const text = fs.readFileSync(path.join(ROOT, file), 'utf8');
  const src = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, file.endsWith('.tsx') ? ts.ScriptKind.TSX : ts.ScriptKind.TS);
  const out: SourceFile = { file, edges: [], packages: [], strings: [] };
  const add = (spec: string, typeOnly: boolean) => {
    if (!spec.startsWith('.')) {
      out.packages.push(spec);
      return;
    }
    const to = resolve(file, spec);
    if (!to) throw new Error(`${file}: cannot resolve the import ${spec}`);
    out.edges.push({ from: file, to, typeOnly });
  };
  const visit = (n: ts.Node): void => {
    if (ts.isImportDeclaration(n) && ts.isStringLiteral(n.moduleSpecifier)) {
      const clause = n.importClause;
      const bindings = clause?.namedBindings;
      const typeOnly = !!clause && (clause.isTypeOnly || (!clause.name && !!bindings && ts.isNamedImports(bindings) && allTypeOnly(bindings.elements)));
      add(n.moduleSpecifier.text, typeOnly);
    } else if (ts.isExportDeclaration(n) && n.moduleSpecifier && ts.isStringLiteral(n.moduleSpecifier)) {
      const named = n.exportClause && ts.isNamedExports(n.exportClause) ? n.exportClause.elements : undefined;
      add(n.moduleSpecifier.text, n.isTypeOnly || (!!named && allTypeOnly(named)));
    } else if (ts.isCallExpression(n) && n.expression.kind === ts.SyntaxKind.ImportKeyword && n.arguments[0] && ts.isStringLiteralLike(n.arguments[0])) {
      add(n.arguments[0].text, false);
    } else if (ts.isImportTypeNode(n) && ts.isLiteralTypeNode(n.argument) && ts.isStringLiteral(n.argument.literal)) {
      add(n.argument.literal.text, true);
    } else if (ts.isStringLiteral(n) || ts.isNoSubstitutionTemplateLiteral(n)) {
      out.strings.push(n.text);
    } else if (ts.isTemplateExpression(n)) {
      out.strings.push([n.head.text, ...n.templateSpans.map((s) => s.literal.text)].join(' ? '));
    }
    ts.forEachChild(n, visit);
  };
  visit(src);
  return out;
}

/** Tarjan's strongly connected components: each with more than one file is an import cycle. */
export function importCycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const connect = (v: string): void => {
    index.set(v, next);
    low.set(v, next);
    next++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        connect(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const scc: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        scc.push(w);
      } while (w !== v);
      if (scc.length > 1 || (graph.get(v) ?? []).includes(v)) cycles.push(scc.sort());
    }
  };
  for (const v of [...graph.keys()].sort()) if (!index.has(v)) connect(v);
  return cycles;
}

const folderOf = (file: string): string => `${path.posix.dirname(file)}/`;

/** Every folder under `dir` that holds a file, `dir` itself included. */
function foldersUnder(dir: string, out: string[] = []): string[] {
  const entries = fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true });
  if (entries.some((e) => e.isFile())) out.push(`${dir}/`);
  for (const e of entries) if (e.isDirectory() && e.name !== 'node_modules') foldersUnder(`${dir}/${e.name}`, out);
  return out;
}

interface MapRow {
  folder: string;
  /** The folders its files may import (server/ only); undefined when the row does not say. */
  imports?: string[];
}

/**
 * The module map's rows: a table row whose first cell is a backquoted folder (`server/store/`);
 * a third cell lists, backquoted, the folders it may import ("—" for none).
 */
function readModuleMap(): MapRow[] {
  const text = fs.readFileSync(path.join(ROOT, MAP_FILE), 'utf8');
  const start = text.indexOf(`\n${MAP_HEADING}\n`);
  if (start < 0) throw new Error(`${MAP_FILE} has no "${MAP_HEADING}" section`);
  const end = text.indexOf('\n## ', start + 1);
  const rows: MapRow[] = [];
  for (const line of text.slice(start, end < 0 ? undefined : end).split('\n')) {
    const cells = line.split('|').slice(1, -1).map((c) => c.trim());
    const folder = /^`([\w./-]+\/)`/.exec(cells[0] ?? '')?.[1];
    if (!folder) continue;
    const imports = cells[2] === undefined ? undefined : [...cells[2].matchAll(/`([\w./-]+\/)`/g)].map((m) => m[1]!);
    rows.push({ folder, imports });
  }
  return rows;
}

const files: string[] = [];
for (const dir of SCANNED) walk(dir, files);
const parsed = files.sort().map(parse);
const edges = parsed.flatMap((f) => f.edges);
const under = (file: string, dir: string) => file.startsWith(`${dir}/`);

describe('the layering', () => {
  it('finds the files and their imports (the check is not vacuous)', () => {
    expect(files.length).toBeGreaterThan(150);
    expect(edges.some((e) => e.from === 'server/app.ts' && e.to === 'server/errors.ts')).toBe(true);
    expect(edges.some((e) => e.typeOnly)).toBe(true);
    expect(importCycles(new Map([['a', ['b']], ['b', ['c']], ['c', ['a']], ['d', ['a']]]))).toEqual([['a', 'b', 'c']]);
  });

  it('has no import cycle in contract/, server/, queries/, electron/ or renderer/src (type imports count)', () => {
    const graph = new Map<string, string[]>(files.map((f) => [f, []]));
    for (const e of edges) graph.get(e.from)!.push(e.to);
    const cycles = importCycles(graph).map((scc) => {
      const inside = edges.filter((e) => scc.includes(e.from) && scc.includes(e.to)).map((e) => `    ${e.from} -> ${e.to}${e.typeOnly ? ' (type)' : ''}`);
      return `cycle of ${scc.length}: ${scc.join(', ')}\n${inside.join('\n')}`;
    });
    expect(cycles, cycles.join('\n')).toEqual([]);
  });

  it('server/ never imports electron/, renderer/, Electron or the UI packages; queries/ imports nothing of the app but contract/', () => {
    const wrong = [
      ...edges.filter((e) => under(e.from, 'server') && (under(e.to, 'electron') || under(e.to, 'renderer'))).map((e) => `${e.from} imports ${e.to}`),
      ...parsed.filter((f) => under(f.file, 'server')).flatMap((f) => f.packages.filter((p) => ELECTRON_PACKAGE.test(p) || UI_PACKAGES.test(p)).map((p) => `${f.file} imports ${p}`)),
      ...edges.filter((e) => under(e.from, 'queries') && !under(e.to, 'queries') && !CONTRACT.test(e.to)).map((e) => `${e.from} imports ${e.to}`),
    ];
    expect(wrong).toEqual([]);
  });

  it('contract/ imports only itself: no server/, renderer/, electron/ or queries/ code and no package (it runs in the page and in Node)', () => {
    const contract = parsed.filter((f) => under(f.file, 'contract'));
    expect(contract.length).toBeGreaterThan(0);
    const wrong = [
      ...edges.filter((e) => under(e.from, 'contract') && !under(e.to, 'contract')).map((e) => `${e.from} imports ${e.to}`),
      ...contract.flatMap((f) => f.packages.map((p) => `${f.file} imports ${p}`)),
    ];
    expect(wrong).toEqual([]);
  });

  it('the renderer reads the server through contract/ only, and electron/ code only as types', () => {
    const wrong = [
      ...edges.filter((e) => under(e.from, 'renderer/src') && (under(e.to, 'server') || under(e.to, 'queries'))).map((e) => `${e.from} imports ${e.to}: what both sides need belongs in contract/`),
      ...edges.filter((e) => under(e.from, 'renderer/src') && under(e.to, 'electron') && !e.typeOnly).map((e) => `${e.from} imports values from ${e.to}: use \`import type\``),
    ];
    expect(wrong).toEqual([]);
    expect(edges.some((e) => under(e.from, 'renderer/src') && CONTRACT.test(e.to) && !e.typeOnly)).toBe(true);
  });

  it('electron/ holds no SQL: no sql.js, no store database module, no SQL statement', () => {
    const electron = parsed.filter((f) => under(f.file, 'electron'));
    const wrong = [
      ...electron.flatMap((f) => f.packages.filter((p) => /^sql\.js(\/|$)/.test(p)).map((p) => `${f.file} imports ${p}`)),
      ...edges.filter((e) => under(e.from, 'electron') && e.to === 'server/store/db.ts').map((e) => `${e.from} imports ${e.to}`),
      ...electron.flatMap((f) => f.strings.filter((s) => SQL_TEXT.test(s)).map((s) => `${f.file} has SQL: ${s.slice(0, 80)}`)),
    ];
    expect(wrong).toEqual([]);
  });

  it('the module map names every folder of contract/, server/ and renderer/, and only folders that exist', () => {
    const map = readModuleMap().map((r) => r.folder);
    const actual = [...foldersUnder('contract'), ...foldersUnder('server'), ...foldersUnder('renderer')].filter((d) => !d.startsWith('renderer/node_modules'));
    expect({ missingFromMap: actual.filter((d) => !map.includes(d)), gone: map.filter((d) => !fs.existsSync(path.join(ROOT, d))) }).toEqual({ missingFromMap: [], gone: [] });
  });

  it('each folder of server/ imports only the folders its row of the module map lists', () => {
    const rows = new Map(readModuleMap().map((r) => [r.folder, r]));
    const wrong: string[] = [];
    for (const e of edges) {
      // The files at server/'s root are the app's edges (app, main) and its shared bottom (errors, time, sources): not one layer.
      const from = folderOf(e.from);
      if (!under(e.from, 'server') || from === 'server/') continue;
      const to = folderOf(e.to);
      // queries/ is data and contract/ the shared rules: every layer may read them.
      if (to === from || to === 'server/' || to === 'queries/' || CONTRACT.test(e.to)) continue;
      const allowed = rows.get(from)?.imports;
      if (allowed === undefined) wrong.push(`${from} has no list of the folders it may import in ${MAP_FILE}`);
      else if (!allowed.includes(to)) wrong.push(`${e.from} imports ${e.to}, but the module map does not let ${from} import ${to}`);
    }
    expect([...new Set(wrong)]).toEqual([]);
  });
});
