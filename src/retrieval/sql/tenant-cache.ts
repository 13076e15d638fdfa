import type { Tenant } from '../types.js';

/**
 * Tenants' indexes kept in memory (TenantSets: terms and vectors), each with the database generation it reflects
 * (rag_index_tenants, bumped by every write of the tenant's index in the write's transaction). A set
 * is used only at the generation it was loaded or kept up to date at; a write by this process moves it
 * on in place when it was exactly one generation behind, any other change (another process, `pvai documents`,
 * a replica) makes the next search load it again. Least recently used sets go past `capacity` chunks
 * or `maxSets` sets (each vector set has its own WebAssembly memory, 64 KiB at least).
 */
export class TenantCache<T extends { readonly size: number }> {
  readonly #capacity: number;
  readonly #maxSets: number;
  readonly #sets = new Map<string, { generation: number; set: T }>();
  #size = 0;

  constructor(capacity: number, maxSets = 1000) {
    this.#capacity = capacity;
    this.#maxSets = maxSets;
  }

  get(tenant: Tenant, generation: number): T | undefined {
    const key = keyOf(tenant);
    const entry = this.#sets.get(key);
    if (!entry) return undefined;
    if (entry.generation !== generation) {
      this.#drop(key);
      return undefined;
    }
    // Most recently used last.
    this.#sets.delete(key);
    this.#sets.set(key, entry);
    return entry.set;
  }

  put(tenant: Tenant, generation: number, set: T): void {
    const key = keyOf(tenant);
    this.#drop(key);
    this.#sets.set(key, { generation, set });
    this.#size += set.size;
    for (const [other] of this.#sets) {
      if ((this.#size <= this.#capacity && this.#sets.size <= this.#maxSets) || other === key) break;
      this.#drop(other);
    }
  }

  /** After this process's write took the tenant to `generation`: applies it, or drops a stale set. */
  applied(tenant: Tenant, generation: number, change: (set: T) => void): void {
    const key = keyOf(tenant);
    const entry = this.#sets.get(key);
    if (!entry) return;
    if (entry.generation !== generation - 1) {
      this.#drop(key);
      return;
    }
    this.#size -= entry.set.size;
    try {
      change(entry.set);
    } catch (err) {
      this.#sets.delete(key);
      throw err;
    }
    this.#size += entry.set.size;
    entry.generation = generation;
  }

  forget(tenant: Tenant): void {
    this.#drop(keyOf(tenant));
  }

  clear(): void {
    this.#sets.clear();
    this.#size = 0;
  }

  #drop(key: string): void {
    const entry = this.#sets.get(key);
    if (!entry) return;
    this.#size -= entry.set.size;
    this.#sets.delete(key);
  }
}

function keyOf(tenant: Tenant): string {
  return JSON.stringify([tenant.accountId, tenant.userId]);
}
