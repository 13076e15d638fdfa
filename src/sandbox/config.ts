import { DEFAULT_SANDBOX_CONFIG, type SandboxConfig } from './types.js';

/** Merges the caller's overrides onto the defaults and rejects values that would make the limits meaningless. */
export function resolveSandboxConfig(overrides: Partial<SandboxConfig> = {}): SandboxConfig {
  const config: SandboxConfig = { ...DEFAULT_SANDBOX_CONFIG };
  // Copy only defined keys so `{ poolSize: undefined }` keeps the default instead of erasing it.
  for (const key of Object.keys(overrides) as (keyof SandboxConfig)[]) {
    const value = overrides[key];
    if (value !== undefined) Object.assign(config, { [key]: value });
  }
  // Derived defaults. One account may hold at most half the slots, so another account always finds one
  // free, and fill at most a quarter of the line, so it takes four busy accounts to turn everyone away.
  if (overrides.maxConcurrentPerAccount === undefined) {
    config.maxConcurrentPerAccount = Math.max(1, Math.floor(config.maxConcurrent / 2));
  }
  if (overrides.maxQueuePerAccount === undefined) config.maxQueuePerAccount = Math.ceil(config.maxQueue / 4);

  requireText(config.bwrapPath, 'bwrapPath');
  requireText(config.pythonPath, 'pythonPath');
  requireInteger(config.poolSize, 'poolSize', 0);
  requireInteger(config.maxConcurrent, 'maxConcurrent', 1);
  requireInteger(config.maxQueue, 'maxQueue', 0);
  requireInteger(config.maxConcurrentPerAccount, 'maxConcurrentPerAccount', 1, config.maxConcurrent);
  requireInteger(config.maxQueuePerAccount, 'maxQueuePerAccount', 0, config.maxQueue);
  requireInteger(config.outputLimitBytes, 'outputLimitBytes', 1);
  // Below ~64 MiB of address space CPython cannot even start.
  requireInteger(config.memoryLimitMb, 'memoryLimitMb', 64);
  requireInteger(config.workDirSizeMb, 'workDirSizeMb', 1);
  // The work dir's root directory is an inode too.
  requireInteger(config.workDirMaxFiles, 'workDirMaxFiles', 2);
  requireInteger(config.maxFileSizeMb, 'maxFileSizeMb', 1);
  // The interpreter itself, plus at least one thread.
  requireInteger(config.maxProcesses, 'maxProcesses', 2);
  // stdin, stdout, stderr, the report channel, and a few for imports.
  requireInteger(config.maxOpenFiles, 'maxOpenFiles', 16);
  return config;
}

function requireText(value: unknown, name: string): void {
  if (typeof value !== 'string' || value.length === 0) {
    throw new TypeError(`sandbox config: ${name} must be a non-empty string`);
  }
}

function requireInteger(value: unknown, name: string, minimum: number, maximum = Number.MAX_SAFE_INTEGER): void {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < minimum || value > maximum) {
    const range = maximum === Number.MAX_SAFE_INTEGER ? `>= ${minimum}` : `between ${minimum} and ${maximum}`;
    throw new RangeError(`sandbox config: ${name} must be an integer ${range}, got ${String(value)}`);
  }
}
