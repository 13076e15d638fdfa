import type { Schema } from '../http/index.js';
import type { Tenant } from '../retrieval/index.js';

export type { Tenant };

/** An end user's export, as the contract has it (`UserExport`). */
export type UserExport = Schema<'UserExport'>;

/** What an erase reports, as the contract has it: a count per section. */
export type Erased = Schema<'UserErasure'>['erased'];

/** A kind of data the service keeps about end users: each is one list of the export (memories, documents, usage…). */
export type SectionName = {
  [K in keyof UserExport]-?: UserExport[K] extends readonly unknown[] ? K : never;
}[keyof UserExport];

/** An end user as the list of end users has it (`EndUser`). */
type EndUserBody = Schema<'EndUser'>;

/** The counts an end user's entry has: each one a section's. */
export type EndUserCount = { [K in keyof EndUserBody]: EndUserBody[K] extends number ? K : never }[keyof EndUserBody];

/** What a section holds of one end user, for the list of end users: how many items, and the latest one's time. */
export interface UserActivity {
  userId: string;
  count: number;
  /** Epoch milliseconds. */
  lastSeenAt: number;
}

/** One item of a section, as the export writes it. */
export type SectionItem<N extends SectionName> = UserExport[N][number];

/**
 * What a capability that keeps data about end users gives the export and the erase (memory, documents, usage;
 * stored responses when they come): its section of the export, read as it is written, and how to erase it.
 * Every call is scoped by the tenant (the API key's account and the end user): another account's user of the
 * same id is another user.
 */
export interface UserDataSection<N extends SectionName> {
  readonly name: N;
  /**
   * The user's items, in a stable order, read from the store a page at a time while the export is written
   * (never all of them in memory at once).
   */
  export(tenant: Tenant): AsyncIterable<SectionItem<N>>;
  /**
   * Erases the user's items and everything made from them (indexes, queued work, cache keys), or keeps them
   * without the user where they must stay true (usage); returns how many there were. Idempotent: 0 the second
   * time.
   */
  erase(tenant: Tenant): Promise<number>;
  /**
   * For the list of end users: which of its counts this section gives, and each end user's activity in it (of
   * the account; only `userId`'s when given). Sections that count nothing there have none.
   */
  readonly activity?: {
    readonly counts: EndUserCount;
    list(accountId: string, userId?: string): Promise<UserActivity[]>;
  };
}
