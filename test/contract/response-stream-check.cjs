// The Responses API stream's documented shape (openapi.yaml, createResponse), checked for Dredd, which has no
// validator for text/event-stream bodies.

const TERMINAL = new Set(['response.completed', 'response.incomplete', 'response.failed']);
// A background response may also end cancelled (POST /z1/responses/{id}/cancel).
const BACKGROUND_TERMINAL = new Set([...TERMINAL, 'response.cancelled']);

/**
 * The documented shape of a response stream; returns what is wrong, or null. Every event is `event: <type>` with
 * `data: {"type": <type>, "sequence_number": n, …}`, numbered 0, 1, 2, … in order; `response.created` then
 * `response.in_progress` first, the response in progress with no output; one terminal event last
 * (`response.completed`, `.incomplete` or `.failed`) carrying the whole response with the same `resp_` id; no
 * `data: [DONE]` (OpenAI's response streams end with the terminal event); every item added is done, the message's
 * text deltas add up to its `output_text.done` text and to the final response's output; every output item of the
 * final response was announced by `response.output_item.added` at its `output_index`.
 * A background response's events (`{ background: true }`, read again by `GET /z1/responses/{id}?stream=true`) open
 * with `response.created` and `response.queued`, the response `queued`, then `response.in_progress`, unless it was
 * cancelled before it started; they may end with `response.cancelled` (the response `cancelled`).
 */
function checkResponseStream(body, { background = false } = {}) {
  const blocks = body
    .split(/\n\n/)
    .map((e) => e.trim())
    .filter(Boolean);
  if (blocks.length < 3) return `expected at least 3 events, got ${blocks.length}`;
  const events = [];
  for (const block of blocks) {
    const lines = block.split('\n');
    const name = lines.find((l) => l.startsWith('event: '))?.slice(7);
    const data = lines.find((l) => l.startsWith('data: '))?.slice(6);
    if (data === '[DONE]') return 'a response stream has no `data: [DONE]` (it ends with the terminal event)';
    if (!name || data === undefined) return `an event without its event and data lines: ${block.slice(0, 80)}`;
    let event;
    try {
      event = JSON.parse(data);
    } catch {
      return `an event's data is not JSON: ${data.slice(0, 80)}`;
    }
    if (event.type !== name) return `event ${name} carries data of type ${event.type}`;
    if (event.sequence_number !== events.length) {
      return `event ${events.length} (${name}) has sequence_number ${event.sequence_number}`;
    }
    events.push(event);
  }
  const terminal = background ? BACKGROUND_TERMINAL : TERMINAL;
  const last = events.at(-1);
  const opening = background
    ? [
        ['response.created', 'queued'],
        ['response.queued', 'queued'],
      ]
    : [['response.created', 'in_progress']];
  if (!background || events[2]?.type === 'response.in_progress') opening.push(['response.in_progress', 'in_progress']);
  else if (last.type !== 'response.cancelled' || events.length !== 3) {
    return `event 2 is ${events[2]?.type}, not response.in_progress (nor the response cancelled while queued)`;
  }
  const id = events[0].response?.id;
  if (!/^resp_/.test(id ?? '')) return `response.created's id ${id} does not start with resp_`;
  for (const [i, [type, status]] of opening.entries()) {
    const e = events[i];
    if (e.type !== type) return `event ${i} is ${e.type}, not ${type}`;
    if (e.response?.id !== id) return `${type} carries the response ${e.response?.id}, not ${id}`;
    if (e.response.status !== status || e.response.output?.length !== 0) {
      return `${type}: the response is not ${status} with no output yet`;
    }
  }
  if (!terminal.has(last.type)) return `the last event is ${last.type}, not one of ${[...terminal].join(', ')}`;
  if (events.slice(0, -1).some((e) => terminal.has(e.type))) return 'a terminal event before the last one';
  const final = last.response;
  if (final?.id !== id) return `the terminal event's response id ${final?.id} is not ${id}`;
  const expectedStatus = {
    'response.completed': 'completed',
    'response.incomplete': 'incomplete',
    'response.cancelled': 'cancelled',
  }[last.type];
  if (expectedStatus && final.status !== expectedStatus) return `${last.type} carries status ${final.status}`;
  if (last.type === 'response.failed' && (final.status !== 'failed' || !final.error?.code)) {
    return 'response.failed carries no failed status with an error code';
  }
  // What ended early (failed, or cancelled, maybe before any model call) may have no usage and unfinished items.
  const finished = last.type === 'response.completed' || last.type === 'response.incomplete';
  if (finished && !final.usage) return `${last.type} carries no usage`;

  const added = new Map(); // output_index → item id
  const done = new Set();
  const text = new Map(); // item id → the deltas so far
  for (const e of events.slice(opening.length, -1)) {
    if (e.type === 'response.output_item.added') {
      if (added.has(e.output_index)) return `output_index ${e.output_index} added twice`;
      added.set(e.output_index, e.item?.id);
    } else if (e.type === 'response.output_item.done') {
      if (added.get(e.output_index) !== e.item?.id) return `item ${e.item?.id} done but never added`;
      done.add(e.output_index);
    } else if (e.type === 'response.output_text.delta') {
      if (![...added.values()].includes(e.item_id)) return `a text delta for ${e.item_id} before its item was added`;
      text.set(e.item_id, (text.get(e.item_id) ?? '') + e.delta);
    } else if (e.type === 'response.output_text.done') {
      if ((text.get(e.item_id) ?? '') !== e.text) return `the deltas of ${e.item_id} do not add up to its text`;
    }
  }
  if (finished) {
    for (const index of added.keys()) if (!done.has(index)) return `the item at output_index ${index} never done`;
    if (final.output.length !== added.size) {
      return `the final response has ${final.output.length} output items, ${added.size} were added`;
    }
    for (const [index, item] of final.output.entries()) {
      if (added.get(index) !== item.id) return `the final output item ${index} (${item.id}) was not added there`;
      if (item.type === 'message' && text.has(item.id)) {
        const said = (item.content ?? []).map((c) => c.text).join('');
        if (said !== text.get(item.id)) return `the final message ${item.id} is not the text its deltas streamed`;
      }
    }
  }
  return null;
}

module.exports = { checkResponseStream };
