import { isIPv6 } from 'node:net';

const MAPPED_IPV4 = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i;

/**
 * The client an address counts as, for every per-client bound (the connection caps, the authentication and
 * sign-in throttles), so they all agree on who one client is. An IPv4 address is itself (also when a dual-stack socket
 * reports it as `::ffff:a.b.c.d`). An IPv6 address is its /64: one host is usually given a whole /64
 * (SLAAC, privacy addresses), so counting single addresses would let it try 2^64 times as often. Written
 * as `2001:db8:0:1::/64`, whatever the spelling it came in.
 */
export function addressBucket(address: string): string {
  const mapped = MAPPED_IPV4.exec(address);
  if (mapped?.[1]) return mapped[1];
  const bare = address.split('%')[0] ?? address; // without a zone index (fe80::1%eth0)
  if (!isIPv6(bare)) return address;
  const [head = '', tail] = bare.split('::');
  const groups = (part: string) => (part === '' ? [] : part.split(':'));
  // An embedded IPv4 (::ffff:…, 64:ff9b::…) is two groups, always in the low 64 bits.
  const width = (list: string[]) => list.reduce((n, g) => n + (g.includes('.') ? 2 : 1), 0);
  const left = groups(head);
  const right = tail === undefined ? [] : groups(tail);
  const full = [...left, ...Array<string>(8 - width(left) - width(right)).fill('0'), ...right];
  return `${full
    .slice(0, 4)
    .map((g) => Number.parseInt(g, 16).toString(16))
    .join(':')}::/64`;
}
