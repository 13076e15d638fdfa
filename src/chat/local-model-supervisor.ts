import type { Logger } from 'pino';
import type { Config, TargetConfig } from '../config/index.js';
import {
  createProgressPrinter,
  downloadModel,
  type LocalChatProvider,
  type ProviderFactories,
} from '../providers/index.js';
import { downloadPath, type LocalModelLocation, locateLocalModel } from './local-model.js';

export interface LocalModelStatus {
  ok: boolean;
  detail: string;
}

/** Targets without a modelPath run on the service's own local model. */
const onServiceModel = (t: TargetConfig) => t.provider === 'local' && !t.modelPath;

/**
 * The service's own local model: where it is, fetching it when PVAI_LOCAL_MODEL is a URL, loading it
 * once at start, and why a model routed only to it cannot be served yet.
 */
export class LocalModelSupervisor {
  readonly #config: Config;
  readonly #logger: Logger;
  #location: LocalModelLocation;
  #loaded: LocalChatProvider | undefined;
  #loadError: string | undefined;

  constructor(config: Config, logger: Logger) {
    this.#config = config;
    this.#logger = logger;
    this.#location = locateLocalModel(config);
  }

  /** The GGUF the local engine loads (a placeholder name while there is none: loading then fails clearly). */
  get modelPath(): string {
    return this.#location.path ?? 'missing-local-model.gguf';
  }

  /** The GGUF of the service's local model, undefined while there is none to load (`/z1/models` says so). */
  get presentPath(): string | undefined {
    return this.#location.problem ? undefined : this.#location.path;
  }

  get #used(): boolean {
    return Object.values(this.#config.routing).some((targets) => targets.some(onServiceModel));
  }

  /**
   * Loads the model now through the router's provider factories (the local engine they make resolves its
   * path from `modelPath`), or starts fetching it; resolves once loaded (or failed), not after a download.
   */
  async start(factories: ProviderFactories): Promise<void> {
    const url = this.#location.downloadFrom;
    if (!url) return this.#warmUp(factories);
    const printer = createProgressPrinter();
    downloadModel(url, downloadPath(this.#config, url), { onProgress: (p) => printer.update(p) })
      .then(async () => {
        printer.done();
        this.#location = locateLocalModel(this.#config);
        await this.#warmUp(factories);
      })
      .catch((err: Error) => {
        this.#location = { problem: `Downloading the local model from ${url} failed: ${err.message}` };
      });
  }

  async #warmUp(factories: ProviderFactories): Promise<void> {
    if (!this.#location.path || !this.#used) return;
    try {
      const provider = factories.local({ provider: 'local', model: 'local' }) as LocalChatProvider;
      await provider.load();
      this.#loaded = provider;
      this.#logger.info({ model: this.#location.path }, 'local model loaded');
    } catch (err) {
      this.#loadError = (err as Error).message;
      this.#logger.error({ err, model: this.#location.path }, 'local model failed to load');
    }
  }

  /** Why `model` cannot be served now: it routes only to the service's model, and that is missing or broken. */
  unavailableReason(model: string): string | undefined {
    const onlyLocal = (this.#config.routing[model] ?? []).every(onServiceModel);
    return onlyLocal ? (this.#location.problem ?? this.#loadError) : undefined;
  }

  /** Readiness of the local engine (when any model routes to it). */
  status(): LocalModelStatus {
    if (!this.#used) return { ok: true, detail: 'no model routes to the local engine' };
    if (this.#location.problem) return { ok: false, detail: this.#location.problem };
    if (this.#loadError) return { ok: false, detail: this.#loadError };
    const path = this.#location.path;
    return { ok: true, detail: this.#loaded ? `loaded ${path}` : `available ${path}` };
  }
}
