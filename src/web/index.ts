/** Web grounding: search providers, the SSRF-guarded page fetcher, and the chat's `web` context source. */
export { Allowlist, nonPublicReason } from './address-policy.js';
export { DEFAULT_FETCH_LIMITS, type FetchedPage, type FetchLimits, PageFetcher, type PageKind } from './fetcher.js';
export {
  BlockedUrlError,
  type CheckedTarget,
  FetchGuard,
  type FetchGuardOptions,
  type ResolvedAddress,
  type Resolver,
  systemResolver,
} from './guard.js';
