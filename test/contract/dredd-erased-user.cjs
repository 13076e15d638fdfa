// The end user the export and erase transactions of /z1/users/{user_id} work on (ERASED_USER, dredd-erased), in the
// dredd run (dredd-hooks.cjs, docs/contract-testing.md): beforeAll gives them data of their own, and their 200s must
// show it — the export lists each kind, the erase counts each.
const { ERASED_USER } = require('./dredd-facts.cjs');
const { storedResponse } = require('./dredd-responses.cjs');
const { available, must } = require('./dredd-server.cjs');

/**
 * beforeAll: a memory, a document, a stored response (each where its capability is on the server) and a conversation
 * of ERASED_USER.
 */
async function seedErasedUser() {
  if (available.memory === true) {
    await must(201, 'POST', '/z1/memory', { body: { user_id: ERASED_USER, content: 'Plays the cello.' } });
  }
  if (available.rag === true) {
    await must(201, 'POST', '/z1/rag/documents', {
      body: { user_id: ERASED_USER, title: 'To erase', content: 'A document to export and erase.' },
    });
  }
  if (available.responses === true) await storedResponse(ERASED_USER, 'A response to export and erase.');
  await must(200, 'POST', '/z1/conversations', {
    body: { user_id: ERASED_USER, items: [{ type: 'message', role: 'user', content: 'A conversation to erase.' }] },
  });
}

/**
 * The export and erase of ERASED_USER hold what beforeAll gave them: a memory, a document and a stored response
 * (each where its capability is on the server) and a conversation; the export's response comes with its input items,
 * its conversation with its items.
 */
function checkSeededUser(resource, body) {
  let json;
  try {
    json = JSON.parse(body);
  } catch {
    return undefined; // not JSON: Dredd's own validation says so
  }
  const seeded = {
    memories: available.memory,
    documents: available.rag,
    responses: available.responses,
    conversations: true,
  };
  for (const [section, present] of Object.entries(seeded)) {
    if (present !== true) continue;
    if (resource.endsWith('/export')) {
      if (!Array.isArray(json[section]) || json[section].length === 0) return `the export has no ${section}`;
      if (section === 'responses' && !json.responses.every((r) => r.input_items?.length > 0 && r.response?.id)) {
        return 'an exported response has no id or no input items';
      }
      if (section === 'conversations' && !json.conversations.every((c) => c.items?.length > 0 && c.conversation?.id)) {
        return 'an exported conversation has no id or no items';
      }
    } else if (!(json.erased?.[section] >= 1)) return `the erase deleted no ${section}`;
  }
  return undefined;
}

module.exports = { seedErasedUser, checkSeededUser };
