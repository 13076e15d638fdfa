import type OpenAI from 'openai';
import type { ResponseStreamEvent } from 'openai/resources/responses/responses';

/** An event of a background response as the SDK yields it, with the response it may carry. */
export type BackgroundEvent = ResponseStreamEvent & { response?: { id: string; status: string } };

/** Every event of a stream, in order. */
export async function collectEvents(stream: AsyncIterable<ResponseStreamEvent>): Promise<BackgroundEvent[]> {
  const events: BackgroundEvent[] = [];
  for await (const event of stream) events.push(event as BackgroundEvent);
  return events;
}

/** The events' sequence numbers run from `first` with no gap and no repeat. */
export function contiguousFrom(events: readonly BackgroundEvent[], first: number): boolean {
  return events.every((e, i) => e.sequence_number === first + i);
}

/** The text the deltas of a stream add up to. */
export function deltaText(events: readonly BackgroundEvent[]): string {
  return events.map((e) => (e.type === 'response.output_text.delta' ? e.delta : '')).join('');
}

/** Polls the response with the SDK until its status is one of `statuses` (or the time is up); returns the last seen. */
export async function pollUntil(
  client: OpenAI,
  id: string,
  statuses: readonly string[],
  timeoutMs = 10_000,
): Promise<OpenAI.Responses.Response> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const response = await client.responses.retrieve(id);
    if (statuses.includes(response.status ?? '') || Date.now() > deadline) return response;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Resolves once `probe` is true (polled every 10 ms), or throws after `timeoutMs` naming `what`. */
export async function until(what: string, probe: () => boolean | Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** A word-by-word answer for a slow upstream: `count` chunks "w0 w1 …". */
export function words(count: number): string[] {
  return Array.from({ length: count }, (_, i) => `w${i} `);
}
