// The chat completion stream's documented shape (decisions.md), checked for Dredd, which has no
// validator for text/event-stream bodies.

/** The documented shape of a chat completion stream; returns what is wrong, or null. */
function checkChatStream(body) {
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
  if (!Array.isArray(last.choices) || last.choices.length !== 0) return 'the last chunk has choices';
  if (!last.usage || typeof last.usage.total_tokens !== 'number') return 'the last chunk has no usage';
  if (!last.memory_context) return 'the last chunk has no memory_context';
  return null;
}

module.exports = { checkChatStream };
