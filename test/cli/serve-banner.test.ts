import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { describe, it } from 'node:test';
import { cliCommand, cliEnv, freePort, ROOT } from '../support/processes.js';
import { TEST_MODEL } from '../support/server.js';

describe('pvai serve: the banner', () => {
  it('comes once the port listens, after every line the start logged', async () => {
    const port = await freePort();
    const child = spawn(process.execPath, [...cliCommand(), 'serve'], {
      cwd: ROOT,
      env: cliEnv({
        PVAI_DATA_DIR: mkdtempSync(join(tmpdir(), 'pvai-banner-')),
        DATABASE_URL: '',
        PVAI_LOCAL_MODEL: TEST_MODEL,
        PVAI_LOG_LEVEL: 'info',
        PVAI_HOST: '127.0.0.1',
        PVAI_PORT: String(port),
      }),
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    try {
      const before: string[] = [];
      let health: Promise<number> | undefined;
      for await (const line of createInterface({ input: child.stdout })) {
        if (line.startsWith('pvai: API at')) {
          // Asked the moment the line is read, before anything else runs in this process.
          health = fetch(`http://127.0.0.1:${port}/z1/health`).then(
            (res) => res.status,
            (err: Error & { cause?: { code?: string } }) => {
              throw new Error(`the banner was printed before the port listened: ${err.cause?.code ?? err.message}`);
            },
          );
          assert.equal(
            line,
            `pvai: API at http://127.0.0.1:${port}/z1, developer dashboard at http://127.0.0.1:${port}/dashboard`,
          );
          break;
        }
        before.push(line);
      }
      assert.ok(health, 'the banner was printed');
      assert.equal(await health, 200);
      const messages = before
        .filter((line) => line.startsWith('{'))
        .map((line) => (JSON.parse(line) as { msg: string }).msg);
      assert.ok(
        messages.includes('pvai listening'),
        `the log of the start precedes the banner: ${messages.join(' | ')}`,
      );
    } finally {
      child.kill('SIGTERM');
      if (child.exitCode === null) await once(child, 'exit');
    }
  });
});
