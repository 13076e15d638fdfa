import type { LocalResponses, StoredResponse } from '../types.js';

/**
 * How many `store: false` responses a socket keeps for `previous_response_id`. An agent continues the last one
 * (sometimes forks an earlier one); each holds its whole conversation, so the socket's memory stays bounded.
 */
const LOCAL_RESPONSES = 16;

/**
 * A socket's `store: false` responses, the last LOCAL_RESPONSES of them, in memory only: gone with the socket
 * (a new socket gets `previous_response_not_found`), and evicted when a continuation of one fails, so that a
 * retry cannot build on a state the failure may have left half-used (Open Responses' WebSocket rule).
 */
export class SocketResponses implements LocalResponses {
  readonly #responses = new Map<string, StoredResponse>();

  get(id: string): StoredResponse | undefined {
    return this.#responses.get(id);
  }

  keep(response: StoredResponse): void {
    this.#responses.delete(response.id);
    this.#responses.set(response.id, response);
    if (this.#responses.size <= LOCAL_RESPONSES) return;
    const oldest = this.#responses.keys().next().value;
    if (oldest !== undefined) this.#responses.delete(oldest);
  }

  evict(id: string): void {
    this.#responses.delete(id);
  }
}
