import type { RequestBody, Schema } from '../http/index.js';
import type { ModelId } from '../kernel/index.js';
import type { ChatMessage } from '../providers/index.js';

/** The body of POST /z1/responses, as the contract admits it. */
export type ResponseCreateRequest = RequestBody<'createResponse'>;
/** The body once its model's name (an id or an alias) is read: the PV model it stands for. */
export type ResponseCreateBody = Omit<ResponseCreateRequest, 'model'> & { model: ModelId };
export type ResponseBody = Schema<'Response'>;
export type OutputItem = Schema<'ResponseOutputItem'>;
export type InputItem = Schema<'ResponseInputItem'>;
export type Annotation = Schema<'ResponseAnnotation'>;

export interface Tenant {
  accountId: string;
  userId: string;
}

/** An item as stored: its id, and the item as the client sent it (input) or as it was returned (output). */
export interface StoredItem {
  id: string;
  item: Record<string, unknown>;
}

export interface StoredResponse {
  id: string;
  tenant: Tenant;
  createdAt: number;
  body: ResponseBody;
  /**
   * The stored response this one continues (`previous_response_id`), whose whole conversation comes before
   * `conversation`; null when `conversation` is whole (no stored predecessor: none, a socket's `store: false`
   * one, or a row stored before chains were).
   */
  previousId: string | null;
  /** The response's part of the conversation, as chat messages: after its predecessor's (`chain.ts`). */
  conversation: ChatMessage[];
  /** Its own input items (not its predecessors'). */
  input: StoredItem[];
  output: StoredItem[];
}

/** A stored response with the stored responses it continues, oldest first (`ResponseStore.chain`). */
export interface ResponseChain {
  /** Oldest first; the last is the response asked for. */
  responses: StoredResponse[];
  /** The id of a deleted response the oldest one continues: the chain is broken there. */
  missing: string | null;
  /** How many responses the whole chain holds (the deleted ones included), as stored with the last. */
  depth: number;
  /** The size of the whole chain's conversation in bytes, as stored with the last. */
  contextBytes: number;
}

/**
 * Stored responses per (account, end user). A response is read by its account (`GET`, `DELETE`: OpenAI's
 * clients name no end user there) and continued only by the same end user (`previous_response_id`,
 * `item_reference`).
 */
export interface ResponseStore {
  /** Stores the response with its items, or replaces what is stored under its id (a background one that ran). */
  put(response: StoredResponse): Promise<void>;
  /** The account's response; undefined when another account's or absent. */
  get(accountId: string, id: string): Promise<StoredResponse | undefined>;
  /** The account's response with the responses it continues (at most MAX_CHAIN_DEPTH); undefined when absent. */
  chain(accountId: string, id: string): Promise<ResponseChain | undefined>;
  delete(accountId: string, id: string): Promise<boolean>;
  /** Items of the end user's stored responses by id (an `item_reference`), newest first for a repeated id. */
  items(tenant: Tenant, ids: readonly string[]): Promise<Map<string, Record<string, unknown>>>;
  /** The end user's responses, oldest first, a page at a time (the export). */
  page(tenant: Tenant, after: string | undefined, limit: number): Promise<StoredResponse[]>;
  /** Deletes every response of the end user; returns how many. */
  deleteTenant(tenant: Tenant): Promise<number>;
}

/**
 * The conversations a response may continue (`conversation`): the Conversations capability implements it, the
 * responses service only reads and appends through it.
 */
export interface ConversationPort {
  /** The conversation's items, oldest first; undefined when it is absent or not the end user's. */
  items(tenant: Tenant, id: string): Promise<Array<Record<string, unknown>> | undefined>;
  /** Appends a finished response's input then output items, in order. */
  append(tenant: Tenant, id: string, items: readonly StoredItem[]): Promise<void>;
}

/**
 * Responses kept outside the store for a caller that continues them (a WebSocket's `store: false` responses):
 * looked up before the store for `previous_response_id`.
 */
export interface LocalResponses {
  get(id: string): StoredResponse | undefined;
}
