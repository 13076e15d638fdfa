import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { describe, it } from 'node:test';

/**
 * docs/architecture.md: where things live. scripts/ keeps entry points only (set-up, code generation, builds,
 * training), so it stays small; the checks people run against a server (contract, fuzz, real clients) are tests
 * and live in test/; the benchmarks live in bench/. A test never imports scripts/ and scripts/ never imports
 * test/: each half can move or be rewritten without breaking the other.
 */
const ROOT = resolve(import.meta.dirname, '../..');
const SCRIPTS_LINE_BUDGET = 3000;
/** The test helpers a benchmark still borrows (a stand-in upstream, a throwaway database, Qdrant, the dashboard). */
const BENCH_BORROWS = new Set([
  'test/support/databases.ts',
  'test/support/qdrant.ts',
  'test/support/mock-openai-upstream.ts',
  'test/support/dashboard.ts',
  // bench:chat's tracing rows export to a real OpenTelemetry Collector, started as the tracing tests start it.
  'test/support/otel-collector.ts',
]);

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : filesUnder(path);
    return [path];
  });
}

function lineCount(path: string): number {
  const text = readFileSync(path, 'utf8');
  return text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
}

/** The repository-relative files a JS/TS module imports or requires by a relative path. */
function relativeImports(file: string, text: string): string[] {
  const specifiers = text.matchAll(
    /(?:^|\n)\s*(?:import|export)\b[^'"]*?from\s+'([^']+)'|import\(\s*'([^']+)'\s*\)|require\(\s*'([^']+)'\s*\)/g,
  );
  return [...specifiers]
    .map((match) => match[1] ?? match[2] ?? match[3] ?? '')
    .filter((specifier) => specifier.startsWith('.'))
    .map((specifier) =>
      relative(ROOT, resolve(dirname(file), specifier.replace(/\.js$/, '.ts')))
        .split(sep)
        .join('/'),
    );
}

const modules = (dir: string) => filesUnder(join(ROOT, dir)).filter((path) => /\.(?:ts|mjs|cjs|js)$/.test(path));
const edgesFrom = (dir: string) =>
  modules(dir).flatMap((file) =>
    relativeImports(file, readFileSync(file, 'utf8')).map((to) => ({ from: relative(ROOT, file), to })),
  );
const into = (folder: string) => (edge: { to: string }) => edge.to.startsWith(`${folder}/`);

describe('layout (docs/architecture.md)', () => {
  it(`scripts/ holds entry points only: ${SCRIPTS_LINE_BUDGET} lines at most, all files counted`, () => {
    const lines = filesUnder(join(ROOT, 'scripts')).reduce((sum, path) => sum + lineCount(path), 0);
    assert.ok(lines > 0);
    assert.ok(lines <= SCRIPTS_LINE_BUDGET, `scripts/ has ${lines} lines`);
  });

  it('no test imports scripts/, and scripts/ imports no test', () => {
    const fromTests = edgesFrom('test');
    assert.ok(fromTests.some(into('src')), 'the imports of test/ were not read');
    assert.deepEqual(fromTests.filter(into('scripts')), []);
    assert.deepEqual(edgesFrom('scripts').filter(into('test')), []);
  });

  it('bench/ imports nothing from test/ beyond the support helpers it borrows', () => {
    const borrowed = edgesFrom('bench').filter(into('test'));
    assert.deepEqual(
      borrowed.filter((edge) => !BENCH_BORROWS.has(edge.to)),
      [],
    );
  });

  it('reads imports, requires and dynamic imports, relative to the importing file', () => {
    const file = join(ROOT, 'test', 'x', 'a.ts');
    const text = "import { a } from '../../scripts/b.js';\nconst c = require('./c.cjs');\nawait import('../d.js');";
    assert.deepEqual(relativeImports(file, text), ['scripts/b.ts', 'test/x/c.cjs', 'test/d.ts']);
  });
});
