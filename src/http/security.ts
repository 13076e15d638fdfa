import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import type { Context as OpenApiContext } from 'openapi-backend';
import { AppError, engineAwayError, engineAwayOf } from '../errors/index.js';
import { type Principal, secretsEqual } from '../kernel/index.js';
import { setHeaders } from './headers.js';
import type { HttpPorts } from './ports.js';
import type { AppContext } from './types.js';

function header(c: OpenApiContext, name: string): string | undefined {
  const value = c.request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

const BEARER = /^Bearer\s+(\S+)\s*$/i;

function bearerToken(c: OpenApiContext): string | undefined {
  return BEARER.exec(header(c, 'authorization') ?? '')?.[1];
}

/**
 * One credential per request. The contract offers two ways of presenting an API key (Authorization:
 * Bearer and X-API-Key) and accepts either; a request carrying two different credentials (the two
 * headers with different keys, a header repeated with different values, a valid Bearer beside a wrong
 * X-API-Key) is refused with 400 `AMBIGUOUS_CREDENTIALS` before any is checked, as RFC 6750 §3.1 does
 * for a token sent more than one way: which key was meant cannot be known, and taking whichever works
 * would charge a request to an account its client may not have meant (a stale key left in one header by
 * a proxy or an SDK). The same key sent both ways is one credential and passes. Empty header values
 * count as absent.
 */
export function refuseAmbiguousCredentials(req: IncomingMessage): void {
  // Read off rawHeaders, every occurrence as sent (`headers` keeps one Authorization): no per-request
  // copy of every header as an array (`headersDistinct`) and no sets.
  const raw = req.rawHeaders;
  let first: string | undefined;
  let ambiguous = false;
  let authorization = false;
  let apiKey = false;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const carrier = credentialCarrier(raw[i] as string);
    if (!carrier) continue;
    const value = (raw[i + 1] as string).trim();
    if (value === '') continue;
    if (carrier === 'authorization') authorization = true;
    else apiKey = true;
    const credential = carrier === 'authorization' ? (BEARER.exec(value)?.[1] ?? value) : value;
    if (first === undefined) first = credential;
    else if (credential !== first) ambiguous = true;
  }
  if (!ambiguous) return;
  throw new AppError(
    'AMBIGUOUS_CREDENTIALS',
    'The request carries more than one credential; send one key, in Authorization: Bearer or in X-API-Key',
    { headers: [...(authorization ? ['authorization'] : []), ...(apiKey ? ['x-api-key'] : [])] },
  );
}

/** `authorization` or `x-api-key` when a raw header name is one of them (any case), else undefined. */
function credentialCarrier(name: string): 'authorization' | 'x-api-key' | undefined {
  if (name.length === 13 && name.toLowerCase() === 'authorization') return 'authorization';
  if (name.length === 9 && name.toLowerCase() === 'x-api-key') return 'x-api-key';
  return undefined;
}

/** After routing: an operation behind a key refuses a request carrying two (refuseAmbiguousCredentials). */
export function oneCredential(c: OpenApiContext, ctx: AppContext): void {
  // Before the security handlers: an ambiguous request is refused whichever of its keys would pass.
  if ((c.operation?.security ?? []).length > 0) refuseAmbiguousCredentials(ctx.req);
}

/**
 * The key a request outside the contract's routing presents (a WebSocket upgrade), once
 * refuseAmbiguousCredentials has passed it: Authorization's Bearer token, else X-API-Key, as the two
 * security handlers below read them.
 */
export function presentedKey(headers: IncomingHttpHeaders): string | undefined {
  const bearer = BEARER.exec(headers.authorization ?? '')?.[1];
  if (bearer !== undefined) return bearer;
  const apiKey = headers['x-api-key'];
  return (Array.isArray(apiKey) ? apiKey[0] : apiKey)?.trim() || undefined;
}

/** A key that is missing or refused: 401, or the product's refusal (429) for an address that keeps failing. */
export async function keyRefusal(ports: Pick<HttpPorts, 'authenticationFailed'>, address: string): Promise<AppError> {
  const refusal = await ports.authenticationFailed(address);
  return refusal ?? new AppError('UNAUTHORIZED', 'Invalid or missing API key');
}

const orFalse = (principal: Principal | undefined): Principal | false => principal ?? false;

/** openapi-backend security handlers, one per scheme of the document. */
export function securityHandlers(ports: HttpPorts) {
  // No async frame: the scheme a request does not use (most carry one key) answers false at once.
  const authenticate = (secret: string | undefined): Promise<Principal | false> | false =>
    secret === undefined ? false : ports.authenticate(secret).then(orFalse);
  return {
    BearerAuth: (c: OpenApiContext) => authenticate(bearerToken(c)),
    ApiKeyHeader: (c: OpenApiContext) => authenticate(header(c, 'x-api-key')?.trim()),
    AdminToken: (c: OpenApiContext) => {
      const expected = ports.adminToken;
      const given = bearerToken(c);
      return expected !== undefined && given !== undefined && secretsEqual(given, expected);
    },
  };
}

function usesAdminToken(c: OpenApiContext): boolean {
  return (c.operation.security ?? []).some((requirement) => 'AdminToken' in requirement);
}

/** Missing or wrong credentials: 401, or the product's refusal (429) for an address that keeps failing. */
export function unauthorizedHandler(ports: HttpPorts) {
  return async (c: OpenApiContext, ctx: AppContext): Promise<never> => {
    if (usesAdminToken(c) && ports.adminToken === undefined) {
      throw new AppError('SERVICE_UNAVAILABLE', 'The admin API is disabled; set PVAI_ADMIN_TOKEN to enable it');
    }
    // A key whose lookup could not be made is not a wrong key: 503, so that clients retry instead of giving up
    // on a valid key (the SDKs never retry a 401), and no failed attempt is counted against the address.
    for (const result of Object.values(c.security ?? {})) {
      const error = (result as { error?: unknown } | undefined)?.error;
      const engine = engineAwayOf(error);
      if (engine) throw engineAwayError(engine, error);
      // A key refused for a reason of its own (expired): its specific 401, not the generic one.
      if (error instanceof AppError && error.status === 401) throw error;
    }
    const refusal = await keyRefusal(ports, ctx.ip);
    if (refusal.code === 'UNAUTHORIZED' && usesAdminToken(c)) {
      throw new AppError('UNAUTHORIZED', 'Invalid or missing admin token');
    }
    throw refusal;
  };
}

/**
 * Runs after authentication and before validation: every authenticated request counts against the
 * account's limits (a rejected one does not), and every authenticated response carries the headers.
 */
export function postSecurityHandler(ports: HttpPorts) {
  return async (c: OpenApiContext, ctx: AppContext): Promise<void> => {
    if (!c.security?.authorized) return;
    const principal = (c.security.BearerAuth || c.security.ApiKeyHeader) as Principal | undefined;
    if (!principal || typeof principal !== 'object' || !('account' in principal)) return;
    ctx.state.principal = principal;
    const admission = await ports.admit(principal);
    setHeaders(ctx, admission.headers);
    if (admission.refusal) throw admission.refusal;
  };
}
