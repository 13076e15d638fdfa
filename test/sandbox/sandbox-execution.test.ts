import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type CodeRunner, createSandbox, type ExecutionOutcome } from '../../src/sandbox/index.js';
import { sandboxHostSkip } from '../support/sandbox-host.js';

/** Narrows to the completed outcome, failing the test with the whole outcome otherwise. */
function completed(outcome: ExecutionOutcome): Extract<ExecutionOutcome, { kind: 'completed' }> {
  assert.equal(outcome.kind, 'completed', JSON.stringify(outcome));
  if (outcome.kind !== 'completed') throw new Error('unreachable');
  return outcome;
}

describe('sandbox: executing Python', { skip: sandboxHostSkip() }, () => {
  let sandbox: CodeRunner;
  before(() => {
    sandbox = createSandbox({ poolSize: 2 });
  });
  after(async () => {
    await sandbox.close();
  });

  it('returns printed output with no error', async () => {
    const result = completed(
      await sandbox.execute({ code: 'print("hello")\nprint(6 * 7)', timeoutSeconds: 2, accountId: 'acct' }),
    );
    assert.equal(result.output, 'hello\n42\n');
    assert.equal(result.error, null);
    assert.ok(result.executionTimeMs >= 0 && result.executionTimeMs < 1000, String(result.executionTimeMs));
  });

  it('interleaves stdout and stderr in the order printed', async () => {
    const code = 'import sys\nprint("a")\nprint("b", file=sys.stderr)\nprint("c")\nsys.stderr.write("d\\n")';
    const result = completed(await sandbox.execute({ code, timeoutSeconds: 2, accountId: 'acct' }));
    assert.equal(result.output, 'a\nb\nc\nd\n');
  });

  it('reports an uncaught exception as traceback text, keeping output printed before it', async () => {
    const code = 'print("start")\ndef explode():\n    raise ValueError("boom")\nexplode()';
    const result = completed(await sandbox.execute({ code, timeoutSeconds: 2, accountId: 'acct' }));
    assert.equal(result.output, 'start\n');
    assert.match(result.error ?? '', /^Traceback \(most recent call last\):/);
    assert.match(result.error ?? '', /line 3, in explode/);
    assert.match(result.error ?? '', /ValueError: boom\n$/);
    // The wrapper's own frames are not part of the user's traceback.
    assert.doesNotMatch(result.error ?? '', /_pvai_main/);
  });

  it('reports a syntax error', async () => {
    const result = completed(
      await sandbox.execute({ code: 'print("never")\ndef broken(:\n  pass', timeoutSeconds: 2, accountId: 'acct' }),
    );
    assert.equal(result.output, '');
    assert.match(result.error ?? '', /SyntaxError/);
    assert.match(result.error ?? '', /line 2/);
  });

  it('treats sys.exit(0) as success and sys.exit(3) as an error', async () => {
    const ok = completed(
      await sandbox.execute({ code: 'import sys\nprint("x")\nsys.exit(0)', timeoutSeconds: 2, accountId: 'acct' }),
    );
    assert.equal(ok.error, null);
    const failed = completed(
      await sandbox.execute({ code: 'import sys\nsys.exit(3)', timeoutSeconds: 2, accountId: 'acct' }),
    );
    assert.match(failed.error ?? '', /SystemExit: 3/);
  });

  it('gives the code a closed stdin: input() raises EOFError', async () => {
    const result = completed(await sandbox.execute({ code: 'input("name? ")', timeoutSeconds: 2, accountId: 'acct' }));
    assert.match(result.error ?? '', /EOFError/);
  });

  it('round-trips unicode output', async () => {
    const text = 'héllo wörld ✓ 日本語 🎉 Ω';
    const result = completed(
      await sandbox.execute({ code: `print(${JSON.stringify(text)})`, timeoutSeconds: 2, accountId: 'acct' }),
    );
    assert.equal(result.output, `${text}\n`);
    assert.equal(result.error, null);
  });

  it('truncates output over the cap and says so', async () => {
    const result = completed(
      await sandbox.execute({ code: 'print("x" * 100000)\nprint("tail")', timeoutSeconds: 2, accountId: 'acct' }),
    );
    assert.equal(result.output, `${'x'.repeat(65536)}\n[output truncated at 65536 bytes]`);
    assert.equal(result.error, null);
  });

  it('truncates at a configured cap without splitting a character', async () => {
    const small = createSandbox({ poolSize: 0, outputLimitBytes: 10 });
    try {
      const result = completed(await small.execute({ code: 'print("€" * 10)', timeoutSeconds: 2, accountId: 'acct' }));
      // 10 bytes hold three 3-byte euro signs plus one dangling byte, which is dropped.
      assert.equal(result.output, '€€€\n[output truncated at 10 bytes]');
    } finally {
      await small.close();
    }
  });

  it('times out, returning the output printed before the hang, after about the timeout', async () => {
    const started = performance.now();
    const result = await sandbox.execute({
      code: 'import time\nprint("before the hang", flush=True)\ntime.sleep(30)\nprint("never")',
      timeoutSeconds: 1,
      accountId: 'acct',
    });
    const elapsed = performance.now() - started;
    assert.equal(result.kind, 'timeout');
    assert.equal(result.output, 'before the hang\n');
    assert.ok(result.executionTimeMs >= 1000 && result.executionTimeMs < 1500, String(result.executionTimeMs));
    assert.ok(elapsed >= 1000 && elapsed < 2500, `took ${elapsed} ms`);
  });

  it('starts every call with fresh interpreter state and an empty work dir', async () => {
    const first = completed(
      await sandbox.execute({
        code: 'x = 42\nopen("note.txt", "w").write("kept?")\nprint(open("note.txt").read())',
        timeoutSeconds: 2,
        accountId: 'acct',
      }),
    );
    assert.equal(first.output, 'kept?\n');
    const second = completed(
      await sandbox.execute({
        code: 'import os\nprint(os.listdir("."))\nprint(x)',
        timeoutSeconds: 2,
        accountId: 'acct',
      }),
    );
    assert.equal(second.output, '[]\n');
    assert.match(second.error ?? '', /NameError: name 'x' is not defined/);
  });

  it('runs as an unprivileged user in /work with the documented limits', async () => {
    const code = [
      'import os, resource',
      'print(os.getuid(), os.getgid(), os.getcwd(), os.environ["HOME"])',
      'for name in ("RLIMIT_AS", "RLIMIT_FSIZE", "RLIMIT_NPROC", "RLIMIT_NOFILE", "RLIMIT_CPU"):',
      '    print(name, *resource.getrlimit(getattr(resource, name)))',
    ].join('\n');
    const result = completed(await sandbox.execute({ code, timeoutSeconds: 2, accountId: 'acct' }));
    assert.equal(
      result.output,
      [
        '65534 65534 /work /work',
        `RLIMIT_AS ${256 * 1024 * 1024} ${256 * 1024 * 1024}`,
        `RLIMIT_FSIZE ${8 * 1024 * 1024} ${8 * 1024 * 1024}`,
        'RLIMIT_NPROC 16 16',
        'RLIMIT_NOFILE 64 64',
        'RLIMIT_CPU 3 4',
        '',
      ].join('\n'),
    );
  });

  it('reports the sandbox healthy', async () => {
    const health = await sandbox.health();
    assert.equal(health.ok, true, health.detail);
  });
});
