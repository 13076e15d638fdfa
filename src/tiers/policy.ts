import { AppError } from '../errors/index.js';
import type { Account, Tier } from '../kernel/index.js';
import { ModelNames } from './model-names.js';
import type { TierRules } from './rules.js';

/** Features a tier may or may not have, beyond models and numeric limits. */
export type TierFeature = 'sla';

/**
 * Every tier rule of docs/decisions.md in one place: which models a tier may call, the largest
 * rag_k, the code-execution timeout, the rate limits and which features it has. Capabilities ask
 * this policy; none of them reads the tier table itself.
 */
export class TierPolicy {
  readonly #rules: Readonly<Record<Tier, TierRules>>;
  /** The names a request may give a model (ids and aliases): every rule here is of the PV model they resolve to. */
  readonly names: ModelNames;

  constructor(rules: Readonly<Record<Tier, TierRules>>, names: ModelNames = new ModelNames()) {
    this.#rules = rules;
    this.names = names;
  }

  rulesFor(account: Pick<Account, 'tier'>): TierRules {
    return this.#rules[account.tier];
  }

  allowsModel(account: Pick<Account, 'tier'>, model: string): boolean {
    return this.rulesFor(account).models.includes(model);
  }

  /** 403 MODEL_NOT_ALLOWED for a model outside the tier. */
  checkModel(account: Pick<Account, 'tier'>, model: string): void {
    if (this.allowsModel(account, model)) return;
    throw new AppError('MODEL_NOT_ALLOWED', `The ${account.tier} tier cannot use ${model}`, {
      model,
      tier: account.tier,
      allowed: this.rulesFor(account).models,
    });
  }

  /**
   * 400 RAG_K_EXCEEDS_TIER when a number of retrieved items is above the tier's maximum: chat's `rag_k`, and
   * the `k` of the document and memory searches (`field`), so no endpoint retrieves more than chat may.
   */
  checkRagK(account: Pick<Account, 'tier'>, ragK: number | undefined, field = 'rag_k'): void {
    const max = this.rulesFor(account).maxRagK;
    if (ragK === undefined || ragK <= max) return;
    throw new AppError('RAG_K_EXCEEDS_TIER', `${field} is at most ${max} on the ${account.tier} tier`, {
      field,
      max,
    });
  }

  /** The code-execution timeout in seconds: omitted → the tier's default; above its maximum → 400. */
  codeTimeout(account: Pick<Account, 'tier'>, requested: number | undefined): number {
    const rules = this.rulesFor(account);
    if (requested === undefined) return rules.codeTimeoutDefaultSeconds;
    if (requested > rules.codeTimeoutMaxSeconds) {
      throw new AppError('TIMEOUT_EXCEEDS_TIER', `timeout is at most ${rules.codeTimeoutMaxSeconds} s on this tier`, {
        field: 'timeout',
        max: rules.codeTimeoutMaxSeconds,
      });
    }
    return requested;
  }

  /** The tier's SLA targets: availability at least `availability`, p95 latency at most `latencyMs`. */
  slaTargets(account: Pick<Account, 'tier'>): { availability: number; latencyMs: number } {
    const rules = this.rulesFor(account);
    return { availability: rules.slaAvailabilityTarget, latencyMs: rules.slaLatencyTargetMs };
  }

  /** 403 FEATURE_NOT_ALLOWED for a feature outside the tier. */
  requireFeature(account: Pick<Account, 'tier'>, feature: TierFeature): void {
    const has = feature === 'sla' && this.rulesFor(account).slaEndpoint;
    if (has) return;
    const names: Record<TierFeature, string> = { sla: 'SLA monitoring' };
    throw new AppError('FEATURE_NOT_ALLOWED', `${names[feature]} is not part of the ${account.tier} tier`, {
      feature,
      tier: account.tier,
    });
  }
}
