import { paged, type UserDataSection } from '../users/index.js';
import type { BackgroundResponses } from './background/background.js';
import type { ResponseStore } from './types.js';

/** Responses per page of an export (a response with its items is a few kB). */
const PAGE_RESPONSES = 50;

/**
 * The `responses` section of an end user's data: their stored responses as returned, each with its input items,
 * read a page at a time; the erase deletes them with their items (a later `previous_response_id` or
 * `item_reference` to one is 404 / refused). Their background responses still running are cancelled first (nothing
 * of them is written after), and their runs and event logs go too.
 */
export function responsesUserData(
  store: ResponseStore,
  background: Pick<BackgroundResponses, 'eraseTenant'>,
): UserDataSection<'responses'> {
  return {
    name: 'responses',
    async *export(tenant) {
      const responses = paged(
        (after: string | undefined, limit) => store.page(tenant, after, limit),
        (r) => r.id,
        PAGE_RESPONSES,
      );
      for await (const r of responses) {
        yield { response: r.body, input_items: r.input.map((i) => ({ ...i.item, id: i.id })) };
      }
    },
    async erase(tenant) {
      await background.eraseTenant(tenant);
      return store.deleteTenant(tenant);
    },
  };
}
