import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { ROOT } from './processes.js';

/** The parts of a compose service that the topology test reads (aliases resolved by the parser). */
export interface ComposeService {
  image?: string;
  environment?: Record<string, string | number | boolean | null>;
  healthcheck?: { test?: string[] | string };
  stop_grace_period?: string;
  volumes?: string[];
  depends_on?: Record<string, { condition: string }>;
  profiles?: string[];
}

interface ComposeFile {
  services: Record<string, ComposeService>;
}

const COMPOSE_FILE = join(ROOT, 'deploy', 'compose.yaml');

export function readComposeFile(path = COMPOSE_FILE): ComposeFile {
  return parse(readFileSync(path, 'utf8')) as ComposeFile;
}

/**
 * Compose's interpolation of one value, as `docker compose` does it: `$$` is a `$`; `${VAR}` and `$VAR` the
 * variable or empty; `${VAR:-default}` the default when unset or empty (`-` when unset); `${VAR:?message}` an
 * error when unset or empty (`?` when unset).
 */
export function interpolate(value: string, vars: Record<string, string | undefined>): string {
  return value.replace(
    /\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?])([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)/g,
    (whole, braced?: string, operator?: string, argument?: string, bare?: string) => {
      if (whole === '$$') return '$';
      const name = braced ?? bare ?? '';
      const set = vars[name];
      const missing = operator?.startsWith(':') ? !set : set === undefined;
      if (operator?.endsWith('?') && missing) throw new Error(`required variable ${name} is missing: ${argument}`);
      if (operator?.endsWith('-') && missing) return argument ?? '';
      return set ?? '';
    },
  );
}

/** A service's environment with every value interpolated (null, as compose does, leaves the variable out). */
export function serviceEnvironment(service: ComposeService, vars: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(service.environment ?? {})) {
    if (value === null) continue;
    env[name] = interpolate(String(value), vars);
  }
  return env;
}

/** Compose durations as `stop_grace_period` takes them (`10s`, `1m30s`, `500ms`), in milliseconds. */
export function durationMs(duration: string): number {
  const units: Record<string, number> = { h: 3_600_000, m: 60_000, s: 1000, ms: 1, us: 0.001 };
  let total = 0;
  const rest = duration.replace(/(\d+(?:\.\d+)?)(ms|us|h|m|s)/g, (_, amount: string, unit: string) => {
    total += Number(amount) * (units[unit] ?? Number.NaN);
    return '';
  });
  if (rest !== '' || Number.isNaN(total)) throw new Error(`not a compose duration: ${duration}`);
  return total;
}

/**
 * The URLs a service's health check asks (its `test` command's arguments), with the container's address
 * rewritten to where the process listens here.
 */
export function healthCheckUrls(service: ComposeService, containerPort: number, hostUrl: string): string[] {
  const test = service.healthcheck?.test;
  const words = Array.isArray(test) ? test : [test ?? ''];
  const urls = words.flatMap((word) => word.match(/https?:\/\/[^'"\s)]+/g) ?? []);
  return urls.map((url) => {
    const parsed = new URL(url);
    if (Number(parsed.port) !== containerPort) throw new Error(`${url} is not the service's port ${containerPort}`);
    return `${hostUrl}${parsed.pathname}${parsed.search}`;
  });
}

/**
 * Rewrites `scheme://…@host:port` and `scheme://host:port` addresses of other services (their compose hostnames
 * and container ports) to where their processes listen on this machine.
 */
export function mapServiceAddresses(value: string, services: Record<string, Record<number, string>>): string {
  return value.replace(/(\w+:\/\/(?:[^@/\s]*@)?)([a-z0-9-]+):(\d+)/gi, (whole, prefix: string, host: string, port) => {
    const mapped = services[host]?.[Number(port)];
    return mapped ? `${prefix}${mapped}` : whole;
  });
}
