import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { REQUEST_PIPELINE } from '../../src/http/pipeline.js';

const SRC = resolve(import.meta.dirname, '../../src');

describe('the request pipeline (src/http/pipeline.ts, docs/architecture.md)', () => {
  it('names, for each stage, a file that exists', () => {
    for (const stage of REQUEST_PIPELINE) assert.ok(existsSync(join(SRC, stage.file)), `${stage.name}: ${stage.file}`);
    assert.equal(new Set(REQUEST_PIPELINE.map((stage) => stage.name)).size, REQUEST_PIPELINE.length, 'one name each');
  });

  it('names, for each stage, what of its file it runs: declared in that file, and what runs the stage', () => {
    const server = readFileSync(join(SRC, 'server.ts'), 'utf8');
    for (const stage of REQUEST_PIPELINE) {
      assert.ok(stage.symbols.length > 0, `${stage.name}: no symbol named`);
      const source = readFileSync(join(SRC, stage.file), 'utf8');
      // What mounts or registers the stage (Koa, openapi-backend), or server.ts for the server's own stages.
      const runner =
        stage.runs === 'server'
          ? server
          : stage.runs === 'koa'
            ? String(stage.mount)
            : `${String(stage.hooks)} ${String(stage.security)}`;
      for (const symbol of stage.symbols) {
        const declared = new RegExp(`^(?:export )?(?:async )?(?:function|class|const|let) ${symbol}\\b`, 'm');
        assert.match(source, declared, `${stage.name}: ${symbol} is not declared in ${stage.file}`);
        assert.match(runner, new RegExp(`\\b${symbol}\\b`), `${stage.name}: ${symbol} is not what runs it`);
      }
    }
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
