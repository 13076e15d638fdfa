import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { untilAborted } from '../kernel/index.js';
import { Allowlist, effectivePort, nonPublicReason } from './address-policy.js';

interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Every address a host name resolves to (tests inject a stub). */
export type Resolver = (hostname: string, signal?: AbortSignal) => Promise<ResolvedAddress[]>;

const systemResolver: Resolver = async (hostname) => {
  const answers = await lookup(hostname, { all: true, verbatim: true });
  return answers.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
};

/** A URL that passed the policy, with the one address the connection must go to. */
export interface CheckedTarget {
  url: URL;
  address: string;
  family: 4 | 6;
}

/** A URL the policy refuses; nothing was sent to it. */
export class BlockedUrlError extends Error {
  constructor(
    readonly url: string,
    reason: string,
  ) {
    super(`refused to fetch ${url}: ${reason}`);
    this.name = 'BlockedUrlError';
  }
}

const STANDARD_PORTS = new Set([80, 443]);

export interface FetchGuardOptions {
  /** Origins and CIDRs allowed although not public (PVAI_WEB_FETCH_ALLOW). */
  allow?: readonly string[];
  /** Ports allowed besides 80 and 443 (an allowlisted origin's own port is always allowed). */
  allowPorts?: readonly number[];
  /** Every port allowed (MCP servers listen where they like); the address policy still applies. */
  anyPort?: boolean;
  resolve?: Resolver;
}

/**
 * The SSRF policy of page fetching. The URL is parsed once (WHATWG `URL`, the same object the fetcher
 * then uses: `http://2130706433/`, `http://0177.0.0.1/` and `http://[::ffff:7f00:1]/` are all seen as
 * the loopback address they are), its host is resolved once, every address of the answer is checked
 * (one bad address refuses the URL: DNS answers mixing public and private addresses are a rebinding
 * tool), and the caller connects to the checked address only (`CheckedTarget.address`), never
 * resolving again. Redirects are the caller's to follow, each hop through `check` again.
 */
export class FetchGuard {
  readonly #allow: Allowlist;
  readonly #resolve: Resolver;
  readonly #ports: ReadonlySet<number>;
  readonly #anyPort: boolean;

  constructor(options: FetchGuardOptions = {}) {
    this.#allow = new Allowlist(options.allow ?? []);
    this.#anyPort = options.anyPort === true;
    this.#ports = new Set([...STANDARD_PORTS, ...(options.allowPorts ?? [])]);
    this.#resolve = options.resolve ?? systemResolver;
  }

  async check(raw: string | URL, base?: URL, signal?: AbortSignal): Promise<CheckedTarget> {
    let url: URL;
    try {
      url = new URL(raw, base);
    } catch {
      throw new BlockedUrlError(String(raw), 'not a valid URL');
    }
    const shown = url.href;
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new BlockedUrlError(shown, `scheme ${url.protocol} is not http or https`);
    }
    if (url.username || url.password) throw new BlockedUrlError(shown, 'URLs with credentials are not fetched');
    const originAllowed = this.#allow.allowsOrigin(url);
    const port = effectivePort(url);
    if (!originAllowed && !this.#anyPort && !this.#ports.has(port)) {
      throw new BlockedUrlError(shown, `port ${port} is not an allowed port (80, 443 or allowlisted)`);
    }
    const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
    let addresses: ResolvedAddress[];
    const literal = isIP(host);
    if (literal !== 0) {
      addresses = [{ address: host, family: literal === 6 ? 6 : 4 }];
    } else {
      try {
        // getaddrinfo cannot be cancelled: the wait for it ends with the caller's budget all the same.
        addresses = await untilAborted(this.#resolve(host, signal), signal);
      } catch (err) {
        if (signal?.aborted) throw signal.reason;
        throw new BlockedUrlError(shown, `its host does not resolve (${(err as Error).message})`);
      }
      if (addresses.length === 0) throw new BlockedUrlError(shown, 'its host resolves to no address');
    }
    if (!originAllowed) {
      for (const { address } of addresses) {
        const reason = nonPublicReason(address);
        if (reason && !this.#allow.allowsAddress(address)) {
          throw new BlockedUrlError(shown, `${host} is ${address}, a ${reason} address`);
        }
      }
    }
    const first = addresses[0] as ResolvedAddress;
    return { url, address: first.address, family: first.family };
  }
}
