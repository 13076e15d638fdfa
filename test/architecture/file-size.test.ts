import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, it } from 'node:test';

/**
 * docs/architecture.md: small files. No source file of src/, test/, bench/ or scripts/ over 400 lines, so a file
 * stays one thing a reader holds at once (generated code, in generated/, is not read this way and is not counted;
 * data such as .jsonl is not source).
 */
const ROOT = resolve(import.meta.dirname, '../..');
const LIMIT = 400;

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : sources(path);
    return /\.(?:ts|mjs|cjs|js|py|sh|go)$/.test(entry.name) ? [path] : [];
  });
}

function lineCount(path: string): number {
  const text = readFileSync(path, 'utf8');
  return text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
}

describe('file size (docs/architecture.md)', () => {
  it(`no source file in src/, test/, bench/ or scripts/ is over ${LIMIT} lines`, () => {
    const files = ['src', 'test', 'bench', 'scripts'].flatMap((dir) => sources(join(ROOT, dir)));
    assert.ok(files.length > 100, `only ${files.length} files read`);
    const over = files
      .map((path) => ({ file: relative(ROOT, path), lines: lineCount(path) }))
      .filter((f) => f.lines > LIMIT);
    assert.deepEqual(over, []);
  });
});
