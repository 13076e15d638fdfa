// The chat completion stream's documented shape (decisions.md), checked for Dredd, which has no
// validator for text/event-stream bodies.

/**
 * The documented shape of a chat completion stream; returns what is wrong, or null. `includeUsage`: the request's
 * `stream_options.include_usage`, which alone asks for the last chunk with empty `choices` and `usage`.
 */
function checkChatStream(body, { includeUsage = false } = {}) {
  const events = body
    .split(/\n\n/)
    .map((e) => e.trim())
    .filter(Boolean);
  if (events.length < 3) return `expected at least 3 events, got ${events.length}`;
  if (events.at(-1) !== 'data: [DONE]') return 'the last event is not `data: [DONE]`';
  const chunks = [];
  for (const e of events.slice(0, -1)) {
    if (!e.startsWith('data: ')) return `an event is not a data line: ${e.slice(0, 80)}`;
    try {
      chunks.push(JSON.parse(e.slice(6)));
    } catch {
      return `an event is not JSON: ${e.slice(0, 80)}`;
    }
  }
  const id = chunks[0].id;
  for (const c of chunks) {
    if (c.object !== 'chat.completion.chunk') return `object is ${c.object}`;
    if (c.id !== id) return 'the chunks do not share one id';
    if (!/^chatcmpl-/.test(c.id)) return `id ${c.id} does not start with chatcmpl-`;
  }
  if (chunks[0].choices?.[0]?.delta?.role !== 'assistant') return 'the first delta does not carry the role';
  const last = chunks.at(-1);
  if (!last.memory_context) return 'the last chunk has no memory_context';
  if (!includeUsage) {
    // As OpenAI streams without include_usage: every chunk has its choice, the last one the finish reason.
    if (chunks.some((c) => !Array.isArray(c.choices) || c.choices.length !== 1)) return 'a chunk has no choice';
    if (!last.choices[0].finish_reason) return 'the last chunk has no finish_reason';
    if (chunks.some((c) => c.usage)) return 'a chunk carries usage that include_usage did not ask for';
    return null;
  }
  if (!Array.isArray(last.choices) || last.choices.length !== 0) return 'the last chunk has choices';
  if (!last.usage || typeof last.usage.total_tokens !== 'number') return 'the last chunk has no usage';
  return null;
}

module.exports = { checkChatStream };
