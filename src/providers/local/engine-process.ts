import type { ChildProcess } from 'node:child_process';
import { forkModule, SlotList, siblingModule } from '../../kernel/index.js';
import { ProviderError } from '../types.js';
import { EngineCall, type EngineLink } from './engine-call.js';
import type { FromEngine, ToEngine } from './engine-protocol.js';
import type { LocalEngineSettings } from './local-engine.js';

const ENTRY = siblingModule(import.meta.url, 'engine-process-main');

/** A call's first message (load, stream, generate, close) before it is numbered. */
type CallStart =
  Extract<ToEngine, { call: number }> extends infer M
    ? M extends { t: 'abort' | 'credit' }
      ? never
      : Omit<M, 'call'>
    : never;

/** What the engine reports besides its calls' parts: its queue on each change, and each prompt's tokens. */
export interface EngineListener {
  queue(active: number, queued: number): void;
  prompt(reused: number, evaluated: number): void;
}

/**
 * One local model in a process of its own (running `engine-process-main.ts`), where it loads and generates.
 *
 * Why a process: node-llama-cpp runs each decode on whichever thread of libuv's pool is free, and llama.cpp keeps
 * a team of CPU threads for each thread that calls it, so with two or more threads per evaluation the decodes
 * hopped between teams and ran at half speed (measured in docs/benchmarks.md). A pool of one thread cures that,
 * but the pool is process-wide: in the server it would queue file, DNS, crypto and embedding work behind every
 * decode. So the model gets a process, whose pool is one thread when it evaluates with more than one. Also: its
 * per-token garbage lives and dies in that process's heap, not the server's, and a crash in llama.cpp ends that
 * process, not the server (the next request starts another).
 *
 * The process ignores SIGINT and SIGTERM, so that a server draining on either still finishes its local streams,
 * and exits when the server closes the channel to it, or dies. It does not keep the server alive while idle.
 */
export class EngineProcess implements EngineLink {
  readonly #child: ChildProcess;
  readonly #calls = new SlotList<EngineCall>();
  #alive = true;

  constructor(
    settings: LocalEngineSettings,
    private readonly listener: EngineListener,
  ) {
    this.#child = forkModule(ENTRY, { ...poolFor(settings.threads ?? 1), PVAI_ENGINE_PROCESS: '1' });
    this.#child.on('message', (message: FromEngine) => this.#receive(message));
    this.#child.on('error', (err: Error) => this.#stopped(err.message));
    this.#child.on('exit', (code, signal) =>
      this.#stopped(signal ? `was killed by ${signal}` : `exited with code ${code}`),
    );
    this.#child.unref();
    this.#idle(true);
    this.#send({ t: 'open', settings });
  }

  get alive(): boolean {
    return this.#alive;
  }

  start(message: CallStart): EngineCall {
    const call = new EngineCall(this);
    call.number = this.#calls.add(call);
    if (this.#calls.size === 1) this.#idle(false); // a call in flight keeps the server alive
    if (this.#alive) this.#send({ ...message, call: call.number } as ToEngine);
    else this.#finish(call, stoppedError('is not running'));
    return call;
  }

  post(message: { t: 'abort'; call: number } | { t: 'credit'; call: number; parts: number }): void {
    this.#send(message);
  }

  /** Lets the process go: it exits once it has read what was sent before. */
  release(): void {
    if (this.#child.connected) this.#child.disconnect();
  }

  #send(message: ToEngine): void {
    if (this.#alive && this.#child.connected) this.#child.send(message);
  }

  #receive(message: FromEngine): void {
    switch (message.t) {
      case 'queue':
        this.listener.queue(message.active, message.queued);
        return;
      case 'prompt':
        this.listener.prompt(message.reused, message.evaluated);
        return;
      default: {
        const call = this.#calls.get(message.call);
        if (!call) return;
        call.receive(message);
        if (message.t === 'end') this.#release(message.call);
      }
    }
  }

  #finish(call: EngineCall, error: Error): void {
    call.end(error);
    this.#release(call.number);
  }

  #release(number: number): void {
    this.#calls.delete(number);
    if (this.#calls.size === 0) this.#idle(true);
  }

  /** An idle engine's channel does not hold the server's event loop open; a busy one does. */
  #idle(idle: boolean): void {
    const channel = this.#child.channel;
    if (!channel) return;
    if (idle) channel.unref();
    else channel.ref();
  }

  #stopped(why: string): void {
    if (!this.#alive) return;
    this.#alive = false;
    this.listener.queue(0, 0);
    for (const call of [...this.#calls]) this.#finish(call, stoppedError(why));
  }
}

/**
 * With two or more threads an evaluation, one pool thread, so that llama.cpp keeps one team of them. With one, the
 * default pool: there is no team to keep, and sampling overlaps the next decode's set-up (measured with bench:chat's
 * local rows: 0.95-0.96 of node-llama-cpp directly with the default pool, 0.91-0.93 with one thread).
 */
function poolFor(threads: number): Record<string, string> {
  return threads > 1 ? { UV_THREADPOOL_SIZE: '1' } : {};
}

function stoppedError(why: string): ProviderError {
  return new ProviderError('upstream', `the local engine process ${why}`, { retryable: true });
}
