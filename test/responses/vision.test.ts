import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import OpenAI from 'openai';
import { backends } from '../support/databases.js';
import { type MockUpstream, startMockUpstream } from '../support/mock-openai-upstream.js';
import { openaiClient } from '../support/openai-client.js';
import { startTestServer, type TestServer } from '../support/server.js';
import type { ErrorBody, ResponseBody } from './support.js';

interface UpstreamBody {
  model: string;
  messages: Array<{ role: string; content: unknown }>;
}

const CAT = 'https://example.com/cat.png';

/**
 * `input_image` in the Responses API: on a route whose every target is declared `vision`, a user message's images
 * reach the model as chat's `image_url` parts (with their `detail`), in order with its text; on a text-only route
 * they are refused naming the part, and so is an image carried on from a previous response; an image named by
 * `file_id` cannot be read (no files API), nor can `input_file` and `input_audio`.
 */
for (const backend of backends()) {
  describe(`image input in responses (${backend})`, () => {
    let upstream: MockUpstream;
    let server: TestServer;
    let client: OpenAI;
    let apiKey: string;

    before(async () => {
      upstream = await startMockUpstream({ defaultText: 'A cat.' });
      const target = { provider: 'openai-compatible' as const, baseUrl: upstream.url, maxRetries: 0 };
      server = await startTestServer(backend, {
        config: {
          tiers: { business: { rpm: 10_000 } },
          routing: {
            'PV-TURBO': [{ ...target, model: 'eyes', vision: true }],
            'PV-STANDARD': [{ ...target, model: 'blind' }],
          },
        },
      });
      ({ apiKey } = await server.createAccount('business', 10_000));
      client = openaiClient(server.url, apiKey);
    });
    after(async () => {
      await server?.close();
      await upstream?.close();
    });
    beforeEach(() => upstream.reset());

    const sent = () => upstream.requests.at(-1)?.body as UpstreamBody;
    const create = (body: Record<string, unknown>) =>
      server.request<ResponseBody & ErrorBody>('POST', '/z1/responses', {
        apiKey,
        body: { model: 'PV-TURBO', user_id: 'u', use_memory: false, ...body },
      });
    const look = (...content: Array<Record<string, unknown>>) => [{ role: 'user', content }];

    it('hands a user message of text and images to a vision route as chat image_url parts, with the official SDK', async () => {
      const response = await client.responses.create({
        model: 'PV-TURBO',
        safety_identifier: 'u',
        instructions: 'Describe pictures briefly.',
        input: [
          {
            role: 'user',
            content: [
              { type: 'input_text', text: 'What is in these?' },
              { type: 'input_image', image_url: CAT, detail: 'low' },
              { type: 'input_text', text: ' And this one:' },
              { type: 'input_image', image_url: 'data:image/png;base64,iVBORw0KGgo=', detail: 'auto' },
            ],
          },
        ],
      });
      assert.equal(response.status, 'completed');
      assert.equal(response.output_text, 'A cat.');
      assert.equal(sent().model, 'eyes');
      assert.deepEqual(sent().messages.at(-1), {
        role: 'user',
        content: [
          { type: 'text', text: 'What is in these?' },
          { type: 'image_url', image_url: { url: CAT, detail: 'low' } },
          { type: 'text', text: ' And this one:' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=', detail: 'auto' } },
        ],
      });

      // Streamed the same, and the stored conversation carries the image on to the next turn of the same route.
      upstream.reset();
      const stream = await client.responses.create({
        model: 'PV-TURBO',
        safety_identifier: 'u',
        stream: true,
        previous_response_id: response.id,
        input: [{ role: 'user', content: [{ type: 'input_image', image_url: CAT, detail: 'high' }] }],
      });
      const events: string[] = [];
      for await (const event of stream) events.push(event.type);
      assert.equal(events.at(-1), 'response.completed');
      const messages = sent().messages;
      assert.deepEqual(messages.at(-1), {
        role: 'user',
        content: [{ type: 'image_url', image_url: { url: CAT, detail: 'high' } }],
      });
      assert.ok(
        messages.some((m) => Array.isArray(m.content) && JSON.stringify(m.content).includes('What is in these?')),
        'the earlier turn, images and all',
      );
    });

    it('refuses an input_image on a text-only route naming the part, and sends nothing', async () => {
      const res = await create({
        model: 'PV-STANDARD',
        input: look(
          { type: 'input_text', text: 'What is this?' },
          { type: 'input_image', image_url: CAT, detail: 'auto' },
        ),
      });
      assert.equal(res.status, 400, res.text);
      assert.equal(res.body.code, 'UNSUPPORTED_CONTENT');
      assert.deepEqual(res.body.details, { field: 'input[0].content[1]', part_type: 'input_image' });
      assert.match(
        res.body.message,
        /input\[0\]\.content\[1\] is a part of type input_image: the models here read text only/,
      );
      assert.equal(upstream.requests.length, 0);

      await assert.rejects(
        () =>
          client.responses.create({
            model: 'PV-STANDARD',
            safety_identifier: 'u',
            input: [{ role: 'user', content: [{ type: 'input_image', image_url: CAT, detail: 'auto' }] }],
          }),
        (err: unknown) => err instanceof OpenAI.BadRequestError && /input_image/.test(err.message),
      );
      assert.equal(upstream.requests.length, 0);
    });

    it('refuses to carry an image of a previous response onto a text-only route', async () => {
      const first = await create({ input: look({ type: 'input_image', image_url: CAT, detail: 'auto' }) });
      assert.equal(first.status, 200, first.text);
      upstream.reset();
      const next = await create({ model: 'PV-STANDARD', previous_response_id: first.body.id, input: 'And now?' });
      assert.equal(next.status, 400, next.text);
      assert.equal(next.body.code, 'UNSUPPORTED_CONTENT');
      assert.equal(next.body.details?.field, 'previous_response_id');
      assert.match(next.body.message, /holds an image, and PV-STANDARD reads text only/);
      assert.equal(upstream.requests.length, 0);
    });

    const refused: Array<[string, Array<Record<string, unknown>>, string, Record<string, unknown>, RegExp]> = [
      [
        'an image named by file_id (pvai has no files API)',
        look({ type: 'input_text', text: 'What is this?' }, { type: 'input_image', file_id: 'file-1', detail: 'auto' }),
        'UNSUPPORTED_CONTENT',
        { field: 'input[0].content[1]', part_type: 'input_image' },
        /file_id.*no files API/,
      ],
      [
        'an input_file',
        look({ type: 'input_file', file_id: 'file-1' }),
        'UNSUPPORTED_CONTENT',
        { field: 'input[0].content[0]', part_type: 'input_file' },
        /reads text and images only/,
      ],
      [
        'an input_audio',
        look({ type: 'input_audio', input_audio: { data: 'AAAA', format: 'wav' } }),
        'UNSUPPORTED_CONTENT',
        { field: 'input[0].content[0]', part_type: 'input_audio' },
        /reads text and images only/,
      ],
      [
        'an image in a developer message',
        [
          { role: 'developer', content: [{ type: 'input_image', image_url: CAT, detail: 'auto' }] },
          { role: 'user', content: 'Describe it.' },
        ],
        'UNSUPPORTED_CONTENT',
        { field: 'input[0].content[0]', part_type: 'input_image' },
        /user message only, not in a developer message/,
      ],
      [
        'an input_image without image_url',
        look({ type: 'input_image', detail: 'auto' }),
        'INVALID_PARAMETER',
        { field: 'input[0].content[0].image_url', reason: 'is required' },
        /image_url is required/,
      ],
    ];
    for (const [name, input, code, details, message] of refused) {
      it(`refuses on a vision route ${name}, naming it`, async () => {
        const res = await create({ input });
        assert.equal(res.status, 400, res.text);
        assert.equal(res.body.code, code);
        assert.deepEqual(res.body.details, details);
        assert.match(res.body.message, message);
        assert.equal(upstream.requests.length, 0);
      });
    }
  });
}
