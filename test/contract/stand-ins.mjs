// The stand-ins serve-for-contract.mjs starts beside the throw-away server, on loopback ports of their own: an
// OpenAI-compatible upstream for the PV models (`--upstream mock`) and a SearXNG with the one page its results
// name (always), so that the contract tools get 200s without model weights or the internet.
import { createServer } from 'node:http';

/** A minimal OpenAI-compatible upstream: every request gets the same short answer, as JSON or as SSE. */
export function startMockUpstream() {
  const text = 'Hello from the contract upstream.';
  const usageOf = { prompt_tokens: 12, completion_tokens: 6, total_tokens: 18 };
  const chunk = (delta, finish = null, extra = {}) =>
    `data: ${JSON.stringify({
      id: 'chatcmpl-contract',
      object: 'chat.completion.chunk',
      created: Math.floor(Date.now() / 1000),
      model: 'contract-upstream',
      choices: delta ? [{ index: 0, delta, finish_reason: finish }] : [],
      ...extra,
    })}\n\n`;
  const srv = createServer((req, res) => {
    let raw = '';
    req.setEncoding('utf8');
    req.on('data', (d) => {
      raw += d;
    });
    req.on('end', () => {
      let body = {};
      try {
        body = JSON.parse(raw);
      } catch {
        res.writeHead(400, { 'content-type': 'application/json' }).end('{"error":{"message":"invalid JSON"}}');
        return;
      }
      if (req.method !== 'POST' || !req.url?.endsWith('/chat/completions')) {
        res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"message":"not found"}}');
        return;
      }
      if (body.stream === true) {
        const events = [
          chunk({ role: 'assistant', content: '' }),
          ...(text.match(/\S+\s*/g) ?? []).map((w) => chunk({ content: w })),
          chunk({}, 'stop'),
          ...(body.stream_options?.include_usage === true ? [chunk(null, null, { usage: usageOf })] : []),
          'data: [DONE]\n\n',
        ];
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' }).end(events.join(''));
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          id: 'chatcmpl-contract',
          object: 'chat.completion',
          created: Math.floor(Date.now() / 1000),
          model: 'contract-upstream',
          choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }],
          usage: usageOf,
        }),
      );
    });
  });
  return new Promise((done, reject) => {
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      srv.unref();
      done({ url: `http://127.0.0.1:${srv.address().port}/v1`, close: () => srv.close() });
    });
  });
}

/**
 * A stand-in SearXNG (JSON results) that also serves the one page its results point at, so that a
 * schema-valid `use_web_search: true` gets a grounded answer instead of 400 WEB_SEARCH_UNAVAILABLE.
 */
export function startMockSearch() {
  const srv = createServer((req, res) => {
    const origin = `http://127.0.0.1:${srv.address().port}`;
    if ((req.url ?? '').startsWith('/search')) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          results: [{ url: `${origin}/page`, title: 'Contract page', content: 'A page for the contract checks.' }],
        }),
      );
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(
      '<html><head><title>Contract page</title></head><body><p>A page for the contract checks.</p></body></html>',
    );
  });
  return new Promise((done) => {
    srv.listen(0, '127.0.0.1', () => done({ url: `http://127.0.0.1:${srv.address().port}` }));
  });
}
