import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { backends } from '../support/databases.js';
import { type DocumentBody, EMBEDDING_MODEL, filler, type MatchBody } from '../support/documents.js';
import { eventually } from '../support/eventually.js';
import { qdrantAvailable } from '../support/qdrant.js';
import { nodeFetch, type QdrantCluster, startQdrantCluster, waitForActiveReplicas } from '../support/qdrant-cluster.js';
import { startTestServer, type TestServer } from '../support/server.js';

/**
 * A three-node Qdrant cluster (the real binary, distributed mode) that loses a node under a running pvai: the
 * collection is created with 3 shards, 2 replicas each, write consistency 1; documents are ingested through the
 * API; the entry node (the first of QDRANT_URL) is killed, and search still finds every document and new ones
 * are ingested (pvai fails over to the next node); it comes back, its replicas catch up, a second node is stopped
 * and every document, those ingested while the first was away included, is still found.
 */
const CODEWORDS = ['quokka', 'narwhal', 'axolotl', 'pangolin', 'okapi', 'tapir', 'capybara', 'ocelot', 'wombat'];

const skip = qdrantAvailable() ? false : 'no Qdrant binary (../shared/bin/qdrant)';

for (const backend of backends()) {
  describe(`Qdrant cluster losing a node (${backend})`, { skip }, () => {
    let cluster: QdrantCluster;
    let server: TestServer;
    let apiKey: string;
    const collection = `cluster_${randomBytes(4).toString('hex')}`;
    /** Codeword → the id of the document that holds it. */
    const stored = new Map<string, string>();

    before(async () => {
      cluster = await startQdrantCluster(3);
      server = await startTestServer(backend, {
        config: {
          qdrantUrl: cluster.urls,
          qdrantCollection: collection,
          qdrant: { shardNumber: 3, replicationFactor: 2, writeConsistencyFactor: 1 },
          embeddingModel: EMBEDDING_MODEL,
          tiers: { business: { rpm: 10_000 } },
        },
      });
      ({ apiKey } = await server.createAccount('business', 10_000));
    });
    after(async () => {
      await server?.close();
      await cluster?.stop();
    });

    const ingest = async (codeword: string) => {
      const content = `${filler(4, stored.size)}\n\nThe keeper of the ${codeword} enclosure is named ${codeword}-warden.`;
      const res = await server.request<DocumentBody>('POST', '/z1/rag/documents', {
        apiKey,
        body: { user_id: 'zoo', title: codeword, content },
      });
      assert.equal(res.status, 201, res.text);
      // Ready in the answer, or soon after: the upload waits a bounded time for its indexing.
      const done = await eventually(
        async () =>
          (await server.request<DocumentBody>('GET', `/z1/rag/documents/${res.body.id}?user_id=zoo`, { apiKey })).body,
        (d) => d.status !== 'processing',
        30_000,
      );
      assert.equal(done.status, 'ready', JSON.stringify(done));
      stored.set(codeword, res.body.id);
    };
    /** Every stored document is found by its codeword, hybrid (BM25 and dense vectors fused). */
    const findsEverything = async (when: string) => {
      for (const [codeword, id] of stored) {
        const res = await server.request<{ data: MatchBody[] }>('POST', '/z1/rag/search', {
          apiKey,
          body: { user_id: 'zoo', query: `${codeword} keeper`, k: 3 },
        });
        assert.equal(res.status, 200, `${when}, ${codeword}: ${res.text}`);
        assert.equal(res.body.data[0]?.document_id, id, `${when}: ${codeword} is found first`);
      }
    };
    const points = async (url: string) => {
      const res = await nodeFetch(`${url}/collections/${collection}/points/count`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ exact: true }),
      });
      return ((await res.json()) as { result: { count: number } }).result.count;
    };
    const chunkCount = async () => {
      let total = 0;
      for (const id of stored.values()) {
        const res = await server.request<DocumentBody>('GET', `/z1/rag/documents/${id}?user_id=zoo`, { apiKey });
        total += res.body.chunk_count;
      }
      return total;
    };

    it('creates the collection with the configured shards, replicas and write consistency, spread over the nodes', async () => {
      for (const codeword of CODEWORDS.slice(0, 4)) await ingest(codeword);
      const info = (await (await nodeFetch(`${cluster.nodes[2]?.url}/collections/${collection}`)).json()) as {
        result: { config: { params: Record<string, number> } };
      };
      const { shard_number, replication_factor, write_consistency_factor } = info.result.config.params;
      assert.deepEqual(
        { shard_number, replication_factor, write_consistency_factor },
        {
          shard_number: 3,
          replication_factor: 2,
          write_consistency_factor: 1,
        },
      );
      // 3 shards × 2 replicas on 3 nodes: every node holds two shards, so any node stopped holds data.
      for (const node of cluster.nodes) {
        const res = await nodeFetch(`${node.url}/collections/${collection}/cluster`);
        const shards = ((await res.json()) as { result: { local_shards: Array<{ points_count: number }> } }).result;
        assert.equal(shards.local_shards.length, 2, `${node.url} holds two shards`);
      }
      await findsEverything('all three nodes up');
    });

    it('searches and ingests with the entry node killed, then loses nothing when another node stops', async () => {
      const [first, second, third] = cluster.nodes as [
        QdrantCluster['nodes'][0],
        QdrantCluster['nodes'][0],
        QdrantCluster['nodes'][0],
      ];
      // The first node of QDRANT_URL, which pvai was using, crashes.
      await first.stop('SIGKILL');
      await findsEverything('entry node killed');
      for (const codeword of CODEWORDS.slice(4, 7)) await ingest(codeword);
      await findsEverything('entry node killed, after new ingestion');
      // Readiness names the vector index usable through the nodes left (Qdrant's own /readyz says 503 for a
      // moment after a peer goes, until the cluster has marked its replicas dead).
      const ready = await eventually(
        () => server.request<{ checks: Record<string, { ok: boolean; detail: string }> }>('GET', '/z1/health/ready'),
        (r) => r.body.checks.vector_index?.ok === true,
        15_000,
      );
      assert.equal(ready.body.checks.vector_index?.ok, true, ready.text);
      assert.match(ready.body.checks.vector_index?.detail ?? '', /could not be reached \(ECONNREFUSED\)/);

      // It comes back on its storage; what it missed is copied to it before another node goes.
      await first.start();
      await waitForActiveReplicas(cluster, collection);
      await second.stop('SIGTERM');
      await findsEverything('entry node back, second node stopped');
      await ingest(CODEWORDS[7] as string);
      await findsEverything('second node stopped, after new ingestion');
      // Nothing lost, nothing doubled: the cluster holds exactly the documents' chunks.
      assert.equal(await points(third.url), await chunkCount());

      // Both other nodes are up again, the third stops: the first must now serve what it missed while it was down.
      await second.start();
      await waitForActiveReplicas(cluster, collection);
      await third.stop('SIGTERM');
      await findsEverything('third node stopped');
      assert.equal(await points(first.url), await chunkCount());

      // Two of three down: the shard both held has no replica left. Search is 503 naming the vector index, not a 500.
      await second.stop('SIGKILL');
      const away = await server.request<{ code: string; details: { engine: string } }>('POST', '/z1/rag/search', {
        apiKey,
        body: { user_id: 'zoo', query: 'quokka keeper', k: 3 },
      });
      assert.equal(away.status, 503, away.text);
      assert.equal(away.body.code, 'SERVICE_UNAVAILABLE');
      assert.equal(away.body.details.engine, 'vector index');
    });
  });
}
