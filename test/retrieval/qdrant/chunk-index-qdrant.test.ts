import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { QdrantChunkIndex } from '../../../src/retrieval/qdrant/qdrant-chunk-index.js';
import { checkQdrant } from '../../../src/setup/doctor.js';
import { type QdrantServer, qdrantAvailable, startQdrant } from '../../support/qdrant.js';
import { chunkIndexContract, MODEL } from '../chunk-index-contract.js';

const available = qdrantAvailable();

describe('Qdrant chunk index', { skip: !available && 'no Qdrant binary (../shared/bin/qdrant)' }, () => {
  let server: QdrantServer;
  before(async () => {
    server = await startQdrant();
  });
  after(() => server?.stop());

  // One server for the file, a fresh collection per case.
  chunkIndexContract('qdrant', async () => {
    const collection = `test_${randomBytes(6).toString('hex')}`;
    const open = () => new QdrantChunkIndex({ url: server.url, collection });
    return {
      index: open(),
      reopen: async () => open(),
      cleanup: async () => {
        await fetch(`${server.url}/collections/${collection}`, { method: 'DELETE' });
      },
    };
  });

  /** Stemming, folded accents and numbers, through whichever analysis the collection's schema has. */
  async function findsWordForms(index: QdrantChunkIndex): Promise<void> {
    const tenant = { accountId: 'a', userId: 'u' };
    const texts = ['The hikers walked along the ridge.', 'Café au lait in Zürich.', 'The secret code is 7431-walrus.'];
    await index.putChunks(
      tenant,
      'd',
      texts.map((text, n) => ({
        id: `c${n}`,
        documentId: 'd',
        ordinal: n,
        text,
        charStart: 0,
        charEnd: 0,
        page: null,
      })),
    );
    for (const [query, want] of [
      ['WALKING', 'c0'],
      ['zurich cafe', 'c1'],
      ['Zürich café', 'c1'],
      ['7431', 'c2'],
    ] as const) {
      const hits = await index.search(tenant, { text: query, k: 3, mode: 'lexical' });
      assert.deepEqual(
        hits.map((h) => h.chunkId),
        [want],
        query,
      );
    }
  }

  it("sends BM25 vectors of pvai's own analysis (schema 2): stems, folded accents, numbers", async () => {
    const collection = `bm25_${randomBytes(6).toString('hex')}`;
    const index = new QdrantChunkIndex({ url: server.url, collection });
    await index.prepare(MODEL);
    const info = (await (await fetch(`${server.url}/collections/${collection}`)).json()) as {
      result: { config: { metadata: { pvai: { schema: number } } } };
    };
    assert.equal(info.result.config.metadata.pvai.schema, 2);
    await findsWordForms(index);
    // Stop words are not indexed: a query of nothing else finds nothing lexically, as on SQL.
    assert.deepEqual(
      await index.search({ accountId: 'a', userId: 'u' }, { text: 'the is in', k: 3, mode: 'lexical' }),
      [],
    );
  });

  it("keeps serving a schema-1 collection (Qdrant's server-side BM25) as it was built", async () => {
    const collection = `schema1_${randomBytes(6).toString('hex')}`;
    // A collection as the first pvai created it: the same layout, schema 1 in its metadata.
    const res = await fetch(`${server.url}/collections/${collection}`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        vectors: { dense: { size: MODEL.dimension, distance: 'Cosine' } },
        sparse_vectors: { bm25: { modifier: 'idf' } },
        metadata: { pvai: { schema: 1, embedding: MODEL } },
      }),
    });
    assert.equal(res.status, 200, await res.text());
    const index = new QdrantChunkIndex({ url: server.url, collection });
    await index.prepare(MODEL);
    await findsWordForms(index);
  });

  it('reaches a Qdrant behind a reverse proxy under a path, on the port the URL says', async () => {
    // A real proxy in front of the real server: /qdrant/<path> → <path>.
    const proxy = createServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      if (!req.url?.startsWith('/qdrant/')) {
        res.writeHead(404).end();
        return;
      }
      const path = req.url.slice('/qdrant'.length);
      const upstream = await fetch(`${server.url}${path}`, {
        method: req.method ?? 'GET',
        headers: { 'content-type': req.headers['content-type'] ?? 'application/json' },
        ...(chunks.length ? { body: Buffer.concat(chunks) } : {}),
      });
      res.writeHead(upstream.status, { 'content-type': upstream.headers.get('content-type') ?? 'application/json' });
      res.end(Buffer.from(await upstream.arrayBuffer()));
    });
    proxy.listen(0, '127.0.0.1');
    await once(proxy, 'listening');
    try {
      const { port } = proxy.address() as AddressInfo;
      const index = new QdrantChunkIndex({ url: `http://127.0.0.1:${port}/qdrant/`, collection: 'proxied' });
      await index.prepare(MODEL);
      const tenant = { accountId: 'a', userId: 'u' };
      await index.putChunks(tenant, 'd', [
        { id: 'd_c0', documentId: 'd', ordinal: 0, text: 'Obsidian', charStart: 0, charEnd: 8, page: null },
      ]);
      assert.deepEqual(
        (await index.search(tenant, { text: 'obsidian', k: 1 })).map((h) => h.chunkId),
        ['d_c0'],
      );
    } finally {
      proxy.close();
    }
  });

  it('refuses a collection it did not create, with a message naming it', async () => {
    const collection = `foreign_${randomBytes(6).toString('hex')}`;
    const res = await fetch(`${server.url}/collections/${collection}`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ vectors: { size: 8, distance: 'Dot' } }),
    });
    assert.equal(res.status, 200, await res.text());
    const index = new QdrantChunkIndex({ url: server.url, collection });
    await assert.rejects(index.prepare(MODEL), new RegExp(`"${collection}" exists but was not created by pvai`));
  });

  it('adds the dense vector when an embedding model comes to a lexical-only collection', async () => {
    const collection = `late_${randomBytes(6).toString('hex')}`;
    const index = new QdrantChunkIndex({ url: server.url, collection });
    await index.prepare();
    const tenant = { accountId: 'a', userId: 'u' };
    await index.putChunks(tenant, 'd', [
      { id: 'd_c0', documentId: 'd', ordinal: 0, text: 'Basalt columns', charStart: 0, charEnd: 14, page: null },
    ]);
    await index.prepare(MODEL);
    const unit = Float32Array.from({ length: 8 }, (_, i) => (i === 0 ? 1 : 0));
    await index.putVectors(tenant, 'd', [{ chunkId: 'd_c0', vector: unit }]);
    const hits = await index.search(tenant, { text: '', vector: unit, k: 3, mode: 'dense' });
    assert.deepEqual(
      hits.map((h) => h.chunkId),
      ['d_c0'],
    );
    const other = new QdrantChunkIndex({ url: server.url, collection });
    await assert.rejects(other.prepare({ id: 'another', dimension: 8 }), /"test-model".*"another"/);
    assert.deepEqual(await denseLayout(collection), { onDisk: true, quantization: 'int8 in RAM' });
  });

  it('creates the dense vectors on disk, searched through int8 quantisation kept in RAM', async () => {
    const collection = `int8_${randomBytes(6).toString('hex')}`;
    await new QdrantChunkIndex({ url: server.url, collection }).prepare(MODEL);
    assert.deepEqual(await denseLayout(collection), { onDisk: true, quantization: 'int8 in RAM' });
  });

  async function denseLayout(collection: string) {
    const info = (await (await fetch(`${server.url}/collections/${collection}`)).json()) as {
      result: {
        config: {
          params: { vectors: Record<string, { on_disk?: boolean }> };
          quantization_config?: { scalar?: { type: string; always_ram?: boolean } } | null;
        };
      };
    };
    const { params, quantization_config: q } = info.result.config;
    return {
      onDisk: params.vectors.dense?.on_disk,
      quantization: q?.scalar?.type === 'int8' && q.scalar.always_ram ? 'int8 in RAM' : JSON.stringify(q),
    };
  }
});

describe('Qdrant with an API key', { skip: !available && 'no Qdrant binary (../shared/bin/qdrant)' }, () => {
  let server: QdrantServer;
  before(async () => {
    server = await startQdrant({ apiKey: 'right-key' });
  });
  after(() => server?.stop());

  it('works with the right key and says a wrong or missing key was refused', async () => {
    const collection = `keyed_${randomBytes(6).toString('hex')}`;
    await new QdrantChunkIndex({ url: server.url, apiKey: 'right-key', collection }).prepare(MODEL);
    for (const apiKey of ['wrong-key', undefined]) {
      const index = new QdrantChunkIndex({ url: server.url, apiKey, collection });
      await assert.rejects(index.prepare(MODEL), (err: Error) => {
        assert.match(err.message, /Qdrant prepare on collection ".*" at http:\/\/127\.0\.0\.1:\d+ was refused \(401/);
        assert.match(err.message, /check QDRANT_API_KEY/);
        return true;
      });
    }
  });

  it('pvai doctor says when Qdrant refuses the key (its /readyz needs none)', async () => {
    assert.deepEqual(await checkQdrant({ QDRANT_URL: server.url, QDRANT_API_KEY: 'right-key' }), {
      ok: true,
      detail: `${server.url} ready`,
    });
    for (const key of ['wrong-key', undefined]) {
      const check = await checkQdrant({ QDRANT_URL: server.url, ...(key ? { QDRANT_API_KEY: key } : {}) });
      assert.equal(check.ok, false, JSON.stringify(check));
      assert.match(check.detail, /refused .*\(HTTP 401\)/);
      assert.match(check.fix ?? '', /QDRANT_API_KEY/);
    }
  });

  it('says where Qdrant is when it cannot be reached', async () => {
    const index = new QdrantChunkIndex({ url: 'http://127.0.0.1:9', collection: 'x', timeoutMs: 2000 });
    await assert.rejects(index.search({ accountId: 'a', userId: 'u' }, { text: 'x', k: 1 }), /127\.0\.0\.1:9/);
  });
});
