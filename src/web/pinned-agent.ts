import { Agent } from 'undici';
import type { CheckedTarget } from './guard.js';

/**
 * A dispatcher that connects to the checked address only: no second DNS answer can move the connection.
 * The TLS server name and the Host header stay the URL's host, so certificates are checked against it.
 */
export function pinnedAgent(target: CheckedTarget, ca: string | Buffer | undefined): Agent {
  const { address, family } = target;
  return new Agent({
    connections: 1,
    pipelining: 0,
    connect: {
      ...(ca ? { ca } : {}),
      lookup: ((_host: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
        if (options?.all) callback(null, [{ address, family }]);
        else callback(null, address, family);
      }) as never,
    },
  });
}
