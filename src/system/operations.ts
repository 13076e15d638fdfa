import { loadContract } from './document.js';
import type { OperationHandlers } from './handler.js';
import { json } from './handler.js';
import type { Services } from './services.js';

/** A check of one dependency for /z1/health/ready and `pvai doctor`. */
export interface DependencyCheck {
  ok: boolean;
  detail: string;
}

export async function checkDatabase(services: Pick<Services, 'db'>): Promise<DependencyCheck> {
  try {
    await services.db.query('SELECT 1 AS ok');
    return { ok: true, detail: services.db.describe };
  } catch (err) {
    return { ok: false, detail: `${services.db.describe}: ${(err as Error).message}` };
  }
}

const REFERENCE_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>pvai API reference</title>
<link rel="stylesheet" href="/docs/assets/swagger-ui.css">
</head>
<body>
<div id="reference"></div>
<script src="/docs/assets/swagger-ui-bundle.js"></script>
<script>window.ui = SwaggerUIBundle({ url: '/openapi.json', dom_id: '#reference' });</script>
</body>
</html>
`;

/** A sandbox health check runs Python once, so its result is kept for a while. */
const SANDBOX_HEALTH_TTL_MS = 30_000;

export function systemHandlers(services: Services): OperationHandlers {
  const contract = loadContract();
  let sandboxChecked: { at: number; result: Promise<DependencyCheck> } | undefined;
  const sandboxHealth = () => {
    const now = Date.now();
    if (!sandboxChecked || now - sandboxChecked.at > SANDBOX_HEALTH_TTL_MS) {
      sandboxChecked = { at: now, result: services.sandbox.health() };
    }
    return sandboxChecked.result;
  };
  return {
    getHealth: (_c, ctx) => json(ctx, 200, { status: 'ok', version: contract.version }),
    getReadiness: async (_c, ctx) => {
      const [database, sandbox] = await Promise.all([checkDatabase(services), sandboxHealth()]);
      const checks = { database, local_model: services.chat.localModelStatus(), sandbox };
      // The sandbox is reported but not required: chat and everything else work without it.
      const ready = database.ok && checks.local_model.ok;
      json(ctx, ready ? 200 : 503, { status: ready ? 'ready' : 'not_ready', checks });
    },
    getOpenApiJson: (_c, ctx) => {
      ctx.type = 'application/json';
      ctx.body = contract.json;
    },
    getOpenApiYaml: (_c, ctx) => {
      ctx.type = 'application/yaml';
      ctx.body = contract.yaml;
    },
    getApiReference: (_c, ctx) => {
      ctx.type = 'text/html';
      ctx.body = REFERENCE_PAGE;
    },
  };
}
