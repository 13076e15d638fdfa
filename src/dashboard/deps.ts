import type { AccountService } from '../accounts/index.js';
import type { Clock } from '../clock/index.js';
import type { Streamed } from '../http/index.js';
import type { Account } from '../kernel/index.js';
import type { RateLimitDecision, SignInThrottle } from '../limits/index.js';
import type { SqlRequestLogStore } from '../logs/index.js';
import type { Tenant } from '../retrieval/index.js';
import type { SlaReport, SlaWindow } from '../sla/index.js';
import type { DailyUsage, UsageBreakdowns } from '../usage/index.js';
import type { EndUserPage, EndUserQuery, EndUserSummary, Erased, UserExport } from '../users/index.js';
import type { DashboardDocument, DashboardMemoryItem } from './pages.js';
import type { SessionStore } from './sessions.js';

/** The documents of an end user, as the dashboard lists and deletes them (DocumentService). */
interface DashboardDocuments {
  list(tenant: Tenant): Promise<DashboardDocument[]>;
  delete(tenant: Tenant, id: string): Promise<void>;
}

/** A file uploaded from the Documents page, stored as the API's upload stores it (`createDocument`). */
type DocumentUpload = (
  tenant: Tenant,
  file: { data: Buffer; filename: string; contentType: string },
  given: { title?: string | undefined },
) => Promise<unknown>;

/**
 * The memory of an end user: the Documents page lists each user's memories with a Delete button, posting
 * to /dashboard/memory/:id/delete (scoped to the signed-in account, like every call here).
 */
interface DashboardMemory {
  list(tenant: Tenant): Promise<DashboardMemoryItem[]>;
  delete(tenant: Tenant, id: string): Promise<void>;
}

/** The account's end users, and an end user's data (UserDataService). */
interface DashboardUsers {
  list(accountId: string, query: EndUserQuery): Promise<EndUserPage>;
  /** Undefined for an id the account holds nothing of: the pages say "no such end user" and offer no erase. */
  find(tenant: Tenant): Promise<EndUserSummary | undefined>;
  export(tenant: Tenant): Streamed<UserExport>;
  erase(tenant: Tenant): Promise<Erased>;
}

/** A model as `/z1/models` lists it, as far as this page shows it. */
export interface DashboardModel {
  id: string;
  alias_of?: string;
  kind: string;
  intended_use: string;
  credits_per_request: number;
  available: boolean;
  served_by: { kind: 'local' | 'upstream'; model: string; host: string | null; note: string };
}

/** The models of the signed-in account's tier, as `GET /z1/models` lists them (models/operations.ts). */
interface DashboardModels {
  list(account: Account): Promise<DashboardModel[]>;
}

/** What the dashboard is given by compose.ts: every call it makes goes through one of these. */
export interface DashboardDeps {
  clock: Clock;
  sessions: SessionStore;
  accounts: AccountService;
  /** The daily usage rollup (never the raw rows), a flush of the rows still buffered, the API's breakdowns. */
  usage: {
    flush(): Promise<void>;
    days(accountId: string, start: number, end: number): Promise<DailyUsage[]>;
    breakdowns: Pick<UsageBreakdowns, 'page' | 'csv'>;
  };
  /** The account's rate-limit windows, without counting a request. */
  rateLimits(account: Account): Promise<RateLimitDecision>;
  /** The request logs (the Logs page), read after the rows still pending are written. */
  logs?: { flush(): Promise<void>; store: Pick<SqlRequestLogStore, 'list' | 'cursorOf'> };
  documents?: DashboardDocuments;
  /** The Documents page's upload form (with `documents`). */
  documentUpload?: DocumentUpload;
  /** Memory per end user (see DashboardMemory). */
  memory?: DashboardMemory;
  /** An end user's data: export and erase, from the Documents page (pages/users.ts). */
  users?: DashboardUsers;
  /** SLA reports, for the tiers that have SLA monitoring. */
  sla?: {
    available(account: Account): boolean;
    report(account: Account, window: SlaWindow): Promise<SlaReport>;
  };
  /** The models of the account's tier and what serves each (the Models page). */
  models?: DashboardModels;
  /** Sign-in attempts per (email, address) and per address, shared through the database. */
  throttle: SignInThrottle;
  sessionTtlMs?: number;
}
