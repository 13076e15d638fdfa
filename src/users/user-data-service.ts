import type { Clock } from '../clock/index.js';
import type { Streamed } from '../http/index.js';
import { type EndUserPage, type EndUserQuery, type EndUserSummary, endUserPage, endUsersOf } from './end-users.js';
import type { Erased, SectionName, Tenant, UserDataSection, UserExport } from './types.js';

/** The erase report and the sections name the same kinds, no more and no fewer (checked when compiled). */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const ERASED_NAMES_ARE_SECTIONS: Same<keyof Erased, SectionName> = true;

/**
 * An end user's data, in one call each: the export (every section, in registration order, read while it is
 * written) and the erase (every section's). The sections are the capabilities' own (`UserDataSection`, each
 * capability's `userData`, read when asked so that every capability plugged in is in); this knows none of them.
 */
export class UserDataService {
  readonly #sections: () => readonly UserDataSection<SectionName>[];
  readonly #clock: Clock;

  constructor(sections: () => readonly UserDataSection<SectionName>[], clock: Clock) {
    void ERASED_NAMES_ARE_SECTIONS;
    this.#sections = sections;
    this.#clock = clock;
  }

  /** The export document; each section's list is an iterable the writer pulls from, page by page. */
  export(tenant: Tenant): Streamed<UserExport> {
    const lists = Object.fromEntries(this.#sections().map((s) => [s.name, s.export(tenant)]));
    return {
      object: 'user.export',
      user_id: tenant.userId,
      exported_at: new Date(this.#clock()).toISOString(),
      ...lists,
    } as Streamed<UserExport>;
  }

  /**
   * Erases every section, in registration order. One that fails does not stop the others (the user is erased
   * as far as it can be now); the first failure is thrown after them, and the erase, being idempotent, can be
   * asked again.
   */
  async erase(tenant: Tenant): Promise<Erased> {
    const erased: Partial<Record<SectionName, number>> = {};
    const failures: unknown[] = [];
    for (const section of this.#sections()) {
      try {
        erased[section.name] = await section.erase(tenant);
      } catch (err) {
        failures.push(err);
      }
    }
    if (failures.length > 0) throw failures[0];
    return erased as Erased;
  }

  /** A page of the account's end users, most recently seen first (`end-users.ts`). */
  async list(accountId: string, query: EndUserQuery): Promise<EndUserPage> {
    return endUserPage(await endUsersOf(this.#sections(), accountId, query.userId), query);
  }

  /** One end user of the account with their counts, or undefined when the account holds nothing of them. */
  async find(tenant: Tenant): Promise<EndUserSummary | undefined> {
    return (await endUsersOf(this.#sections(), tenant.accountId, tenant.userId))[0];
  }
}
