import { Counter, Gauge, type Registry } from 'prom-client';

/** A queue's state at scrape time. */
interface QueueState {
  /** Work running now. */
  active: number;
  /** Work waiting for a slot. */
  queued: number;
}

/** What the engines count, read at scrape time (each function small and cheap). */
export interface EngineSources {
  /** The sandbox's fair queue. */
  sandbox?: () => QueueState;
  /** The local engine's sequences (all local models summed). */
  localEngine?: () => QueueState;
  /** The local engine's prompt tokens since the start: reused from a sequence's cache, and evaluated. */
  localPromptTokens?: () => { reused: number; evaluated: number };
}

/** The engines' own state, read at each scrape: the sandbox's and the local engine's queues, the engine's prompt cache. */
export function engineMetrics(registers: Registry[], sources: EngineSources): void {
  const queueGauge = (name: string, help: string, read: (() => QueueState) | undefined) =>
    new Gauge({
      name,
      help,
      labelNames: ['state'],
      registers,
      collect() {
        if (!read) return;
        const q = read();
        this.set({ state: 'active' }, q.active);
        this.set({ state: 'queued' }, q.queued);
      },
    });
  queueGauge('pvai_sandbox_queue', 'Code executions running (active) and waiting (queued).', sources.sandbox);
  queueGauge(
    'pvai_local_engine_queue',
    'Local-engine requests holding a sequence (active) and waiting for one (queued).',
    sources.localEngine,
  );
  const promptTokens = sources.localPromptTokens;
  const promptTokensSeen = { reused: 0, evaluated: 0 };
  new Counter({
    name: 'pvai_local_engine_prompt_tokens_total',
    help: "Prompt tokens on the local engine: reused from a sequence's cache (a prefix an earlier request left), or evaluated.",
    labelNames: ['kind'],
    registers,
    collect() {
      const now = promptTokens?.() ?? promptTokensSeen;
      for (const kind of ['reused', 'evaluated'] as const) {
        this.inc({ kind }, now[kind] - promptTokensSeen[kind]);
        promptTokensSeen[kind] = now[kind];
      }
    },
  });
}
