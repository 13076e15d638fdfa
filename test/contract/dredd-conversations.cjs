// The Conversations API in the dredd run (dredd-hooks.cjs, docs/contract-testing.md): the conversations and items
// beforeAll creates, and the real ids a transaction of /z1/conversations/{conversation_id}… needs. Every 2xx works on
// a fixture: one conversation that getConversation, updateConversation, the item listing and the item added read and
// change, holding two items (one that getConversationItem reads, one that deleteConversationItem deletes), and a
// conversation of its own for deleteConversation (it comes before the items in the document). The 404s name a
// conversation (or, on an item's path, an item of the fixture conversation) that does not exist.
const { EXAMPLE_IDS } = require('./dredd-facts.cjs');
const { ids, must } = require('./dredd-server.cjs');

/** beforeAll: the fixture conversations of the end user `dredd-fixture`, and the ids of their items. */
async function createFixtureConversations() {
  const conversation = await must(200, 'POST', '/z1/conversations', {
    body: {
      user_id: 'dredd-fixture',
      metadata: { topic: 'fixture' },
      items: [
        { type: 'message', role: 'user', content: 'Remember the fixture.' },
        { type: 'message', role: 'assistant', content: 'The fixture is remembered.' },
      ],
    },
  });
  ids.conversation = conversation.id;
  const listed = await must(200, 'GET', `/z1/conversations/${conversation.id}/items?order=asc`);
  [ids.item, ids.deleteItem] = listed.data.map((item) => item.id);
  if (!ids.deleteItem) throw new Error(`dredd-hooks setup: the fixture conversation lists ${listed.data.length} items`);
  ids.deleteConversation = (
    await must(200, 'POST', '/z1/conversations', { body: { user_id: 'dredd-fixture', items: [] } })
  ).id;
}

/** The real id of kind `conversation` or `item` for a 2xx transaction of `resource`. */
function conversationIdOf(kind, resource, method) {
  if (kind === 'item') return method === 'DELETE' ? ids.deleteItem : ids.item;
  return method === 'DELETE' && resource === '/z1/conversations/{conversation_id}'
    ? ids.deleteConversation
    : ids.conversation;
}

/** An item's path names the fixture conversation, whatever the transaction does with the item. */
function placeItemConversation(t, kind) {
  if (kind !== 'item') return;
  t.fullPath = t.fullPath.replace(EXAMPLE_IDS.conversation, ids.conversation);
  t.request.uri = t.fullPath;
}

module.exports = { createFixtureConversations, conversationIdOf, placeItemConversation };
