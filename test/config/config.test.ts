import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config/index.js';

describe('configuration', () => {
  it('needs nothing for the embedded default', () => {
    const config = loadConfig({});
    assert.equal(config.host, '127.0.0.1');
    assert.equal(config.port, 8080);
    assert.equal(config.dataDir, './data');
    assert.equal(config.databaseUrl, undefined);
    assert.equal(config.tiers.free.rpm, 10);
    assert.equal(config.tiers.enterprise.codeTimeoutMaxSeconds, 120);
    assert.equal(config.shutdownGraceMs, 8000, "a stop fits inside docker stop's 10 s");
  });

  it('routes every PV model to the local engine with its class budget, and reads PVAI_EMBEDDING_MODEL', () => {
    const config = loadConfig({ PVAI_EMBEDDING_MODEL: '/models/minilm.gguf' });
    const budgets = Object.fromEntries(
      Object.entries(config.routing).map(([model, targets]) => [model, targets.map((t) => [t.provider, t.maxTokens])]),
    );
    assert.deepEqual(budgets, {
      'PV-TURBO': [['local', 256]],
      'PV-STANDARD': [['local', 512]],
      'PV-ADVANCED': [['local', 1536]],
      'PV-CODEX': [['local', 1024]],
    });
    assert.equal(config.embeddingModel, '/models/minilm.gguf');
    assert.equal(loadConfig({}).embeddingModel, undefined);
  });

  it('reads the Qdrant settings, with pvai_chunks as the default collection, and names a bad one', () => {
    assert.equal(loadConfig({}).qdrantUrl, undefined);
    const config = loadConfig({ QDRANT_URL: 'http://qdrant:6333', QDRANT_API_KEY: 'k' });
    assert.equal(config.qdrantUrl, 'http://qdrant:6333');
    assert.equal(config.qdrantApiKey, 'k');
    assert.equal(config.qdrantCollection, 'pvai_chunks');
    assert.equal(loadConfig({ QDRANT_COLLECTION: 'team_a' }).qdrantCollection, 'team_a');
    assert.throws(() => loadConfig({ QDRANT_URL: 'qdrant:6333:x' }), /qdrantUrl \(QDRANT_URL\)/);
    assert.throws(() => loadConfig({ QDRANT_COLLECTION: 'a/b' }), /qdrantCollection \(QDRANT_COLLECTION\)/);
  });

  it("reads a cluster's node list and the collection's shards, replicas and write consistency, refusing impossible ones", () => {
    assert.deepEqual(loadConfig({}).qdrant, { shardNumber: 1, replicationFactor: 1, writeConsistencyFactor: 1 });
    const urls = 'http://q1:6333, http://q2:6333,https://q3:6333/prefix';
    const config = loadConfig({
      QDRANT_URL: urls,
      PVAI_QDRANT_SHARD_NUMBER: '6',
      PVAI_QDRANT_REPLICATION_FACTOR: '2',
      PVAI_QDRANT_WRITE_CONSISTENCY_FACTOR: '1',
    });
    assert.equal(config.qdrantUrl, urls);
    assert.deepEqual(config.qdrant, { shardNumber: 6, replicationFactor: 2, writeConsistencyFactor: 1 });
    const file = join(mkdtempSync(join(tmpdir(), 'pvai-config-')), 'pvai.yaml');
    writeFileSync(file, 'qdrant:\n  shardNumber: 3\n  replicationFactor: 3\n');
    assert.deepEqual(loadConfig({ PVAI_CONFIG: file, PVAI_QDRANT_WRITE_CONSISTENCY_FACTOR: '2' }).qdrant, {
      shardNumber: 3,
      replicationFactor: 3,
      writeConsistencyFactor: 2,
    });
    assert.throws(() => loadConfig({ QDRANT_URL: 'http://q1:6333,q2:6333' }), /qdrantUrl \(QDRANT_URL\)/);
    // The other sections read from the environment the same way: a value that does not read names its variable.
    assert.equal(loadConfig({ PVAI_ACCESS_LOG: 'FALSE', PVAI_LOGS_RETENTION_DAYS: '7' }).logs.access, false);
    assert.throws(
      () => loadConfig({ PVAI_ACCESS_LOG: 'toString' }),
      /PVAI_ACCESS_LOG: must be true or false, got "toString"/,
    );
    assert.throws(
      () => loadConfig({ PVAI_LOGS_RETENTION_DAYS: '7.5' }),
      /PVAI_LOGS_RETENTION_DAYS: must be a whole number/,
    );
    assert.equal(loadConfig({ PVAI_IDEMPOTENCY_WAIT_SECONDS: '2.5' }).idempotency.waitSeconds, 2.5);
    assert.throws(
      () => loadConfig({ PVAI_IDEMPOTENCY_WINDOW_HOURS: '-1' }),
      /PVAI_IDEMPOTENCY_WINDOW_HOURS: must be a non-negative number/,
    );
    assert.throws(
      () => loadConfig({ PVAI_QDRANT_SHARD_NUMBER: 'three' }),
      /PVAI_QDRANT_SHARD_NUMBER: must be a whole number/,
    );
    assert.throws(
      () => loadConfig({ PVAI_QDRANT_SHARD_NUMBER: '0' }),
      /qdrant\.shardNumber: must be at least 1 \(PVAI_QDRANT_SHARD_NUMBER\)/,
    );
    assert.throws(
      () => loadConfig({ PVAI_QDRANT_REPLICATION_FACTOR: '1.5' }),
      /PVAI_QDRANT_REPLICATION_FACTOR: must be a whole number/,
    );
    assert.throws(
      () => loadConfig({ PVAI_QDRANT_REPLICATION_FACTOR: '2', PVAI_QDRANT_WRITE_CONSISTENCY_FACTOR: '3' }),
      (err: unknown) =>
        err instanceof ConfigError &&
        /qdrant\.writeConsistencyFactor: writeConsistencyFactor \(PVAI_QDRANT_WRITE_CONSISTENCY_FACTOR\) cannot exceed replicationFactor/.test(
          err.message,
        ),
    );
  });

  it('is frozen', () => {
    const config = loadConfig({});
    assert.throws(() => {
      (config as { port: number }).port = 1;
    }, TypeError);
    assert.throws(() => {
      (config.tiers.free as { rpm: number }).rpm = 1;
    }, TypeError);
  });

  it('takes environment variables over the file, and the file over defaults', () => {
    const dir = mkdtempSync(join(tmpdir(), 'pvai-config-'));
    const file = join(dir, 'pvai.yaml');
    writeFileSync(file, 'port: 9000\nhost: 0.0.0.0\ntiers:\n  free:\n    rpm: 20\n');
    const config = loadConfig({ PVAI_CONFIG: file, PVAI_PORT: '9100' });
    assert.equal(config.port, 9100);
    assert.equal(config.host, '0.0.0.0');
    assert.equal(config.tiers.free.rpm, 20);
    assert.equal(config.tiers.free.rpd, 100, 'unset tier values keep their defaults');
  });

  const bad: Array<[string, Record<string, string>, RegExp]> = [
    ['a port that is not a number', { PVAI_PORT: 'eighty' }, /PVAI_PORT: must be an integer/],
    ['a port out of range', { PVAI_PORT: '70000' }, /port \(PVAI_PORT\)/],
    ['a non-PostgreSQL DATABASE_URL', { DATABASE_URL: 'mysql://x' }, /databaseUrl \(DATABASE_URL\)/],
    ['a short admin token', { PVAI_ADMIN_TOKEN: 'short' }, /adminToken \(PVAI_ADMIN_TOKEN\): must be at least 16/],
    ['an unknown log level', { PVAI_LOG_LEVEL: 'loud' }, /logLevel \(PVAI_LOG_LEVEL\)/],
    ['a negative grace period', { PVAI_SHUTDOWN_GRACE_MS: '-1' }, /shutdownGraceMs \(PVAI_SHUTDOWN_GRACE_MS\)/],
    ['a missing config file', { PVAI_CONFIG: '/nonexistent/pvai.yaml' }, /PVAI_CONFIG: cannot read/],
  ];
  for (const [name, env, message] of bad) {
    it(`stops on ${name}, naming the setting`, () => {
      assert.throws(
        () => loadConfig(env),
        (err: unknown) => err instanceof ConfigError && message.test(err.message),
      );
    });
  }

  it('takes vision on an OpenAI-compatible target and refuses it on the local engine, naming the setting', () => {
    const dir = mkdtempSync(join(tmpdir(), 'pvai-config-'));
    const file = join(dir, 'pvai.yaml');
    const upstream = '{ provider: openai-compatible, baseUrl: "http://vllm:8000/v1", model: qwen2.5-vl, vision: true }';
    writeFileSync(file, `routing:\n  PV-TURBO:\n    - ${upstream}\n`);
    assert.equal(loadConfig({ PVAI_CONFIG: file }).routing['PV-TURBO']?.[0]?.vision, true);
    writeFileSync(file, `routing:\n  PV-TURBO:\n    - ${upstream}\n    - { provider: local, vision: true }\n`);
    assert.throws(
      () => loadConfig({ PVAI_CONFIG: file }),
      (err: unknown) =>
        err instanceof ConfigError &&
        /routing\.PV-TURBO\.1\.vision: the local engine reads text only: vision may be declared on an openai-compatible target only/.test(
          err.message,
        ),
    );
    writeFileSync(file, `routing:\n  PV-TURBO:\n    - ${upstream.replace('true', 'yes')}\n`);
    assert.throws(() => loadConfig({ PVAI_CONFIG: file }), /routing\.PV-TURBO\.0\.vision/);
  });

  it('refuses unknown keys and bad tier values in the file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'pvai-config-'));
    const file = join(dir, 'pvai.json');
    writeFileSync(file, JSON.stringify({ prot: 1 }));
    assert.throws(() => loadConfig({ PVAI_CONFIG: file }), /prot/);
    writeFileSync(file, JSON.stringify({ tiers: { free: { rpm: -1 } } }));
    assert.throws(() => loadConfig({ PVAI_CONFIG: file }), /tiers\.free\.rpm/);
  });
});
