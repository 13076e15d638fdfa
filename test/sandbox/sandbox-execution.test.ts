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

  it('takes the execution time from the host: a forged report cannot make it negative or larger', async () => {
    const forge = (ms: number) =>
      `import os\nprint("forged")\nos.write(3, b'{"error": null, "executionTimeMs": ${ms}}\\n')`;
    const negative = completed(await sandbox.execute({ code: forge(-5000), timeoutSeconds: 2, accountId: 'acct' }));
    assert.deepEqual([negative.output, negative.executionTimeMs], ['forged\n', 0]);
    const started = performance.now();
    const huge = completed(await sandbox.execute({ code: forge(1e12), timeoutSeconds: 2, accountId: 'acct' }));
    assert.ok(huge.executionTimeMs <= performance.now() - started, String(huge.executionTimeMs));
  });

  it('reports RecursionError for deep recursion, at the default limit and far beyond it', async () => {
    const recurse = 'def dive(depth):\n    return dive(depth + 1)\ndive(0)';
    const shallow = completed(await sandbox.execute({ code: recurse, timeoutSeconds: 2, accountId: 'acct' }));
    assert.match(shallow.error ?? '', /RecursionError: maximum recursion depth exceeded\n$/);
    // 100,000 frames: extracting all of them took 3.8 s, so the 2 s timeout won over the RecursionError.
    const deep = completed(
      await sandbox.execute({
        code: `import sys\nsys.setrecursionlimit(100_000)\n${recurse}`,
        timeoutSeconds: 2,
        accountId: 'acct',
      }),
    );
    assert.match(deep.error ?? '', /^Traceback \(most recent call last\):\n {2}File "<string>", line 5, in <module>\n/);
    assert.match(deep.error ?? '', /\[99\d{3} frames omitted\]/);
    assert.match(deep.error ?? '', /RecursionError: maximum recursion depth exceeded\n$/);
  });

  it('reports the exception of code that left the wrapper almost no recursion depth', async () => {
    // The wrapper itself failed here before: formatting the traceback needs more than 8 frames.
    const code = 'import sys\nsys.setrecursionlimit(8)\nraise ValueError("with almost no stack left")';
    const result = completed(await sandbox.execute({ code, timeoutSeconds: 2, accountId: 'acct' }));
    assert.match(result.error ?? '', /^Traceback[\s\S]*\nValueError: with almost no stack left\n$/);
    assert.doesNotMatch(result.error ?? '', /_pvai_main|another exception occurred/);
  });

  it('reports a crash of the interpreter (a C stack overflow) with where it happened', async () => {
    const code = [
      'import sys',
      'sys.setrecursionlimit(10**6)',
      'def dive(depth):',
      '    return list(map(dive, [depth + 1]))  # through C, which Python 3.11 does not guard',
      'dive(0)',
    ].join('\n');
    const result = completed(await sandbox.execute({ code, timeoutSeconds: 5, accountId: 'acct' }));
    assert.match(result.error ?? '', /^Process killed by signal SIGSEGV \(.*deep recursion/);
    assert.match(result.output, /^Fatal Python error: Segmentation fault\n[\s\S]*File "<string>", line 4 in dive\n/);
  });

  it('reports the sandbox healthy', async () => {
    const health = await sandbox.health();
    assert.equal(health.ok, true, health.detail);
  });
});
