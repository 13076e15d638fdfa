import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { describe, it } from 'node:test';

/**
 * The import rules of docs/architecture.md, checked over the real import graph of src/:
 * 1. src/http/ imports no capability: only the shared folders below (and generated/ contract types).
 * 2. A folder reaches into another folder only through its index.ts.
 * 3. The shared folders import no capability.
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

const edges = sourceFiles(SRC).flatMap(importsOf);

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

  it('each rule catches a planted violation and lets the allowed form pass', () => {
    const edge = (from: string, to: string): Edge => ({ from, to, specifier: '' });
    assert.ok(httpImportsCapability(edge(join('http', 'app.ts'), join('chat', 'index.ts'))));
    assert.ok(!httpImportsCapability(edge(join('http', 'app.ts'), join('errors', 'index.ts'))));
    assert.ok(reachesPastIndex(edge(join('chat', 'x.ts'), join('cache', 'cache-key.ts'))));
    assert.ok(!reachesPastIndex(edge(join('chat', 'x.ts'), join('cache', 'index.ts'))));
    assert.ok(sharedImportsAbove(edge(join('kernel', 'x.ts'), join('errors', 'index.ts'))));
    assert.ok(!sharedImportsAbove(edge(join('tiers', 'x.ts'), join('kernel', 'index.ts'))));
  });
});
