import addFormats from 'ajv-formats';
import { type Document, OpenAPIBackend, OpenAPIValidator } from 'openapi-backend';
import { loadContract } from './document.js';
import { IndexedOpenAPIRouter } from './indexed-router.js';

/** The ajv settings every validator of the contract is compiled with (server, CLI and tests alike). */
export const CONTRACT_AJV = {
  // verbose: errors carry their schema, so a wrong `role` can name the roles there are. validateSchema: off, as
  // openapi-backend makes an Ajv per validator and each would compile JSON Schema's meta-schema again (three
  // quarters of compiling the contract); the schemas are checked once as the document's, by OpenAPI 3's own
  // schema in strict init and by redocly in CI.
  ajvOpts: { allErrors: false, strict: false, discriminator: true, verbose: true, validateSchema: false },
  customizeAjv: (ajv: Parameters<typeof addFormats.default>[0]) => {
    addFormats.default(ajv, ['email', 'date-time', 'date', 'int64']);
    return ajv;
  },
} as const;

/** The contract as the server routes and validates it: dereferenced, indexed, its request validators compiled. */
export interface CompiledContract {
  definition: Document;
  router: IndexedOpenAPIRouter;
  validator: OpenAPIValidator;
}

let compiled: Promise<CompiledContract> | undefined;

/**
 * Built once per process and shared by every server in it (a replica, the tests' many servers): compiling the
 * contract's ajv validators is most of what starting a server costs, and what it builds depends on nothing but
 * the document. Only the request validators are compiled ahead (the first request of each operation is not
 * slowed); response validators, which the server never runs, are left to be compiled on first use (the tests).
 */
export function compiledContract(): Promise<CompiledContract> {
  compiled ??= compile();
  return compiled;
}

async function compile(): Promise<CompiledContract> {
  // openapi-backend's own init in strict mode: the document checked against OpenAPI 3's schema, then dereferenced.
  const checked = await new OpenAPIBackend({
    definition: loadContract().forValidation() as unknown as Document,
    strict: true,
    validate: false,
  }).init();
  const router = new IndexedOpenAPIRouter({ definition: checked.definition, apiRoot: '/' });
  const validator = new OpenAPIValidator({
    definition: checked.definition,
    router,
    lazyCompileValidators: true,
    // Query and path parameters reach handlers as the types the contract declares (`limit=5` a number,
    // `stream=true` a boolean), as the operation types say they are.
    coerceTypes: true,
    ...CONTRACT_AJV,
  });
  validator.preCompileRequestValidators();
  return { definition: checked.definition, router, validator };
}

/** After init(): `api` routes and validates with the process's compiled contract. */
export async function useCompiledContract(api: OpenAPIBackend): Promise<void> {
  const contract = await compiledContract();
  api.definition = contract.definition;
  api.router = contract.router;
  api.validator = contract.validator;
}
