import assert from 'node:assert/strict';
import { SetMatchType } from 'openapi-backend';
import { compiledContract } from '../../src/http/compiled-contract.js';

/**
 * Fails unless the response is one the contract documents for this request: a documented status,
 * a body matching that status's schema and the documented headers with valid values.
 */
export async function assertConformsToContract(
  method: string,
  path: string,
  status: number,
  headers: Headers,
  body: unknown,
): Promise<void> {
  // Routed and validated exactly as the server does, by the same compiled contract; each response validator is
  // compiled on its first use.
  const oas = await compiledContract();
  const operation = oas.router.matchOperation({ method, path: path.split('?')[0] ?? path, headers: {} });
  if (!operation) return; // undocumented paths are checked by the 404/405 tests
  const documented = Object.keys(operation.responses ?? {});
  assert.ok(
    documented.includes(String(status)),
    `${method} ${path} answered ${status}, which the contract does not document (${documented.join(', ')})`,
  );
  const contentType = headers.get('content-type') ?? '';
  if (contentType.startsWith('application/json')) {
    const result = oas.validator.validateResponse(body, operation, status);
    assert.equal(
      result.errors,
      null,
      `${method} ${path} ${status} body breaks the contract: ${JSON.stringify(result.errors)}`,
    );
  }
  const headerObject: Record<string, string> = {};
  headers.forEach((value, key) => {
    headerObject[key] = value;
  });
  const headerResult = oas.validator.validateResponseHeaders(headerObject, operation, {
    statusCode: status,
    setMatchType: SetMatchType.Any,
  });
  assert.equal(
    headerResult.errors,
    null,
    `${method} ${path} ${status} headers break the contract: ${JSON.stringify(headerResult.errors)}`,
  );
}
