import type { OpenAPIBackend } from 'openapi-backend';
import { contractBackend } from './openapi.js';
import type { OperationId, RequestBody } from './operation.js';
import { invalidText, jsonTextProblem } from './text.js';
import { validationError } from './validation-error.js';

/** What a request to one operation carries, as a caller without HTTP has it: path parameters and a JSON body. */
export interface OperationInput {
  params?: Readonly<Record<string, string>>;
  body?: unknown;
}

let backend: OpenAPIBackend | undefined;

async function lazyBackend(): Promise<OpenAPIBackend> {
  if (!backend) backend = await contractBackend({ lazy: true }).init();
  return backend;
}

/**
 * Refuses what the server would refuse of a request to `operationId`, with the server's own AppError (code,
 * message, details): the text rules of the door (text.ts), then the contract's parameters and body through
 * openapi-backend's validator with the server's ajv settings. The CLI's commands that do what an admin operation
 * does go through here, so that one schema decides for both and nothing the API refuses gets in another way.
 * Returns the body, now known to be what the contract types it as.
 */
export async function checkOperationInput<K extends OperationId>(
  operationId: K,
  input: OperationInput,
): Promise<RequestBody<K>> {
  const params = input.params ?? {};
  const text = jsonTextProblem(params) ?? (input.body === undefined ? undefined : jsonTextProblem(input.body));
  if (text) throw invalidText(text);
  const api = await lazyBackend();
  const operation = api.getOperation(operationId);
  if (!operation) throw new Error(`${operationId} is not an operation of the contract`);
  // The path as a client would send it: the router decodes each parameter back to exactly the value given.
  const path = operation.path.replace(/\{([^}]+)\}/g, (_, name: string) => encodeURIComponent(params[name] ?? ''));
  const result = api.validateRequest(
    {
      method: operation.method,
      path,
      headers: input.body === undefined ? {} : { 'content-type': 'application/json' },
      ...(input.body === undefined ? {} : { body: input.body }),
    },
    operation,
  );
  if (!result.valid) throw validationError(result.errors ?? []);
  return input.body as RequestBody<K>;
}
