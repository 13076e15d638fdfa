import { describe } from 'node:test';
import { type OpenedIndex, withIndexOf } from './chunk-index-contract/fixtures.js';
import { lifecycleCases } from './chunk-index-contract/lifecycle.js';
import { searchCases } from './chunk-index-contract/search.js';

export { MODEL } from './chunk-index-contract/fixtures.js';

/**
 * What every `ChunkIndex` adapter must do, run against each (SQL on SQLite and PostgreSQL, Qdrant).
 * Vectors are small hand-made unit vectors (8 dimensions) so the suite needs no embedding model and
 * every expected ranking follows from the arithmetic.
 */
export function chunkIndexContract(label: string, open: () => Promise<OpenedIndex>): void {
  describe(`ChunkIndex contract (${label})`, () => {
    const withIndex = withIndexOf(open);
    searchCases(withIndex);
    lifecycleCases(withIndex);
  });
}
