import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';
import { ROOT } from '../support/processes.js';

const run = promisify(execFile);

/**
 * A project npm would rewrite the lock file of: a valid lock, indented as npm never writes one. No dependencies,
 * so that npm needs no registry (offline) and the test runs anywhere.
 */
function project(): string {
  const dir = mkdtempSync(join(tmpdir(), 'pvai-npm-deps-'));
  writeFileSync(join(dir, 'package.json'), '{"name":"locked","version":"1.0.0","private":true}\n');
  const lock = {
    name: 'locked',
    version: '1.0.0',
    lockfileVersion: 3,
    requires: true,
    packages: { '': { name: 'locked', version: '1.0.0' } },
  };
  writeFileSync(join(dir, 'package-lock.json'), `${JSON.stringify(lock, null, 4)}\n`);
  return dir;
}

const npmEnv = { ...process.env, npm_config_offline: 'true', npm_config_update_notifier: 'false' };

describe("scripts/setup's npm step (scripts/npm-dependencies)", () => {
  it('installs and leaves package-lock.json byte for byte as it was, where a plain npm install rewrites it', async () => {
    const control = project();
    const before = readFileSync(join(control, 'package-lock.json'));
    await run('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: control, env: npmEnv });
    assert.notDeepEqual(readFileSync(join(control, 'package-lock.json')), before, 'npm install rewrites this lock');

    const dir = project();
    cpSync(join(control, 'package.json'), join(dir, 'package.json'));
    const script = join(ROOT, 'scripts', 'npm-dependencies');
    const first = await run(script, [dir], { env: npmEnv });
    assert.match(first.stdout, /npm install --no-save/);
    assert.deepEqual(readFileSync(join(dir, 'package-lock.json')), before, 'the lock file untouched');
    assert.ok(existsSync(join(dir, 'node_modules', '.package-lock.json')), 'the stamp of an install');

    const second = await run(script, [dir], { env: npmEnv });
    assert.match(second.stdout, /npm dependencies are installed/, 'nothing to do the second time');
    assert.deepEqual(readFileSync(join(dir, 'package-lock.json')), before);
  });
});
