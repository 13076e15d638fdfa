/**
 * The prefixes a client written for OpenAI (or a probe written for any service) tries first, served as pvai's own:
 * `/v1/…` is `/z1/…` (the openai SDKs' default base URL ends in `/v1`), `/health` is `/z1/health` (load balancers'
 * and orchestrators' usual probe). The same operations, answers and usage rows; the contract documents only `/z1`
 * (docs/decisions.md, "`/v1` and `/health`").
 */
export const SERVED_PREFIXES = [
  { prefix: '/v1', to: '/z1' },
  { prefix: '/health', to: '/z1/health' },
] as const;
