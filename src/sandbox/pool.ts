import type { SandboxProcess } from './sandbox-process.js';

/**
 * Keeps `size` sandboxes started and waiting for code, so a request skips bwrap and interpreter
 * start-up. Each sandbox serves one execution and is then discarded; a replacement starts in the
 * background. A sandbox that dies while waiting is dropped and only replaced on the next `take`,
 * so a broken host does not make the pool respawn in a tight loop.
 */
export class WarmPool {
  private readonly warm: SandboxProcess[] = [];
  private closed = false;

  constructor(
    private readonly size: number,
    private readonly launch: () => SandboxProcess,
  ) {}

  /** A started sandbox if one is warm, else a freshly launched (cold) one. */
  take(): SandboxProcess {
    let sandbox: SandboxProcess | undefined;
    while (sandbox === undefined && this.warm.length > 0) {
      const candidate = this.warm.shift();
      if (candidate?.usable === true) sandbox = candidate;
    }
    // Refill after the caller has written its code: spawning costs CPU the request should get first.
    if (this.size > 0) setImmediate(() => this.fill());
    return sandbox ?? this.launch();
  }

  /** Starts sandboxes until `size` are warm. */
  fill(): void {
    if (this.closed) return;
    this.dropDead();
    while (this.warm.length < this.size) {
      const sandbox = this.launch();
      this.warm.push(sandbox);
      // Drop it as soon as it fails to start, so `take` never hands out a known-dead sandbox.
      sandbox.ready.catch(() => this.dropDead());
    }
  }

  get warmCount(): number {
    this.dropDead();
    return this.warm.length;
  }

  /** Kills every warm sandbox and stops refilling. */
  async close(): Promise<void> {
    this.closed = true;
    const pending = this.warm.splice(0);
    await Promise.all(pending.map((sandbox) => sandbox.dispose()));
  }

  private dropDead(): void {
    for (let index = this.warm.length - 1; index >= 0; index -= 1) {
      if (this.warm[index]?.usable !== true) this.warm.splice(index, 1);
    }
  }
}
