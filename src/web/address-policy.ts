import { BlockList, isIP } from 'node:net';

/**
 * Addresses a page fetch never connects to unless the operator allowlisted them: everything that is
 * not the public internet. Each range is written out here (no list fetched or inferred), one entry a
 * reason, so a refusal can say why.
 */
const BLOCKED: ReadonlyArray<[string, number, 'ipv4' | 'ipv6', string]> = [
  ['0.0.0.0', 8, 'ipv4', 'unspecified / "this network"'],
  ['10.0.0.0', 8, 'ipv4', 'private'],
  ['100.64.0.0', 10, 'ipv4', 'carrier-grade NAT (shared address space)'],
  ['127.0.0.0', 8, 'ipv4', 'loopback'],
  ['169.254.0.0', 16, 'ipv4', 'link-local (cloud metadata lives at 169.254.169.254)'],
  ['172.16.0.0', 12, 'ipv4', 'private'],
  ['192.0.0.0', 24, 'ipv4', 'IETF protocol assignments'],
  ['192.0.2.0', 24, 'ipv4', 'documentation'],
  ['192.88.99.0', 24, 'ipv4', '6to4 relay anycast'],
  ['192.168.0.0', 16, 'ipv4', 'private'],
  ['198.18.0.0', 15, 'ipv4', 'benchmarking'],
  ['198.51.100.0', 24, 'ipv4', 'documentation'],
  ['203.0.113.0', 24, 'ipv4', 'documentation'],
  ['224.0.0.0', 4, 'ipv4', 'multicast'],
  ['240.0.0.0', 4, 'ipv4', 'reserved and broadcast'],
  ['::', 128, 'ipv6', 'unspecified'],
  ['::1', 128, 'ipv6', 'loopback'],
  ['::', 96, 'ipv6', 'IPv4-compatible IPv6 (deprecated, embeds an IPv4 address)'],
  ['::ffff:0:0', 96, 'ipv6', 'IPv4-mapped IPv6 (embeds an IPv4 address)'],
  ['64:ff9b::', 96, 'ipv6', 'NAT64 (embeds an IPv4 address)'],
  ['64:ff9b:1::', 48, 'ipv6', 'local-use NAT64'],
  ['100::', 64, 'ipv6', 'discard-only'],
  ['2001::', 32, 'ipv6', 'Teredo (embeds an IPv4 address)'],
  ['2001:db8::', 32, 'ipv6', 'documentation'],
  ['2002::', 16, 'ipv6', '6to4 (embeds an IPv4 address)'],
  ['fc00::', 7, 'ipv6', 'unique local (ULA; AWS metadata fd00:ec2::254)'],
  ['fe80::', 10, 'ipv6', 'link-local'],
  ['fec0::', 10, 'ipv6', 'site-local (deprecated)'],
  ['ff00::', 8, 'ipv6', 'multicast'],
];

const lists = BLOCKED.map(([net, prefix, type, reason]) => {
  const list = new BlockList();
  list.addSubnet(net, prefix, type);
  return { list, type, reason };
});

/** Why an IP address is not on the public internet, or undefined when it is. Not an IP: refused too. */
export function nonPublicReason(address: string): string | undefined {
  const family = isIP(address);
  if (family === 0) return 'not an IP address';
  const type = family === 4 ? 'ipv4' : 'ipv6';
  for (const entry of lists) {
    if (entry.type === type && entry.list.check(address, type)) return entry.reason;
  }
  return undefined;
}

/**
 * The operator's exceptions (PVAI_WEB_FETCH_ALLOW): exact origins (`http://127.0.0.1:8089`: that scheme,
 * host and port only, whatever it resolves to) and CIDRs or single addresses (`10.1.0.0/16`: those
 * addresses, on the ordinary ports 80 and 443).
 */
export class Allowlist {
  readonly #origins = new Set<string>();
  readonly #ports = new Set<number>();
  readonly #cidrs = new BlockList();

  constructor(entries: readonly string[]) {
    for (const raw of entries) {
      const entry = raw.trim();
      if (!entry) continue;
      if (/^https?:\/\//i.test(entry)) {
        const url = new URL(entry);
        if (url.pathname !== '/' || url.search || url.username || url.password) {
          throw new Error(`web fetch allowlist: ${entry} must be an origin (scheme://host[:port]) without a path`);
        }
        this.#origins.add(url.origin);
        this.#ports.add(effectivePort(url));
        continue;
      }
      const [address, prefixText] = entry.split('/');
      const family = isIP(address ?? '');
      const max = family === 4 ? 32 : 128;
      const prefix = prefixText === undefined ? max : Number(prefixText);
      if (family === 0 || !Number.isInteger(prefix) || prefix < 0 || prefix > max) {
        throw new Error(`web fetch allowlist: ${entry} is neither an origin nor a CIDR`);
      }
      this.#cidrs.addSubnet(address as string, prefix, family === 4 ? 'ipv4' : 'ipv6');
    }
  }

  allowsOrigin(url: URL): boolean {
    return this.#origins.has(url.origin);
  }

  allowsAddress(address: string): boolean {
    const family = isIP(address);
    return family !== 0 && this.#cidrs.check(address, family === 4 ? 'ipv4' : 'ipv6');
  }
}

export function effectivePort(url: URL): number {
  if (url.port) return Number(url.port);
  return url.protocol === 'https:' ? 443 : 80;
}
