import { locateLocalModel } from '../chat/index.js';
import { loadConfig } from '../config/index.js';
import { createSandbox } from '../sandbox/index.js';
import { checkDatabase, openDb } from '../storage/index.js';
import type { DependencyCheck } from '../system/index.js';

/** Checks every dependency and says what is missing; exit code 1 when a required one fails. */
export async function runDoctor(json: boolean): Promise<number> {
  const checks: Record<string, DependencyCheck> = {};
  const major = Number(process.versions.node.split('.')[0]);
  checks.node = {
    ok: major >= 22,
    detail:
      major >= 22
        ? `node ${process.versions.node}`
        : `node ${process.versions.node}: pvai needs Node.js 22.12 or newer (24 LTS recommended)`,
  };
  try {
    const config = loadConfig();
    checks.config = {
      ok: true,
      detail: config.databaseUrl ? 'DATABASE_URL set (PostgreSQL)' : `embedded SQLite in ${config.dataDir}`,
    };
    checks.admin_api = {
      ok: true,
      detail: config.adminToken ? 'enabled (PVAI_ADMIN_TOKEN set)' : 'disabled: set PVAI_ADMIN_TOKEN to enable /admin',
    };
    try {
      const db = await openDb({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolSize: 1 });
      checks.database = await checkDatabase(db);
      await db.close();
    } catch (err) {
      checks.database = { ok: false, detail: (err as Error).message };
    }
    const model = locateLocalModel(config);
    checks.local_model = model.path
      ? { ok: true, detail: model.path }
      : { ok: false, detail: model.problem ?? 'missing' };
    const sandbox = createSandbox({ ...config.sandbox, poolSize: 0 });
    checks.sandbox = await sandbox.health();
    await sandbox.close();
  } catch (err) {
    checks.config = { ok: false, detail: (err as Error).message };
  }
  const ok = Object.values(checks).every((c) => c.ok);
  if (json) {
    console.log(JSON.stringify({ ok, checks }, null, 2));
  } else {
    for (const [name, check] of Object.entries(checks))
      console.log(`${check.ok ? 'ok  ' : 'FAIL'} ${name}: ${check.detail}`);
  }
  return ok ? 0 : 1;
}
