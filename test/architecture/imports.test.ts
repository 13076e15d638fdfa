import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { describe, it } from 'node:test';

/**
 * The import rules of docs/architecture.md, checked over the real import graph of src/:
 * 1. src/http/ imports no capability: only the shared folders below (and generated/ contract types).
 * 2. A folder reaches into another folder only through its index.ts.
 * 3. The shared folders import no capability.
 * 4. Documents (`documents/`) are a capability the composition root wires: only `compose.ts` imports it (the CLI's
 *    `pvai documents` gets it from there, assembled as the server assembles it); memory, web and the rest share the
 *    retrieval engine (`retrieval/`), never documents/.
 * 5. No import circle between files (type-only imports count too).
 * 6. scripts/ (entry points) and bench/ (the benchmarks) reach the product through a capability's index.ts, or a
 *    file at the root of src/ (server.ts, compose.ts), like any folder of src/.
 * 7. users/ (an end user's export and erase) knows no capability: the capabilities register their sections with
 *    it (compose.ts) and import its port, never the reverse. It imports shared folders and retrieval's Tenant.
 */
const SRC = resolve(import.meta.dirname, '../../src');
const SHARED = new Set(['kernel', 'errors', 'clock', 'text', 'config', 'storage', 'http', 'tiers']);
/** What each shared folder may import besides itself (kept acyclic: kernel ← errors ← … ← http). */
const SHARED_MAY_IMPORT: Record<string, readonly string[]> = {
  kernel: [],
  errors: [],
  clock: [],
  text: [],
  tiers: ['kernel', 'errors'],
  // A migration back-fills what retrieval's text analysis makes (the stored terms of each chunk).
  storage: ['kernel', 'errors', 'clock', 'text'],
  // config reads the defaults of the engines it configures (cache sizes, tier rules).
  config: ['kernel', 'errors', 'tiers', 'cache'],
  http: ['kernel', 'errors', 'clock'],
};

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

interface Edge {
  from: string;
  to: string;
  specifier: string;
}

function importsOf(file: string): Edge[] {
  const text = readFileSync(file, 'utf8');
  const edges: Edge[] = [];
  for (const match of text.matchAll(
    /(?:^|\n)\s*(?:import|export)\b[^'"]*?from\s+'([^']+)'|import\(\s*'([^']+)'\s*\)/g,
  )) {
    const specifier = match[1] ?? match[2];
    if (!specifier?.startsWith('.')) continue;
    const target = resolve(dirname(file), specifier.replace(/\.js$/, '.ts'));
    edges.push({ from: relative(SRC, file), to: relative(SRC, target), specifier });
  }
  return edges;
}

/** The top-level folder of a path under src/ ('' for files directly in src/, 'outside' beyond it). */
function folderOf(path: string): string {
  if (path.startsWith('..')) return 'outside';
  const parts = path.split(sep);
  return parts.length > 1 ? (parts[0] ?? '') : '';
}

/** Rule 1: src/http imports nothing but itself, the shared folders below it and the generated types. */
function httpImportsCapability(e: Edge): boolean {
  if (folderOf(e.from) !== 'http') return false;
  const to = folderOf(e.to);
  if (to === 'outside') return !e.to.startsWith(`..${sep}generated${sep}`);
  return to !== 'http' && !SHARED_MAY_IMPORT.http?.includes(to);
}

/** Rule 2: into another folder only through its index.ts. */
function reachesPastIndex(e: Edge): boolean {
  const [from, to] = [folderOf(e.from), folderOf(e.to)];
  if (from === '' || to === 'outside' || to === '' || from === to) return false;
  return e.to !== join(to, 'index.ts');
}

/** Rule 3: a shared folder imports only the shared folders below it. */
function sharedImportsAbove(e: Edge): boolean {
  const [from, to] = [folderOf(e.from), folderOf(e.to)];
  if (!SHARED.has(from) || from === to || to === 'outside') return false;
  return !SHARED_MAY_IMPORT[from]?.includes(to);
}

/** Rule 4: documents/ is imported by the composition root alone. */
function importsDocumentsCapability(e: Edge): boolean {
  const [from, to] = [folderOf(e.from), folderOf(e.to)];
  return to === 'documents' && from !== 'documents' && e.from !== 'compose.ts';
}

/** Rule 7: users/ imports only shared folders and retrieval/ (the Tenant type). */
function usersImportsCapability(e: Edge): boolean {
  const [from, to] = [folderOf(e.from), folderOf(e.to)];
  if (from !== 'users' || to === 'users' || to === 'outside') return false;
  return !SHARED.has(to) && to !== 'retrieval';
}

/** Rule 5: the files of each import circle (Tarjan's strongly connected components of more than one file, or a self-import). */
function circles(graph: readonly Edge[]): string[][] {
  const next = new Map<string, string[]>();
  for (const e of graph) next.set(e.from, [...(next.get(e.from) ?? []), e.to]);
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  let counter = 0;
  const visit = (v: string): void => {
    index.set(v, counter);
    low.set(v, counter++);
    stack.push(v);
    onStack.add(v);
    for (const w of next.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v) as number, low.get(w) as number));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v) as number, index.get(w) as number));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string | undefined;
    do {
      w = stack.pop() as string;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1 || (next.get(v) ?? []).includes(v)) found.push(component.sort());
  };
  for (const v of next.keys()) if (!index.has(v)) visit(v);
  return found;
}

const edges = sourceFiles(SRC).flatMap(importsOf);

/** Rule 6: a script's import of src/ past a capability's index.ts. */
function scriptReachesPastIndex(e: Edge): boolean {
  const to = folderOf(e.to);
  if (to === 'outside' || to === '') return false;
  return e.to !== join(to, 'index.ts');
}
const scriptEdges = ['../scripts', '../bench'].flatMap((dir) => sourceFiles(resolve(SRC, dir))).flatMap(importsOf);

describe('import rules (docs/architecture.md)', () => {
  it('reads the graph: the imports of every file under src/', () => {
    assert.ok(edges.length > 200, `only ${edges.length} imports read`);
    assert.ok(edges.some((e) => e.from === join('chat', 'operations.ts') && e.to === join('http', 'index.ts')));
  });

  it('src/http imports no capability folder', () => {
    assert.deepEqual(edges.filter(httpImportsCapability), []);
  });

  it('a folder reaches into another only through its index.ts', () => {
    assert.deepEqual(edges.filter(reachesPastIndex), []);
  });

  it('shared folders import only the shared folders below them', () => {
    assert.deepEqual(edges.filter(sharedImportsAbove), []);
  });

  it('documents/ is imported only by the composition root (compose.ts); memory and web use retrieval/', () => {
    assert.deepEqual(edges.filter(importsDocumentsCapability), []);
    assert.ok(
      edges.some((e) => e.from === join('memory', 'memory-service.ts') && e.to === join('retrieval', 'index.ts')),
    );
  });

  it('scripts and benches import src/ only through index.ts files (or a file at its root)', () => {
    assert.ok(scriptEdges.some((e) => e.to === join('retrieval', 'index.ts')));
    assert.deepEqual(scriptEdges.filter(scriptReachesPastIndex), []);
  });

  it('users/ imports no capability: they register their sections with it', () => {
    assert.ok(edges.some((e) => e.from === join('memory', 'user-data.ts') && e.to === join('users', 'index.ts')));
    assert.deepEqual(edges.filter(usersImportsCapability), []);
  });

  it('no file imports itself through a circle of files', () => {
    assert.deepEqual(circles(edges), []);
  });

  it('each rule catches a planted violation and lets the allowed form pass', () => {
    const edge = (from: string, to: string): Edge => ({ from, to, specifier: '' });
    assert.ok(httpImportsCapability(edge(join('http', 'app.ts'), join('chat', 'index.ts'))));
    assert.ok(!httpImportsCapability(edge(join('http', 'app.ts'), join('errors', 'index.ts'))));
    assert.ok(reachesPastIndex(edge(join('chat', 'x.ts'), join('cache', 'cache-key.ts'))));
    assert.ok(!reachesPastIndex(edge(join('chat', 'x.ts'), join('cache', 'index.ts'))));
    assert.ok(sharedImportsAbove(edge(join('kernel', 'x.ts'), join('errors', 'index.ts'))));
    assert.ok(!sharedImportsAbove(edge(join('tiers', 'x.ts'), join('kernel', 'index.ts'))));
    assert.ok(importsDocumentsCapability(edge(join('memory', 'x.ts'), join('documents', 'index.ts'))));
    assert.ok(importsDocumentsCapability(edge('server.ts', join('documents', 'index.ts'))));
    assert.ok(importsDocumentsCapability(edge(join('cli', 'documents.ts'), join('documents', 'index.ts'))));
    assert.ok(!importsDocumentsCapability(edge('compose.ts', join('documents', 'index.ts'))));
    assert.ok(reachesPastIndex(edge(join('web', 'x.ts'), join('retrieval', 'sql', 'lexical-set.ts'))));
    assert.deepEqual(
      circles([edge('a.ts', 'b.ts'), edge('b.ts', 'c.ts'), edge('c.ts', 'a.ts'), edge('c.ts', 'd.ts')]),
      [['a.ts', 'b.ts', 'c.ts']],
    );
    assert.deepEqual(circles([edge('a.ts', 'b.ts'), edge('b.ts', 'c.ts')]), []);
    assert.ok(scriptReachesPastIndex(edge('../bench/x.ts', join('documents', 'document-service.ts'))));
    assert.ok(!scriptReachesPastIndex(edge('../bench/x.ts', join('documents', 'index.ts'))));
    assert.ok(!scriptReachesPastIndex(edge('../bench/x.ts', 'server.ts')));
    assert.ok(usersImportsCapability(edge(join('users', 'x.ts'), join('memory', 'index.ts'))));
    assert.ok(!usersImportsCapability(edge(join('users', 'x.ts'), join('http', 'index.ts'))));
    assert.ok(!usersImportsCapability(edge(join('memory', 'x.ts'), join('users', 'index.ts'))));
  });
});
