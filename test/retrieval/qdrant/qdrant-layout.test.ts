import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { EngineAwayError } from '../../../src/errors/index.js';
import { vectorIndexCheck } from '../../../src/retrieval/index.js';
import { QdrantChunkIndex } from '../../../src/retrieval/qdrant/qdrant-chunk-index.js';
import { checkQdrant } from '../../../src/setup/doctor.js';
import { freePort } from '../../support/processes.js';
import { type QdrantServer, qdrantAvailable, startQdrant } from '../../support/qdrant.js';
import { MODEL } from '../chunk-index-contract.js';

const skip = qdrantAvailable() ? false : 'no Qdrant binary (../shared/bin/qdrant)';
const tenant = { accountId: 'a', userId: 'u' };
const chunk = (id: string, text: string) => ({
  id,
  documentId: 'd',
  ordinal: 0,
  text,
  charStart: 0,
  charEnd: text.length,
  page: null,
});

/** The collection's layout settings and QDRANT_URL's list of nodes, on one real Qdrant (the cluster: qdrant-cluster.test.ts). */
describe('Qdrant layout and node list', { skip }, () => {
  let server: QdrantServer;
  /** A loopback address where nothing listens: a node that is down. */
  let down: string;
  before(async () => {
    server = await startQdrant();
    down = `http://127.0.0.1:${await freePort()}`;
  });
  after(() => server?.stop());

  const params = async (collection: string) => {
    const res = await fetch(`${server.url}/collections/${collection}`);
    return ((await res.json()) as { result: { config: { params: Record<string, unknown> } } }).result.config.params;
  };

  it('creates the collection with the configured shard number, replication and write consistency', async () => {
    const collection = `layout_${randomBytes(6).toString('hex')}`;
    const cluster = { shardNumber: 2, replicationFactor: 1, writeConsistencyFactor: 1 };
    await new QdrantChunkIndex({ url: server.url, collection, cluster }).prepare(MODEL);
    const { shard_number, replication_factor, write_consistency_factor } = await params(collection);
    assert.deepEqual(
      { shard_number, replication_factor, write_consistency_factor },
      {
        shard_number: 2,
        replication_factor: 1,
        write_consistency_factor: 1,
      },
    );
  });

  it('uses an existing collection of another layout as it is, and says so once, naming each difference', async () => {
    const collection = `relayout_${randomBytes(6).toString('hex')}`;
    await new QdrantChunkIndex({ url: server.url, collection }).prepare(MODEL);
    const warnings: string[] = [];
    const index = new QdrantChunkIndex({
      url: server.url,
      collection,
      cluster: { shardNumber: 3, replicationFactor: 2, writeConsistencyFactor: 1 },
      warn: (message) => warnings.push(message),
    });
    // Documents and memories each prepare the one index: one warning all the same.
    await index.prepare(MODEL);
    await index.prepare(MODEL);
    assert.equal(warnings.length, 1, warnings.join('\n'));
    assert.match(warnings[0] ?? '', new RegExp(`"${collection}" exists with another layout`));
    assert.match(warnings[0] ?? '', /shard_number is 1, PVAI_QDRANT_SHARD_NUMBER asks 3/);
    assert.match(warnings[0] ?? '', /replication_factor is 1, PVAI_QDRANT_REPLICATION_FACTOR asks 2/);
    assert.doesNotMatch(warnings[0] ?? '', /write_consistency_factor is/);
    assert.equal((await params(collection)).shard_number, 1, 'left as it was');
    await index.putChunks(tenant, 'd', [chunk('c0', 'Feldspar crystals')]);
    assert.deepEqual(
      (await index.search(tenant, { text: 'feldspar', k: 1, mode: 'lexical' })).map((h) => h.chunkId),
      ['c0'],
    );
  });

  it('uses the first node of the list that answers', async () => {
    const collection = `failover_${randomBytes(6).toString('hex')}`;
    const index = new QdrantChunkIndex({ url: `${down}, ${server.url}`, collection });
    await index.prepare(MODEL);
    await index.putChunks(tenant, 'd', [chunk('c0', 'Obsidian shards')]);
    assert.deepEqual(
      (await index.search(tenant, { text: 'obsidian', k: 1, mode: 'lexical' })).map((h) => h.chunkId),
      ['c0'],
    );
  });

  it('says which nodes it tried when none answers: the vector index is away', async () => {
    const other = `http://127.0.0.1:${await freePort()}`;
    const index = new QdrantChunkIndex({ url: `${down},${other}`, collection: 'nowhere', timeoutMs: 2000 });
    await assert.rejects(index.search(tenant, { text: 'x', k: 1 }), (err: Error) => {
      assert.ok(err instanceof EngineAwayError, String(err));
      assert.match(
        err.message,
        /Qdrant search on collection "nowhere" at http:\/\/127\.0\.0\.1:\d+ \(and 1 other node\)/,
      );
      return true;
    });
  });

  it("readiness and pvai doctor name a node that is down; readiness is ok while another answers, doctor's check fails", async () => {
    const check = vectorIndexCheck({ qdrantUrl: `${down},${server.url}` });
    const ready = await check?.();
    assert.equal(ready?.ok, true, JSON.stringify(ready));
    assert.match(ready?.detail ?? '', new RegExp(`qdrant ${server.url}; ${down} could not be reached`));
    const allDown = await vectorIndexCheck({ qdrantUrl: down })?.();
    assert.equal(allDown?.ok, false);

    const doctor = await checkQdrant({ QDRANT_URL: `${server.url},${down}` });
    assert.equal(doctor.ok, false, JSON.stringify(doctor));
    assert.match(doctor.detail, new RegExp(`^${server.url} ready; ${down}: `));
    assert.match(doctor.fix ?? '', /start Qdrant there/);
  });
});
