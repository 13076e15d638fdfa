import type { TargetConfig } from '../config/index.js';
import type { Target } from './router.js';

/**
 * The configured routes as the router takes them: each model's targets in order, an upstream's key read from
 * the environment variable its `apiKeyEnv` names when the configuration holds no key itself (so keys stay out
 * of configuration files).
 */
export function routeTargets(
  routing: Readonly<Record<string, readonly TargetConfig[]>>,
  env: NodeJS.ProcessEnv,
): Record<string, Target[]> {
  return Object.fromEntries(
    Object.entries(routing).map(([model, targets]) => [model, targets.map((target) => toTarget(target, env))]),
  );
}

function toTarget(target: TargetConfig, env: NodeJS.ProcessEnv): Target {
  if (target.provider === 'local') return { ...target };
  const { apiKeyEnv, ...rest } = target;
  const apiKey = rest.apiKey ?? (apiKeyEnv ? env[apiKeyEnv] : undefined);
  return { ...rest, ...(apiKey ? { apiKey } : {}) };
}
