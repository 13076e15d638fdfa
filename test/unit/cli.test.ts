import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { pvai } from '../support/processes.js';
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

    const listed = JSON.parse((await pvai(['keys', 'list', '--account', accountId, '--json'], env)).stdout);
    assert.equal(listed.keys.length, 2);
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
      /gold|choices/i,
    );
    await assert.rejects(pvai(['keys', 'create', '--account', 'acct_nope'], env), /No account acct_nope/);
    await assert.rejects(pvai(['keys', 'list', '--account', 'acct_nope'], { ...env, PVAI_PORT: 'x' }), /PVAI_PORT/);
  });

  it('keeps balances at most 10^12 credits, as the admin API does', async () => {
    await assert.rejects(
      pvai(['accounts', 'create', '--email', 'rich@example.com', '--tier', 'free', '--credits', '1000000000001'], env),
      /at most 1000000000000/,
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

  it('doctor reports each dependency', async () => {
    const report = JSON.parse((await pvai(['doctor', '--json'], env)).stdout);
    assert.equal(report.ok, true);
    assert.equal(report.checks.database.ok, true);
    assert.match(report.checks.database.detail, /sqlite/);
    assert.equal(report.checks.local_model.ok, true);
    assert.equal(report.checks.sandbox.ok, true, report.checks.sandbox.detail);
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
    const report = JSON.parse((await pvai(['doctor', '--json'], env)).stdout);
    assert.equal(report.checks.local_model.detail, pulled.path);
  });
});
