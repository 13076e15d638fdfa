import type { ContextRegistry, ContextSource } from './chat/index.js';
import type { ExtraRoutes, Operations, RequestRecord, UpgradeRoute } from './http/index.js';
import { closeInOrder } from './system/index.js';
import type { UserDataSection } from './users/index.js';

/**
 * What a capability gives the service: each folder's `xxxCapability(deps)` returns one, and `compose.ts` plugs
 * them in, in order. The composition root alone reads this shape, so it lives here and the folders return it
 * by structure (they import nothing of the root).
 */
export interface Capability {
  /** Its name, in the close report and in the error of an operation two capabilities claim. */
  readonly name: string;
  /** Its operations, by the contract's operationId. */
  readonly operations?: Partial<Operations>;
  /** What chat can draw on from it (documents, memories, the web). */
  readonly context?: ContextSource;
  /** Its section of an end user's export and erase. */
  // biome-ignore lint/suspicious/noExplicitAny: each section is typed by its own name; the board only lists them
  readonly userData?: UserDataSection<any>;
  /** What it records at the end of every authenticated request (the usage row, the SLA bucket, the metrics). */
  readonly endOfRequest?: (record: RequestRecord) => Promise<void> | void;
  /** Pages outside the contract (the dashboard). */
  readonly pages?: ExtraRoutes;
  /** WebSocket routes (the Responses API's WebSocket mode). */
  readonly upgrades?: UpgradeRoute;
  /** Run once every capability is plugged, in plug order (workers, the model's load). */
  start?(): Promise<void>;
  /** At a stop or after a failed start; capabilities close in the reverse of their plug order. */
  close?(): Promise<unknown> | unknown;
}

/** The capabilities plugged so far and the engines opened so far, in order. */
export class Plugboard {
  readonly #context: ContextRegistry;
  readonly #plugged: Capability[] = [];
  /** Everything to close, in the order it was opened: the stop closes it backwards, like a stack of defers. */
  readonly #opened: Array<{ name: string; close: () => Promise<unknown> | unknown }> = [];

  constructor(context: ContextRegistry) {
    this.#context = context;
  }

  /** Notes an engine (the database, an index, the router) to close after the capabilities opened later. */
  open<T>(name: string, part: T, close: (part: T) => Promise<unknown> | unknown): T {
    this.#opened.push({ name, close: () => close(part) });
    return part;
  }

  /** Plugs a capability in: its context source is chat's at once; the rest is read when the service is built. */
  plug<C extends Capability>(capability: C): C {
    if (capability.context) this.#context.register(capability.context);
    this.#plugged.push(capability);
    const { close } = capability;
    if (close) this.#opened.push({ name: capability.name, close: () => close.call(capability) });
    return capability;
  }

  /** Every operation, by operationId; one claimed by two capabilities stops the start. */
  operations(): Operations {
    const merged: Record<string, unknown> = {};
    for (const { name, operations } of this.#plugged) {
      for (const [id, handler] of Object.entries(operations ?? {})) {
        if (id in merged) throw new Error(`operation ${id} is claimed twice (the second by ${name})`);
        merged[id] = handler;
      }
    }
    return merged as Operations;
  }

  // biome-ignore lint/suspicious/noExplicitAny: see Capability.userData
  userData(): UserDataSection<any>[] {
    return this.#given('userData');
  }

  /**
   * The end of a request: each capability's record of it, in plug order, every one even when another throws
   * (the first failure is the result). Nearly every request comes here: a record that returns nothing costs no
   * promise, and one that returns a promise (the usage row) is awaited alone.
   */
  endOfRequest(): (record: RequestRecord) => Promise<void> | undefined {
    const recorders = this.#given('endOfRequest');
    return (record) => {
      let pending: Promise<void> | undefined;
      let failure: { err: unknown } | undefined;
      for (const recorder of recorders) {
        try {
          const writing = recorder(record);
          if (writing) pending = pending ? Promise.all([pending, writing]).then(() => undefined) : writing;
        } catch (err) {
          failure ??= { err };
        }
      }
      if (!failure) return pending;
      const { err } = failure;
      return (pending ?? Promise.resolve()).then(
        () => Promise.reject(err),
        () => Promise.reject(err),
      );
    };
  }

  pages(): ExtraRoutes[] {
    return this.#given('pages');
  }

  upgrades(): UpgradeRoute[] {
    return this.#given('upgrades');
  }

  /** What the capabilities that give `field` give, in plug order. */
  #given<K extends 'userData' | 'endOfRequest' | 'pages' | 'upgrades'>(field: K): NonNullable<Capability[K]>[] {
    return this.#plugged.flatMap((c) => (c[field] ? [c[field] as NonNullable<Capability[K]>] : []));
  }

  /** Starts the capabilities, in plug order. */
  async start(): Promise<void> {
    for (const capability of this.#plugged) await capability.start?.();
  }

  /** Closes what is open, the last opened first, every part even when one fails (an AggregateError names them). */
  close(): Promise<void> {
    return closeInOrder(this.#opened.toReversed());
  }
}
