import assert from 'node:assert/strict';
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { chromium } from 'playwright-core';
import { findChromium, screenshotPath } from '../support/browser.js';
import { EMBEDDING_MODEL, SMOLLM2_MODEL, setUpSkip } from '../support/models.js';
import { freePort, ROOT } from '../support/processes.js';

/**
 * The README's quickstart followed literally, read out of README.md (so it breaks when the README changes): its
 * shell blocks up to "Where to go next", each command run by bash in the checkout as a user types it, `npm start`
 * left running as in a first terminal, the others in a second; then Chromium signs in to the dashboard with the
 * email and password the quickstart gave. What it does not run, and why:
 * - `scripts/setup` (with or without `--tests`): it installs system packages and downloads the models over the
 *   network. This test uses what it already put in `./data/models` (linked into a fresh data directory), and skips
 *   without it, saying so, except with CI=true where the set-up ran.
 * - `npm test`: the suite this test is part of.
 * Two things differ from a user's terminal, so that it can run beside other tests: the service listens on a free
 * port instead of 8080 (`PVAI_PORT`, and the commands' `127.0.0.1:8080` read as that port) and keeps its data in a
 * temporary `PVAI_DATA_DIR` instead of `./data`.
 */
const run = promisify(execFile);
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');
const SKIPPED: ReadonlyArray<[RegExp, string]> = [
  [/^scripts\/setup\b/, 'installs system packages and downloads models'],
  [/\bnpm test$/, 'the suite this test belongs to'],
];

interface Step {
  command: string;
  /** The README's `# → …` after the command: what it answers. */
  shown: string;
}

/** The quickstart's commands in order: each `sh` block before "## Where to go next", `a && b` as two steps. */
function quickstart(): Step[] {
  const part = README.slice(0, README.indexOf('## Where to go next'));
  const steps: Step[] = [];
  for (const [, block = ''] of part.matchAll(/```sh\n([\s\S]*?)```/g)) {
    const lines = block.replace(/\\\n\s*/g, '').split('\n');
    for (const line of lines) {
      if (/^#\s+(→|\s)/.test(line) && steps.length) {
        const last = steps[steps.length - 1] as Step;
        last.shown += line.replace(/^#\s*(→\s*)?/, '');
      } else if (line.trim() && !line.startsWith('#')) {
        const command = line.replace(/\s+#\s.*$/, '').trim();
        for (const part of command.split(' && ')) steps.push({ command: part.trim(), shown: '' });
      }
    }
  }
  return steps;
}

/** What the README's answer shows: its field names, and its string fields without an ellipsis, exactly. */
function checkShown(step: Step, stdout: string): void {
  for (const [, key] of step.shown.matchAll(/"(\w+)":/g)) {
    assert.ok(stdout.includes(`"${key}":`), `${step.command}: the README shows "${key}"; the answer: ${stdout}`);
  }
  for (const [pair] of step.shown.matchAll(/"\w+":"[^"…]*"/g)) {
    assert.ok(stdout.includes(pair), `${step.command}: the README shows ${pair}; the answer: ${stdout}`);
  }
}

const chromiumFound = findChromium();
const skip =
  ('missing' in chromiumFound ? chromiumFound.missing : false) || setUpSkip([SMOLLM2_MODEL, EMBEDDING_MODEL]);

describe("the README's quickstart, followed literally, ends signed in to the dashboard", { skip }, () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'pvai-quickstart-'));
  const children: ChildProcess[] = [];
  let port = 0;
  let env: NodeJS.ProcessEnv;

  before(async () => {
    symlinkSync(dirname(SMOLLM2_MODEL), join(dataDir, 'models'));
    port = await freePort();
    env = {
      ...process.env,
      // The Node running this test first on PATH, as scripts/node24 would put it.
      PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}`,
      PVAI_DATA_DIR: dataDir,
      PVAI_PORT: String(port),
      PVAI_LOG_LEVEL: 'warn',
    };
    for (const name of ['DATABASE_URL', 'PVAI_KEY', 'PVAI_LOCAL_MODEL', 'PVAI_EMBEDDING_MODEL']) delete env[name];
  });
  after(async () => {
    for (const child of children) {
      if (child.exitCode !== null || child.pid === undefined) continue;
      process.kill(-child.pid, 'SIGTERM');
      await once(child, 'exit');
    }
    rmSync(dataDir, { recursive: true, force: true });
  });

  /** `npm start`: left running in its own process group, ready once /z1/health answers. */
  async function startService(command: string): Promise<void> {
    const child = spawn('bash', ['-c', command], {
      cwd: ROOT,
      env,
      detached: true,
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    children.push(child);
    const deadline = Date.now() + 150_000;
    for (;;) {
      assert.equal(child.exitCode, null, `${command} exited`);
      const health = await fetch(`http://127.0.0.1:${port}/z1/health`).catch(() => undefined);
      if (health?.ok) return;
      assert.ok(Date.now() < deadline, `${command}: no answer from /z1/health in 150 s`);
      await new Promise((r) => setTimeout(r, 250));
    }
  }

  it('runs every command of the quickstart as written, then signs in with the email and password it set', {
    timeout: 300_000,
  }, async () => {
    const steps = quickstart();
    assert.ok(steps.some((s) => /npm start$/.test(s.command)) && steps.some((s) => /accounts create/.test(s.command)));
    let created: { account: { email: string }; api_key: string } | undefined;
    let password = '';
    const ran: string[] = [];
    for (const step of steps) {
      const command = step.command.replaceAll('127.0.0.1:8080', `127.0.0.1:${port}`);
      if (SKIPPED.some(([pattern]) => pattern.test(command))) continue;
      ran.push(command);
      if (/npm start$/.test(command)) {
        await startService(command);
      } else if (command.startsWith('export PVAI_KEY=')) {
        assert.ok(created, 'the key comes from `pvai accounts create`');
        assert.match(command, /^export PVAI_KEY=pv_sk_…$/, 'the README exports the key it just printed');
        env.PVAI_KEY = created.api_key;
      } else {
        const { stdout } = await run('bash', ['-c', command], { cwd: ROOT, env, timeout: 120_000 });
        checkShown(step, stdout);
        if (/accounts create/.test(command)) {
          created = JSON.parse(stdout) as typeof created;
          password = /--password\s+(?:'([^']*)'|(\S+))/.exec(command)?.slice(1).find(Boolean) ?? '';
        }
      }
    }
    assert.ok(created && password, 'the quickstart creates an account with a dashboard password');
    assert.ok(ran.some((c) => c.includes('/z1/chat/completions')) && ran.some((c) => c.includes('/z1/code/execute')));

    const browser = await chromium.launch({
      executablePath: 'path' in chromiumFound ? chromiumFound.path : '',
      headless: true,
      args: ['--no-sandbox', '--disable-dev-shm-usage'],
    });
    try {
      const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
      // Where the README says the dashboard is.
      const dashboard = /The developer dashboard is\s+at `http:\/\/host:8080(\/dashboard)`/.exec(README)?.[1];
      assert.equal(dashboard, '/dashboard');
      await page.goto(`http://127.0.0.1:${port}${dashboard}`);
      await page.getByLabel('Email').fill(created.account.email);
      await page.getByLabel('Password').fill(password);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForURL('**/dashboard/keys');
      await page.getByRole('heading', { level: 1, name: 'API keys' }).waitFor();
      // The key the quickstart used, by its prefix, with a last use: the chat and the code it ran.
      const row = page.getByRole('row', { name: new RegExp(created.api_key.slice(0, 12)) });
      assert.doesNotMatch((await row.textContent()) ?? '', /never/);
      await page.screenshot({ path: screenshotPath('30-quickstart-signed-in'), fullPage: true });
    } finally {
      await browser.close();
    }
  });
});
