import { loadContract, type Operations } from '../http/index.js';
import { packageVersion } from './package-version.js';

/** A check of one dependency for /z1/health/ready and `pvai doctor`. */
interface DependencyCheck {
  ok: boolean;
  detail: string;
}

export interface SystemDeps {
  /** The server is stopping: readiness says so before any dependency is asked. */
  draining(): boolean;
  database(): Promise<DependencyCheck>;
  localModel(): DependencyCheck;
  sandbox(): Promise<DependencyCheck>;
  /** Qdrant, when the service uses it (the embedded index is the database). */
  vectorIndex?: () => Promise<DependencyCheck>;
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

type SystemOperationId = 'getHealth' | 'getReadiness' | 'getOpenApiJson' | 'getOpenApiYaml' | 'getApiReference';

/** Liveness, readiness and the contract itself (served as JSON, YAML and a reference page). */
export function systemOperations(deps: SystemDeps): Operations<SystemOperationId> {
  const contract = loadContract();
  const document = contract.parse();
  // The server's version and the interface's apart: 0.1.0 of the package serves interface 2.0.0.
  const health = { status: 'ok' as const, version: packageVersion(), interface_version: contract.version };
  let sandboxChecked: { at: number; result: Promise<DependencyCheck> } | undefined;
  const sandboxHealth = () => {
    const now = Date.now();
    if (!sandboxChecked || now - sandboxChecked.at > SANDBOX_HEALTH_TTL_MS) {
      sandboxChecked = { at: now, result: deps.sandbox() };
    }
    return sandboxChecked.result;
  };
  return {
    getHealth: () => ({ status: 200, body: health }),
    getReadiness: async () => {
      if (deps.draining()) {
        return { status: 503, body: { status: 'not_ready', checks: { server: { ok: false, detail: 'stopping' } } } };
      }
      const [database, sandbox, vectorIndex] = await Promise.all([
        deps.database(),
        sandboxHealth(),
        deps.vectorIndex?.(),
      ]);
      const checks = {
        database,
        local_model: deps.localModel(),
        sandbox,
        ...(vectorIndex && { vector_index: vectorIndex }),
      };
      // The sandbox is reported but not required: chat and everything else work without it. So is the vector
      // index: documents answer 503 without it while chat goes on, and every replica shares it, so taking
      // replicas out of service would not bring it back.
      const ready = database.ok && checks.local_model.ok;
      return ready
        ? { status: 200, body: { status: 'ready', checks } }
        : { status: 503, body: { status: 'not_ready', checks } };
    },
    getOpenApiJson: () => ({ status: 200, body: document }),
    getOpenApiYaml: () => ({ status: 200, type: 'application/yaml', body: contract.yaml }),
    getApiReference: () => ({ status: 200, type: 'text/html', body: REFERENCE_PAGE }),
  };
}
