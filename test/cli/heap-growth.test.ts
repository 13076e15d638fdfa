import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { HEAP_GROWING_PERCENT, steadyHeapGrowth } from '../../src/cli/heap-growth.js';
import { ROOT } from '../support/processes.js';

const run = promisify(execFile);
const MODULE = pathToFileURL(join(ROOT, 'src', 'cli', 'heap-growth.ts')).href;

/**
 * A process that calls steadyHeapGrowth (unless `call` is false), then keeps ~60 MB of objects alive so that V8
 * runs full collections after the call; `--trace-gc-verbose` makes V8 print the growing factor it chose at each
 * one. Its old generation is capped at 256 MB: below V8's default maximum, V8's own factor is then at most 2
 * (`MaxGrowingFactor`), so a factor of 4 is pvai's and not one V8 would have chosen anyway.
 */
async function factorsAfterTheCall(nodeArgs: string[], call = true): Promise<{ growth: unknown; factors: number[] }> {
  const script = join(mkdtempSync(join(tmpdir(), 'pvai-heap-growth-')), 'grow.ts');
  writeFileSync(
    script,
    [
      `import { steadyHeapGrowth } from ${JSON.stringify(MODULE)};`,
      `console.log(\`growth \${JSON.stringify(${call} ? steadyHeapGrowth() : null)}\`);`,
      'const kept: object[] = [];',
      'for (let i = 0; i < 1_000_000; i++) kept.push({ i, label: String(i) });',
      "console.log('kept', kept.length);",
    ].join('\n'),
  );
  const { stdout } = await run(
    process.execPath,
    ['--import', 'tsx', '--max-old-space-size=256', '--trace-gc', '--trace-gc-verbose', ...nodeArgs, script],
    { cwd: ROOT, env: { ...process.env, NODE_OPTIONS: '' }, maxBuffer: 64 * 1024 * 1024 },
  );
  const lines = stdout.split('\n');
  const marker = lines.findIndex((line) => line.startsWith('growth '));
  assert.ok(marker >= 0, stdout.slice(0, 2000));
  const growth = JSON.parse((lines[marker] ?? '').slice('growth '.length));
  const factors = lines
    .slice(marker + 1)
    .flatMap((line) => /\[HeapController\] factor ([\d.]+)/.exec(line)?.[1] ?? [])
    .map(Number);
  return { growth, factors };
}

describe('pvai serve: V8 old-generation growth', () => {
  it("without it, V8's own factor here stays below pvai's (the control that makes the next case mean something)", async () => {
    const { growth, factors } = await factorsAfterTheCall([], false);
    assert.equal(growth, null);
    assert.ok(factors.length > 0);
    assert.ok(Math.max(...factors) < 1 + HEAP_GROWING_PERCENT / 100, `factors ${factors.join(', ')}`);
  });

  it('sets one fixed factor, 4, for every full collection after the call', async () => {
    const { growth, factors } = await factorsAfterTheCall([]);
    assert.deepEqual(growth, { source: 'pvai', percent: HEAP_GROWING_PERCENT });
    assert.ok(factors.length > 0, 'the script should run at least one full collection after the call');
    assert.deepEqual(new Set(factors), new Set([1 + HEAP_GROWING_PERCENT / 100]));
  });

  it("leaves an operator's own --heap-growing-percent as it is", async () => {
    const { growth, factors } = await factorsAfterTheCall(['--heap-growing-percent=50']);
    assert.deepEqual(growth, { source: 'operator' });
    assert.ok(factors.length > 0);
    assert.deepEqual(new Set(factors), new Set([1.5]));
  });

  it('reads the flag in either spelling, from the arguments or NODE_OPTIONS, without setting anything', () => {
    assert.deepEqual(steadyHeapGrowth(['--heap_growing_percent=10'], undefined), { source: 'operator' });
    assert.deepEqual(steadyHeapGrowth([], '--max-old-space-size=512 --heap-growing-percent=10'), {
      source: 'operator',
    });
  });
});
