import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type CodeRunner, createSandbox, type ExecutionOutcome } from '../../src/sandbox/index.js';
import { sandboxHostSkip } from '../support/sandbox-host.js';

/** The repository on the host (wherever it is checked out): invisible from inside. */
const REPO = join(import.meta.dirname, '..', '..');

/**
 * Escape attempts. Each probe prints LEAK/CONNECTED/… when it gets through, so a broken sandbox makes
 * the assertions fail rather than silently pass.
 */

function outputOf(outcome: ExecutionOutcome): string {
  return outcome.output + (outcome.kind === 'completed' ? (outcome.error ?? '') : '');
}

/** Python that tries to read each path and prints LEAK for any it can see. */
function probeReads(paths: string[]): string {
  return [
    'import os',
    `for path in ${JSON.stringify(paths)}:`,
    '    try:',
    '        if os.path.isdir(path):',
    '            print("LEAK dir", path, os.listdir(path)[:5])',
    '        else:',
    '            with open(path, "rb") as f:',
    '                print("LEAK file", path, f.read(40))',
    '    except OSError as exc:',
    '        print("blocked", path, type(exc).__name__)',
  ].join('\n');
}

describe('sandbox: escape attempts are contained', { skip: sandboxHostSkip() }, () => {
  const secretEnvValue = `env-secret-${randomUUID()}`;
  const secretFileValue = `file-secret-${randomUUID()}`;
  let dataDir: string;
  let sandbox: CodeRunner;
  let server: Server;
  let serverPort = 0;
  let connectionsSeen = 0;

  before(async () => {
    process.env.PVAI_SANDBOX_TEST_SECRET = secretEnvValue;
    dataDir = mkdtempSync(join(tmpdir(), 'pvai-data-'));
    writeFileSync(join(dataDir, 'secret.txt'), secretFileValue);
    server = createServer((socket) => {
      connectionsSeen += 1;
      socket.end('hello from the host\n');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    serverPort = typeof address === 'object' && address !== null ? address.port : 0;
    sandbox = createSandbox({ poolSize: 2 });
  });

  after(async () => {
    await sandbox.close();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    rmSync(dataDir, { recursive: true, force: true });
    delete process.env.PVAI_SANDBOX_TEST_SECRET;
  });

  it('cannot see host files: /etc/shadow, /root, the repo, a service data dir', async () => {
    const paths = [
      '/etc/shadow',
      '/etc/passwd',
      '/etc',
      '/root',
      '/home',
      REPO,
      join(REPO, 'package.json'),
      dataDir,
      join(dataDir, 'secret.txt'),
      '/proc/1/root/etc/shadow',
      '/var',
      '/sys',
    ];
    const outcome = await sandbox.execute({ code: probeReads(paths), timeoutSeconds: 2, accountId: 'acct' });
    const output = outputOf(outcome);
    assert.doesNotMatch(output, /LEAK/);
    assert.equal(output.match(/^blocked /gm)?.length, paths.length, output);
    assert.ok(!output.includes(secretFileValue));
  });

  it('cannot write to the read-only system tree', async () => {
    const code =
      'try:\n    open("/usr/pwned", "w")\n    print("LEAK wrote /usr")\nexcept OSError as e:\n    print("blocked", e.strerror)';
    const outcome = await sandbox.execute({ code, timeoutSeconds: 2, accountId: 'acct' });
    assert.equal(outcome.output, 'blocked Read-only file system\n');
    assert.equal(existsSync('/usr/pwned'), false);
  });

  it("cannot see the service's environment variables, not even via /proc", async () => {
    const code = [
      'import os',
      'print(sorted(os.environ))',
      'for pid in [p for p in os.listdir("/proc") if p.isdigit()]:',
      '    try:',
      '        print(open(f"/proc/{pid}/environ", "rb").read())',
      '    except OSError:',
      '        pass',
    ].join('\n');
    const outcome = await sandbox.execute({ code, timeoutSeconds: 2, accountId: 'acct' });
    assert.ok(outcome.output.startsWith("['HOME', 'LANG', 'PATH', 'PWD', 'PYTHONIOENCODING']\n"), outcome.output);
    assert.ok(!outcome.output.includes(secretEnvValue));
    assert.ok(!outcome.output.includes('PVAI_SANDBOX_TEST_SECRET'));
  });

  it('cannot see or signal host processes', async () => {
    const code = [
      'import os',
      'pids = [int(p) for p in os.listdir("/proc") if p.isdigit()]',
      'print("pids", len(pids))',
      `try:\n    os.kill(${process.pid}, 0)\n    print("LEAK can signal host")\nexcept OSError as e:\n    print("blocked", type(e).__name__)`,
    ].join('\n');
    const outcome = await sandbox.execute({ code, timeoutSeconds: 2, accountId: 'acct' });
    // The interpreter is alone in the sandbox's pid namespace, as its pid 1 (bwrap --as-pid-1).
    assert.equal(outcome.output, 'pids 1\nblocked ProcessLookupError\n');
  });

  it('cannot connect to a host port on 127.0.0.1, reach the internet, or resolve DNS', async () => {
    const code = [
      'import socket',
      `for host, port in [("127.0.0.1", ${serverPort}), ("1.1.1.1", 53), ("8.8.8.8", 443)]:`,
      '    try:',
      '        socket.create_connection((host, port), timeout=1).close()',
      '        print("CONNECTED", host)',
      '    except OSError as e:',
      '        print("blocked", host, type(e).__name__)',
      'for name in ["example.com", "localhost"]:',
      '    try:',
      '        print("RESOLVED", name, socket.getaddrinfo(name, 80)[0][4])',
      '    except OSError as e:',
      '        print("blocked dns", name, type(e).__name__)',
    ].join('\n');
    const outcome = await sandbox.execute({ code, timeoutSeconds: 5, accountId: 'acct' });
    assert.doesNotMatch(outcome.output, /CONNECTED|RESOLVED/);
    assert.equal(outcome.output.match(/^blocked /gm)?.length, 5, outcome.output);
    assert.equal(connectionsSeen, 0);
  });

  it('stops a CPU spin at the timeout', async () => {
    const started = performance.now();
    const outcome = await sandbox.execute({ code: 'while True:\n    pass', timeoutSeconds: 1, accountId: 'acct' });
    assert.equal(outcome.kind, 'timeout');
    assert.ok(performance.now() - started < 2500);
  });

  it('refuses a huge file (RLIMIT_FSIZE) and a full work dir (tmpfs size)', async () => {
    const tooBig = await sandbox.execute({
      code: 'open("big", "wb").write(b"x" * (20 * 1024 * 1024))',
      timeoutSeconds: 5,
      accountId: 'acct',
    });
    assert.match(outputOf(tooBig), /OSError: \[Errno 27\] File too large/);
    const fill = 'for i in range(4):\n    open(f"part{i}", "wb").write(b"x" * (7 * 1024 * 1024))';
    const full = await sandbox.execute({ code: fill, timeoutSeconds: 5, accountId: 'acct' });
    assert.match(outputOf(full), /OSError: \[Errno 28\] No space left on device/);
  });

  it('keeps symlinks inside the sandbox', async () => {
    const code = [
      'import os',
      `targets = ["/etc/shadow", ${JSON.stringify(join(REPO, 'package.json'))}, ${JSON.stringify(join(dataDir, 'secret.txt'))}, "/root"]`,
      'for i, target in enumerate(targets):',
      '    os.symlink(target, f"link{i}")',
      '    try:',
      '        print("LEAK", target, open(f"link{i}", "rb").read(40) if not os.path.isdir(f"link{i}") else os.listdir(f"link{i}"))',
      '    except OSError as e:',
      '        print("blocked", target, type(e).__name__)',
      'try:',
      '    os.link("/usr/bin/python3", "hardlink")',
      '    print("LEAK hardlink")',
      'except OSError as e:',
      '    print("blocked hardlink", type(e).__name__)',
    ].join('\n');
    const outcome = await sandbox.execute({ code, timeoutSeconds: 2, accountId: 'acct' });
    assert.doesNotMatch(outputOf(outcome), /LEAK/);
    assert.equal(outcome.output.match(/^blocked /gm)?.length, 5, outcome.output);
  });

  it('still runs normal code after all of the above', async () => {
    const outcome = await sandbox.execute({ code: 'print(sum(range(10)))', timeoutSeconds: 2, accountId: 'acct' });
    assert.deepEqual(outcome.kind === 'completed' ? [outcome.output, outcome.error] : outcome, ['45\n', null]);
  });
});
