/** The raw-socket client: each case over a TCP connection of its own, several at a time, and a tally of the answers. */
import { type RawExchange, rawExchange } from '../../../test/support/raw-http.js';
import { type Case, show } from './generator.js';

export interface RunOptions {
  /** Connections open at once. */
  concurrency: number;
  /** Print each case and what came back (for `--only N --show`). */
  show: boolean;
}

/**
 * Sends the cases `indexes` name (made by `make`) to the server at `url`, each on a connection of its own
 * and `concurrency` at a time, and hands every case with its exchange to `seen`.
 */
export async function runCases(
  url: string,
  indexes: readonly number[],
  make: (index: number) => Case,
  options: RunOptions,
  seen: (c: Case, exchange: RawExchange) => void,
): Promise<void> {
  let next = 0;
  const worker = async () => {
    for (;;) {
      const i = next++;
      const index = indexes[i];
      if (index === undefined) return;
      const c = make(index);
      if (options.show) show(c);
      const exchange = await rawExchange(url, c.steps, {
        responses: c.responses,
        timeoutMs: c.timeoutMs,
        head: c.head,
      });
      seen(c, exchange);
      if (options.show) console.log(JSON.stringify(exchange, null, 2));
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, options.concurrency) }, worker));
}

/** What came back over a run: responses, connections never answered, statuses, error codes, cases by method. */
export class Tally {
  readonly #statuses = new Map<string, number>();
  readonly #codes = new Map<string, number>();
  readonly #kinds = new Map<string, number>();
  #responses = 0;
  #closedWithoutAnswer = 0;
  readonly #unanswered: string[] = [];

  add(c: Case, exchange: RawExchange): void {
    count(this.#kinds, c.label.split(' ')[0]?.split(':')[0] ?? c.kind);
    this.#responses += exchange.responses.length;
    if (exchange.responses.length === 0) {
      this.#closedWithoutAnswer++;
      if (this.#unanswered.length < 10)
        this.#unanswered.push(`case ${c.index}: ${c.label}${exchange.error ? ` (${exchange.error})` : ''}`);
    }
    for (const response of exchange.responses) {
      count(this.#statuses, String(response.status));
      if (response.status >= 400 && !c.head) {
        try {
          count(this.#codes, String((JSON.parse(response.body) as { code?: string }).code));
        } catch {
          count(this.#codes, '(no JSON)');
        }
      }
    }
  }

  print(): void {
    console.log(`  responses: ${this.#responses}; connections closed without an answer: ${this.#closedWithoutAnswer}`);
    for (const line of this.#unanswered) console.log(`    ${line}`);
    console.log(`  statuses: ${sorted(this.#statuses)}`);
    console.log(`  error codes: ${sorted(this.#codes)}`);
    console.log(`  by method ("connection": not a request at all): ${sorted(this.#kinds)}`);
  }
}

const count = (map: Map<string, number>, key: string) => map.set(key, (map.get(key) ?? 0) + 1);

const sorted = (map: Map<string, number>) =>
  [...map.entries()]
    .sort((a, b) => b[1] - a[1])
    .map(([k, v]) => `${k} ${v}`)
    .join(', ');
