import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { chatBody } from '../support/server.js';
import { hostileServer } from './hostile-server.js';

/**
 * JSON nested thousands of levels deep in every free-form field the contract has, sent as a hostile client
 * would: every answer is 400 NESTING_TOO_DEEP naming the field, given before anything is authenticated or
 * stored, and the server answers no request with a 5xx (checked as the suite ends).
 */
const MAX_DEPTH = 64;

/** `{"a":{"a":…{}…}}`: `levels` objects inside one another (6 bytes a level: deep nesting for few bytes). */
function nestedObject(levels: number): string {
  return `${'{"a":'.repeat(levels - 1)}{}${'}'.repeat(levels - 1)}`;
}

/** A JSON Schema whose `properties` nest `levels` schemas deep: what a tool's parameters look like. */
function nestedSchema(levels: number): string {
  return `${'{"type":"object","properties":{"a":'.repeat(levels)}{"type":"string"}${'}}'.repeat(levels)}`;
}

/** A JSON body (text) with `inner` (JSON text) spliced in where `"@"` stands. */
function splice(template: Record<string, unknown>, inner: string): string {
  return JSON.stringify(template).replace('"@"', inner);
}
describe('hostile request bodies', () => {
  const hostile = hostileServer({ checkAtClose: true });
  const { post, only } = hostile;

  describe('deep nesting in every free-form field', () => {
    const deep = 6000;
    const cases: Array<{
      name: string;
      method: 'POST' | 'PATCH';
      path: string;
      body: (inner: string) => string;
      field: string;
    }> = [
      {
        name: 'chat tools[].function.parameters',
        method: 'POST',
        path: '/z1/chat/completions',
        body: (inner) =>
          splice(chatBody({ tools: [{ type: 'function', function: { name: 'f', parameters: '@' } }] }), inner),
        field: 'tools[0].function.parameters',
      },
      {
        name: 'chat tools[].function.parameters, with skip_cache',
        method: 'POST',
        path: '/z1/chat/completions',
        body: (inner) =>
          splice(
            chatBody({ skip_cache: true, tools: [{ type: 'function', function: { name: 'f', parameters: '@' } }] }),
            inner,
          ),
        field: 'tools[0].function.parameters',
      },
      {
        name: 'chat response_format.json_schema',
        method: 'POST',
        path: '/z1/chat/completions',
        body: (inner) => splice(chatBody({ response_format: { type: 'json_schema', json_schema: '@' } }), inner),
        field: 'response_format.json_schema',
      },
      {
        name: 'memory metadata (create)',
        method: 'POST',
        path: '/z1/memory',
        body: (inner) => splice({ user_id: 'u', content: 'c', metadata: '@' }, inner),
        field: 'metadata',
      },
      {
        name: 'memory metadata (update)',
        method: 'PATCH',
        path: '/z1/memory/mem_1',
        body: (inner) => splice({ metadata: '@' }, inner),
        field: 'metadata',
      },
      {
        name: 'document metadata',
        method: 'POST',
        path: '/z1/rag/documents',
        body: (inner) => splice({ user_id: 'u', content: 'c', metadata: '@' }, inner),
        field: 'metadata',
      },
      {
        name: 'an unknown field',
        method: 'POST',
        path: '/z1/chat/completions',
        body: (inner) => splice(chatBody({ extra: '@' }), inner),
        field: 'extra',
      },
    ];

    for (const c of cases) {
      it(`answers ${c.name} nested ${deep} levels with 400 NESTING_TOO_DEEP naming the field`, async () => {
        const text = c.body(nestedObject(deep));
        assert.ok(text.length < 80 * 1024);
        const res = await hostile.server.request(c.method, c.path, { apiKey: hostile.apiKey, rawBody: text });
        assert.equal(res.status, 400, res.text);
        assert.equal(res.body.code, 'NESTING_TOO_DEEP');
        const details = res.body.details as { field: string; max_depth: number };
        assert.ok(details.field.startsWith(`${c.field}.a`), details.field);
        assert.equal(details.max_depth, MAX_DEPTH);
      });
    }

    it('refuses the deep body before authentication: 400 without a key, not 401', async () => {
      const res = await hostile.server.request('POST', '/z1/chat/completions', {
        rawBody: splice(
          chatBody({ tools: [{ type: 'function', function: { name: 'f', parameters: '@' } }] }),
          nestedObject(deep),
        ),
      });
      assert.equal(res.status, 400);
      assert.equal(res.body.code, 'NESTING_TOO_DEEP');
    });

    it('refuses arrays nested at the root', async () => {
      const res = only(await post('/z1/chat/completions', [], `${'['.repeat(deep)}${']'.repeat(deep)}`));
      assert.equal(res.json.code, 'NESTING_TOO_DEEP');
      assert.match(String(res.json.details.field), /^\[0\]\[0\]/);
    });

    it(`accepts ${MAX_DEPTH} levels and refuses ${MAX_DEPTH + 1}, counted from the body's root`, async () => {
      // {"user_id","content","metadata": …}: the body is level 1, metadata's object level 2.
      const body = (levels: number) => splice({ user_id: 'u', content: 'c', metadata: '@' }, nestedObject(levels));
      const within = await hostile.server.request('POST', '/z1/memory', {
        apiKey: hostile.apiKey,
        rawBody: body(MAX_DEPTH - 1),
      });
      assert.equal(within.status, 201, 'past the body reader and validation, stored');
      const past = await hostile.server.request('POST', '/z1/memory', {
        apiKey: hostile.apiKey,
        rawBody: body(MAX_DEPTH),
      });
      assert.equal(past.status, 400);
      assert.equal(past.body.code, 'NESTING_TOO_DEEP');
    });

    it('accepts a tool whose schema nests 20 levels, as real tools never do', async () => {
      const res = await hostile.server.request('POST', '/z1/chat/completions', {
        apiKey: hostile.apiKey,
        rawBody: splice(
          chatBody({ max_tokens: 2, tools: [{ type: 'function', function: { name: 'f', parameters: '@' } }] }),
          nestedSchema(20),
        ),
      });
      assert.notEqual(res.body.code, 'NESTING_TOO_DEEP');
      assert.ok(res.status < 500, res.text);
    });

    it('counts brackets inside strings as text, not nesting', async () => {
      const res = await hostile.server.request('POST', '/z1/memory', {
        apiKey: hostile.apiKey,
        body: { user_id: 'u', content: `${'[{'.repeat(3000)}"\\`, metadata: { note: '{'.repeat(500) } },
      });
      assert.equal(res.status, 201, res.text);
    });
  });
});
