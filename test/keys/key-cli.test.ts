import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { pvai, pvaiStatus } from '../support/processes.js';
import { TEST_MODEL } from '../support/server.js';

/** `pvai keys create` and `pvai keys update` set a key's limits, checked exactly as the admin API checks them. */
describe('pvai keys: budgets, limits, models, expiry, metadata', () => {
  const env = {
    PVAI_DATA_DIR: mkdtempSync(join(tmpdir(), 'pvai-keys-cli-')),
    DATABASE_URL: '',
    PVAI_LOCAL_MODEL: TEST_MODEL,
  };

  const json = async (args: string[]) => JSON.parse((await pvai([...args, '--json'], env)).stdout);

  it('creates a key with every limit, updates and clears them, and refuses wrong values in one line', async () => {
    const { account } = await json(['accounts', 'create', '--email', 'keys-cli@example.com', '--tier', 'free']);
    const created = await json([
      'keys',
      'create',
      '--account',
      account.id,
      '--name',
      'app',
      '--budget',
      '500',
      '--budget-period',
      'total',
      '--rpm',
      '5',
      '--models',
      'PV-TURBO,PV-EMBED',
      '--expires',
      '2099-01-31',
      '--metadata',
      'team=web',
      '--metadata',
      'env=prod',
    ]);
    assert.deepEqual(created.key.budget, { credits: 500, period: 'total' });
    assert.deepEqual(created.key.rate_limits, { rpm: 5, rpd: null });
    assert.deepEqual(created.key.models, ['PV-TURBO', 'PV-EMBED']);
    assert.equal(created.key.expires_at, '2099-01-31T00:00:00.000Z');
    assert.deepEqual(created.key.metadata, { team: 'web', env: 'prod' });
    const keyId = created.key.id as string;

    const text = (await pvai(['keys', 'update', keyId, '--budget', '800', '--rpd', '40'], env)).stdout;
    assert.match(text, new RegExp(`^key ${keyId} updated\\n`));
    assert.match(text, /budget: 0 of 800 credits spent \(total\)/);
    assert.match(text, /rate limits: 5 per minute, 40 per day/);

    const cleared = await json(['keys', 'update', keyId, '--budget', 'none', '--models', 'none', '--expires', 'none']);
    assert.equal(cleared.key.budget, null);
    assert.equal(cleared.key.models, null);
    assert.equal(cleared.key.expires_at, null);
    assert.deepEqual(cleared.key.metadata, { team: 'web', env: 'prod' }, 'what was not named is unchanged');

    const wrong: Array<[string[], RegExp]> = [
      [['--rpm', '11'], /^pvai: INVALID_PARAMETER: rate_limits\.rpm is at most the free tier's 10\n$/],
      [['--budget-period', 'month'], /^pvai: INVALID_PARAMETER: --budget-period: give the budget too, e\.g\. /],
      [['--budget', 'ten'], /^pvai: INVALID_PARAMETER: .*budget/],
      [
        ['--expires', '2001-01-01'],
        /^pvai: INVALID_PARAMETER: expires_at 2001-01-01T00:00:00\.000Z is not in the future\n$/,
      ],
      [['--metadata', 'novalue'], /^pvai: INVALID_PARAMETER: --metadata: "novalue" is not key=value/],
    ];
    for (const [args, expected] of wrong) {
      const res = await pvaiStatus(['keys', 'update', keyId, ...args], env);
      assert.equal(res.code, 1, args.join(' '));
      assert.match(res.stderr, expected, args.join(' '));
      assert.equal(res.stderr.trim().split('\n').length, 1, `one line, no stack trace: ${res.stderr}`);
    }
    const unknown = await pvaiStatus(['keys', 'update', 'key_nope', '--name', 'x'], env);
    assert.equal(unknown.stderr, 'pvai: NOT_FOUND: No key key_nope\n');
  });
});
