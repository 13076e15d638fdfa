import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { DoctorCheck } from '../../src/setup/index.js';
import { EMBEDDING_MODEL } from '../support/models.js';
import { pvai, pvaiStatus } from '../support/processes.js';
import { sandboxHostSkip } from '../support/sandbox-host.js';
import { TEST_MODEL } from '../support/server.js';

const STORIES_SHA256 = '270cba1bd5109f42d03350f60406024560464db173c0e387d91f0426d3bd256d';

describe('pvai CLI', () => {
  const env = {
    PVAI_DATA_DIR: mkdtempSync(join(tmpdir(), 'pvai-cli-')),
    DATABASE_URL: '',
    PVAI_LOCAL_MODEL: TEST_MODEL,
  };

  it('manages accounts, keys and credits with --json output as docs/decisions.md says', async () => {
    const created = JSON.parse(
      (
        await pvai(
          ['accounts', 'create', '--email', 'cli@example.com', '--tier', 'startup', '--credits', '50', '--json'],
          env,
        )
      ).stdout,
    );
    assert.deepEqual(Object.keys(created).sort(), ['account', 'api_key']);
    assert.deepEqual(Object.keys(created.account).sort(), ['credits', 'email', 'id', 'tier']);
    assert.equal(created.account.email, 'cli@example.com');
    assert.equal(created.account.credits, 50);
    assert.match(created.api_key, /^pv_sk_[0-9A-Za-z]{32,}$/);
    const accountId = created.account.id as string;

    const key = JSON.parse(
      (await pvai(['keys', 'create', '--account', accountId, '--name', 'ci', '--json'], env)).stdout,
    );
    assert.deepEqual(Object.keys(key).sort(), ['api_key', 'key']);
    assert.deepEqual(Object.keys(key.key).sort(), ['id', 'name', 'prefix']);
    assert.equal(key.key.name, 'ci');
    assert.equal(key.key.prefix, key.api_key.slice(0, 12));

    const bound = JSON.parse(
      (await pvai(['keys', 'create', '--account', accountId, '--user-id', 'kiosk-7', '--json'], env)).stdout,
    );
    assert.equal(bound.key.user_id, 'kiosk-7', 'a key bound to an end user says which');
    await assert.rejects(
      pvai(['keys', 'create', '--account', accountId, '--user-id', 'tab\there', '--json'], env),
      /"message":"user_id must not contain control characters[^"]*","code":"INVALID_TEXT"/,
    );

    const listed = JSON.parse((await pvai(['keys', 'list', '--account', accountId, '--json'], env)).stdout);
    assert.equal(listed.keys.length, 3);
    assert.deepEqual(
      listed.keys.map((k: { user_id: string | null }) => k.user_id),
      [null, null, 'kiosk-7'],
    );
    assert.ok(!JSON.stringify(listed).includes(key.api_key));

    const revoked = JSON.parse((await pvai(['keys', 'revoke', key.key.id, '--json'], env)).stdout);
    assert.ok(revoked.key.revoked_at);

    const credits = JSON.parse(
      (await pvai(['credits', 'add', '--account', accountId, '--amount', '25', '--json'], env)).stdout,
    );
    assert.equal(credits.account.credits, 75);

    const tier = JSON.parse(
      (await pvai(['accounts', 'set-tier', '--account', accountId, '--tier', 'business', '--json'], env)).stdout,
    );
    assert.equal(tier.account.tier, 'business');
  });

  it('fails clearly on a bad tier, an unknown account and a bad setting', async () => {
    await assert.rejects(
      pvai(['accounts', 'create', '--email', 'x@example.com', '--tier', 'gold'], env),
      /INVALID_PARAMETER: tier must be one of free, startup, business, enterprise/,
    );
    await assert.rejects(pvai(['keys', 'create', '--account', 'acct_nope'], env), /No account acct_nope/);
    await assert.rejects(pvai(['keys', 'list', '--account', 'acct_nope'], { ...env, PVAI_PORT: 'x' }), /PVAI_PORT/);
  });

  it('keeps balances at most 10^12 credits, as the admin API does', async () => {
    await assert.rejects(
      pvai(['accounts', 'create', '--email', 'rich@example.com', '--tier', 'free', '--credits', '1000000000001'], env),
      /credits must be <= 1000000000000/,
    );
    const created = JSON.parse(
      (
        await pvai(
          [
            'accounts',
            'create',
            '--email',
            'full@example.com',
            '--tier',
            'free',
            '--credits',
            '999999999999',
            '--json',
          ],
          env,
        )
      ).stdout,
    );
    const accountId = created.account.id as string;
    await assert.rejects(
      pvai(['credits', 'add', '--account', accountId, '--amount', '2'], env),
      /at most 1000000000000/,
    );
    const full = JSON.parse(
      (await pvai(['credits', 'add', '--account', accountId, '--amount', '1', '--json'], env)).stdout,
    );
    assert.equal(full.account.credits, 1_000_000_000_000);
  });

  it('doctor reports every piece, each one that fails with the command that fixes it', async () => {
    const { code, stdout } = await pvaiStatus(['doctor', '--json'], {
      ...env,
      PVAI_EMBEDDING_MODEL: EMBEDDING_MODEL,
      QDRANT_URL: '',
      PVAI_WEB_SEARCH_PROVIDER: '',
    });
    const report = JSON.parse(stdout) as { ok: boolean; checks: Record<string, DoctorCheck> };
    const { checks } = report;
    assert.deepEqual(Object.keys(checks), [
      'node',
      'config',
      'admin_api',
      'database',
      'local_model',
      'embedding_model',
      'sandbox',
      'qdrant',
      'web_search',
    ]);
    assert.equal(checks.database?.ok, true);
    assert.match(checks.database?.detail ?? '', /sqlite/);
    assert.deepEqual(checks.local_model, { ok: true, detail: TEST_MODEL });
    assert.deepEqual(checks.embedding_model, { ok: true, detail: EMBEDDING_MODEL });
    assert.deepEqual(checks.qdrant, { ok: true, detail: 'not configured (embedded index)' });
    assert.equal(checks.web_search?.ok, true);
    assert.match(checks.web_search?.detail ?? '', /not configured: set PVAI_WEB_SEARCH_PROVIDER/);
    if (sandboxHostSkip()) {
      assert.equal(checks.sandbox?.ok, false);
      assert.match(checks.sandbox?.fix ?? '', /scripts\/setup .*apt-get install -y bubblewrap python3/);
    } else {
      assert.equal(checks.sandbox?.ok, true, checks.sandbox?.detail);
    }
    assert.equal(
      report.ok,
      Object.values(checks).every((c) => c.ok),
    );
    assert.equal(code, report.ok ? 0 : 1);
  });

  it('doctor says what to run for each missing piece', async () => {
    const qdrant = createServer((req, res) => res.writeHead(req.url === '/readyz' ? 200 : 404).end('ok'));
    await new Promise<void>((resolve) => qdrant.listen(0, '127.0.0.1', resolve));
    const { port } = qdrant.address() as AddressInfo;
    try {
      const bare = {
        PVAI_DATA_DIR: mkdtempSync(join(tmpdir(), 'pvai-doctor-')),
        DATABASE_URL: '',
        PVAI_LOCAL_MODEL: '',
      };
      const missing = await pvaiStatus(['doctor'], {
        ...bare,
        QDRANT_URL: 'http://127.0.0.1:9',
        PVAI_WEB_SEARCH_PROVIDER: '',
      });
      assert.equal(missing.code, 1);
      assert.match(missing.stdout, /FAIL local_model: No local model in .*\n {5}fix: scripts\/setup \(fetches SmolLM2/);
      assert.match(missing.stdout, /FAIL embedding_model: no embedding model at .*\n {5}fix: scripts\/setup\n/);
      assert.match(
        missing.stdout,
        /FAIL qdrant: http:\/\/127\.0\.0\.1:9: .*\n {5}fix: start Qdrant there, or unset QDRANT_URL/,
      );
      const configured = await pvaiStatus(['doctor', '--json'], {
        ...bare,
        QDRANT_URL: `http://127.0.0.1:${port}`,
        PVAI_WEB_SEARCH_PROVIDER: 'brave',
      });
      const { checks } = JSON.parse(configured.stdout) as { checks: Record<string, DoctorCheck> };
      assert.deepEqual(checks.qdrant, { ok: true, detail: `http://127.0.0.1:${port} ready` });
      // Brave without its API key: configured but not usable, and the check says which variable is missing.
      assert.equal(checks.web_search?.ok, false);
      assert.match(checks.web_search?.detail ?? '', /brave needs an API key in PVAI_WEB_SEARCH_API_KEY/);
    } finally {
      qdrant.close();
    }
  });
});

describe('pvai models pull', () => {
  it('copies a GGUF into the models directory, checking its checksum, where the service then finds it', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'pvai-pull-'));
    const env = { PVAI_DATA_DIR: dataDir, DATABASE_URL: '', PVAI_LOCAL_MODEL: '' };
    await assert.rejects(pvai(['models', 'pull', TEST_MODEL, '--sha256', '0'.repeat(64)], env), /checksum mismatch/);
    const pulled = JSON.parse(
      (await pvai(['models', 'pull', TEST_MODEL, '--sha256', STORIES_SHA256, '--json'], env)).stdout,
    );
    assert.equal(pulled.path, join(dataDir, 'models', 'stories260K.gguf'));
    assert.equal(pulled.sha256, STORIES_SHA256);
    assert.equal(pulled.note, undefined, 'the only model there is the one the service loads');
    const report = JSON.parse((await pvaiStatus(['doctor', '--json'], env)).stdout);
    assert.equal(report.checks.local_model.detail, pulled.path);
  });

  it('fetches hf: references from HF_ENDPOINT with HF_TOKEN, and says when the service would load another model', async () => {
    const content = readFileSync(TEST_MODEL);
    const seen: Array<{ url?: string; authorization?: string }> = [];
    const hub = createServer((req, res) => {
      seen.push({ url: req.url, authorization: req.headers.authorization });
      if (req.url !== '/tiny/stories/resolve/v1/gguf/stories260K.gguf') return void res.writeHead(404).end();
      res.writeHead(200, { 'content-length': content.length }).end(content);
    });
    await new Promise<void>((resolve) => hub.listen(0, '127.0.0.1', resolve));
    const { port } = hub.address() as AddressInfo;
    try {
      const dataDir = mkdtempSync(join(tmpdir(), 'pvai-pull-hf-'));
      mkdirSync(join(dataDir, 'models'));
      writeFileSync(join(dataDir, 'models', 'A-first.gguf'), 'GGUF');
      const env = {
        PVAI_DATA_DIR: dataDir,
        DATABASE_URL: '',
        PVAI_LOCAL_MODEL: '',
        HF_ENDPOINT: `http://127.0.0.1:${port}`,
        HF_TOKEN: 'hf_test',
      };
      const pulled = JSON.parse(
        (
          await pvai(
            ['models', 'pull', 'hf:tiny/stories/gguf/stories260K.gguf#v1', '--json', '--sha256', STORIES_SHA256],
            env,
          )
        ).stdout,
      );
      assert.equal(pulled.path, join(dataDir, 'models', 'stories260K.gguf'));
      assert.deepEqual(seen, [
        { url: '/tiny/stories/resolve/v1/gguf/stories260K.gguf', authorization: 'Bearer hf_test' },
      ]);
      assert.match(pulled.note, /the service loads .*A-first\.gguf .*set PVAI_LOCAL_MODEL=.*stories260K\.gguf/);
      await assert.rejects(
        pvai(['models', 'pull', 'hf:tiny/stories'], env),
        /expected hf:<owner>\/<repo>\/<file\.gguf>/,
      );
    } finally {
      hub.close();
    }
  });
});
