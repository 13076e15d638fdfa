import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { REQUEST_PIPELINE } from '../../src/http/pipeline.js';

const SRC = resolve(import.meta.dirname, '../../src');

describe('the request pipeline (src/http/pipeline.ts, docs/architecture.md)', () => {
  it('names, for each stage, a file that exists', () => {
    for (const stage of REQUEST_PIPELINE) assert.ok(existsSync(join(SRC, stage.file)), `${stage.name}: ${stage.file}`);
    assert.equal(new Set(REQUEST_PIPELINE.map((stage) => stage.name)).size, REQUEST_PIPELINE.length, 'one name each');
  });

  it('lists the hosts in the order they run: the server, then Koa, then the contract', () => {
    const order = ['server', 'koa', 'contract'];
    const hosts = REQUEST_PIPELINE.map((stage) => order.indexOf(stage.runs));
    assert.deepEqual(
      hosts,
      [...hosts].sort((a, b) => a - b),
    );
    assert.deepEqual([...new Set(hosts)], [0, 1, 2]);
  });
});
