import type { IncomingMessage, ServerResponse } from 'node:http';
import type { MockState, RecordedRequest } from './types.js';
import {
  chunkEvent,
  completionBody,
  DEFAULT_USAGE,
  JSON_HEADERS,
  SSE_HEADERS,
  textEvents,
  usageEvent,
} from './wire.js';

/**
 * The handler of POST /chat/completions: the requested model's scripted behaviour if any, else the next
 * queued one, else the default answer, in JSON or SSE following the request's `stream` flag.
 */
export function chatHandler(state: MockState): (req: IncomingMessage, res: ServerResponse, rawBody: string) => void {
  const { record, defaultText, queue, byModel, requests, later, noteDisconnect } = state;
  // Precomputed default answers: the hot path of a benchmark only writes these bytes.
  const defaultJson = Buffer.from(completionBody(defaultText, undefined, 'stop', DEFAULT_USAGE));
  const defaultSse = Buffer.from(textEvents(defaultText, 'stop', null).join(''));
  const defaultSseWithUsage = Buffer.from(textEvents(defaultText, 'stop', DEFAULT_USAGE).join(''));

  return function respond(req: IncomingMessage, res: ServerResponse, rawBody: string): void {
    let body: unknown;
    try {
      body = JSON.parse(rawBody);
    } catch {
      res
        .writeHead(400, JSON_HEADERS)
        .end(JSON.stringify({ error: { message: 'invalid JSON body', type: 'invalid_request_error' } }));
      return;
    }
    const fields = typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {};
    const model = typeof fields.model === 'string' ? fields.model : undefined;
    const stream = fields.stream === true;
    const streamOptions = fields.stream_options as { include_usage?: unknown } | undefined;
    const includeUsage = stream && streamOptions?.include_usage === true;
    const behaviour = (model !== undefined ? byModel.get(model) : undefined) ?? queue.shift();

    const rec: RecordedRequest | undefined = record
      ? {
          method: req.method ?? 'POST',
          path: req.url ?? '',
          headers: req.headers,
          body,
          model,
          stream,
          behaviour: behaviour?.kind ?? 'answer',
          receivedAt: Date.now(),
          clientDisconnected: false,
        }
      : undefined;
    if (rec) requests.push(rec);

    let selfDestroyed = false;
    res.on('close', () => {
      if (!res.writableFinished && !selfDestroyed) noteDisconnect(rec);
    });

    if (!behaviour) {
      if (!stream) res.writeHead(200, JSON_HEADERS).end(defaultJson);
      else res.writeHead(200, SSE_HEADERS).end(includeUsage ? defaultSseWithUsage : defaultSse);
      return;
    }

    const writeEvents = (events: string[], delayMs: number, onDone: () => void): void => {
      const next = (index: number): void => {
        if (res.destroyed) return;
        if (index >= events.length) {
          onDone();
          return;
        }
        res.write(events[index]);
        if (delayMs > 0) later(delayMs, () => next(index + 1));
        else next(index + 1);
      };
      if (delayMs > 0) later(delayMs, () => next(0));
      else next(0);
    };

    switch (behaviour.kind) {
      case 'hang':
        return; // the request is read; the answer never comes
      case 'status': {
        const headers = {
          ...JSON_HEADERS,
          ...(behaviour.retryAfter !== undefined ? { 'retry-after': behaviour.retryAfter } : {}),
        };
        const errorBody = behaviour.body ?? {
          error: { message: `mock status ${behaviour.status}`, type: 'mock_error' },
        };
        res.writeHead(behaviour.status, headers).end(JSON.stringify(errorBody));
        return;
      }
      case 'answer': {
        const text = behaviour.text ?? defaultText;
        const usage = behaviour.usage === undefined ? DEFAULT_USAGE : behaviour.usage;
        const finishReason = behaviour.finishReason ?? 'stop';
        if (!stream) res.writeHead(200, JSON_HEADERS).end(completionBody(text, undefined, finishReason, usage));
        else res.writeHead(200, SSE_HEADERS).end(textEvents(text, finishReason, includeUsage ? usage : null).join(''));
        return;
      }
      case 'tool-call': {
        const idField = behaviour.id === null ? {} : { id: behaviour.id ?? 'call_mock123' };
        const usage = behaviour.usage === undefined ? DEFAULT_USAGE : behaviour.usage;
        if (!stream) {
          const call = {
            ...idField,
            type: 'function',
            function: { name: behaviour.name, arguments: behaviour.argumentChunks.join('') },
          };
          res.writeHead(200, JSON_HEADERS).end(completionBody(null, [call], 'tool_calls', usage));
          return;
        }
        const events = [
          chunkEvent({
            role: 'assistant',
            content: null,
            tool_calls: [{ index: 0, ...idField, type: 'function', function: { name: behaviour.name, arguments: '' } }],
          }),
          ...behaviour.argumentChunks.map((fragment) =>
            chunkEvent({ tool_calls: [{ index: 0, function: { arguments: fragment } }] }),
          ),
          chunkEvent({}, 'tool_calls'),
          ...(includeUsage && usage ? [usageEvent(usage)] : []),
          'data: [DONE]\n\n',
        ];
        res.writeHead(200, SSE_HEADERS).end(events.join(''));
        return;
      }
      case 'slow': {
        const text = behaviour.chunks.join('');
        if (!stream) {
          later(behaviour.delayMs * behaviour.chunks.length, () => {
            if (!res.destroyed)
              res.writeHead(200, JSON_HEADERS).end(completionBody(text, undefined, 'stop', DEFAULT_USAGE));
          });
          return;
        }
        res.writeHead(200, SSE_HEADERS);
        res.flushHeaders();
        const events = [
          ...behaviour.chunks.map((content) => chunkEvent({ content })),
          chunkEvent({}, 'stop'),
          ...(includeUsage ? [usageEvent(DEFAULT_USAGE)] : []),
          'data: [DONE]\n\n',
        ];
        writeEvents(events, behaviour.delayMs, () => res.end());
        return;
      }
      case 'endless': {
        if (!stream) return;
        res.writeHead(200, SSE_HEADERS);
        const event = chunkEvent({ content: 'x'.repeat(behaviour.chunkChars ?? 16_384) });
        const pump = (): void => {
          while (!res.destroyed && res.write(event));
          if (!res.destroyed) res.once('drain', pump);
        };
        res.write(chunkEvent({ role: 'assistant', content: '' }));
        pump();
        return;
      }
      case 'disconnect': {
        const destroy = (): void => {
          selfDestroyed = true;
          res.socket?.destroy();
        };
        if (!stream) {
          destroy();
          return;
        }
        res.writeHead(200, SSE_HEADERS);
        const count = behaviour.afterChunks ?? 2;
        const events = [
          chunkEvent({ role: 'assistant', content: '' }),
          ...Array.from({ length: count }, (_, i) => chunkEvent({ content: `part${i} ` })),
        ];
        writeEvents(events, 0, () => later(20, destroy)); // let the chunks reach the client first
        return;
      }
    }
  };
}
