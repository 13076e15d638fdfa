import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import type { Db } from '../storage/index.js';

/** A signed-in account holder's session, as the dashboard reads it for every page. */
export interface Session {
  accountId: string;
  csrfToken: string;
  expiresAt: number;
}

const hashToken = (token: string) => createHash('sha256').update(token).digest('base64url');
/** Another hash of the token than the stored one: the key that seals a session's flash. */
const flashKey = (token: string) => createHash('sha256').update(`pvai-flash:${token}`).digest();

/**
 * Dashboard sessions in the database (table `dashboard_sessions`), so every replica sharing it knows
 * them. The cookie carries a random 256-bit token; only its SHA-256 is stored, so the table alone signs
 * no one in. Each session has its own CSRF token and a fixed expiry; expired rows are removed at sign-in.
 */
export class SessionStore {
  readonly #db: Db;

  constructor(db: Db) {
    this.#db = db;
  }

  /** A new session; the token goes into the cookie, never anywhere else. */
  async create(accountId: string, now: number, ttlMs: number): Promise<{ token: string; session: Session }> {
    await this.#db.query('DELETE FROM dashboard_sessions WHERE expires_at <= $1', [now]);
    const token = randomBytes(32).toString('base64url');
    const session = { accountId, csrfToken: randomBytes(32).toString('base64url'), expiresAt: now + ttlMs };
    await this.#db.query(
      'INSERT INTO dashboard_sessions (token_hash, account_id, csrf_token, created_at, expires_at) VALUES ($1, $2, $3, $4, $5)',
      [hashToken(token), accountId, session.csrfToken, now, session.expiresAt],
    );
    return { token, session };
  }

  /** The session for a cookie's token, unless it has expired or was ended. */
  async find(token: string, now: number): Promise<Session | undefined> {
    if (!/^[A-Za-z0-9_-]{43}$/.test(token)) return undefined;
    const rows = await this.#db.query(
      'SELECT account_id, csrf_token, expires_at FROM dashboard_sessions WHERE token_hash = $1 AND expires_at > $2',
      [hashToken(token), now],
    );
    const row = rows[0];
    if (!row) return undefined;
    return { accountId: String(row.account_id), csrfToken: String(row.csrf_token), expiresAt: Number(row.expires_at) };
  }

  /**
   * Keeps `value` for the session's next page (Post/Redirect/Get: a new key's secret shown once after the redirect),
   * sealed (AES-256-GCM) with a key derived from the cookie's token, which the database never holds.
   */
  async setFlash(token: string, value: string): Promise<void> {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', flashKey(token), iv);
    const sealed = Buffer.concat([cipher.update(value, 'utf8'), cipher.final()]);
    const flash = [iv, cipher.getAuthTag(), sealed].map((b) => b.toString('base64url')).join('.');
    await this.#db.query('UPDATE dashboard_sessions SET flash = $2 WHERE token_hash = $1', [hashToken(token), flash]);
  }

  /** The flash, once: whoever clears it shows it (a reload, or a second tab, gets nothing). */
  async takeFlash(token: string): Promise<string | undefined> {
    const hash = hashToken(token);
    const rows = await this.#db.query('SELECT flash FROM dashboard_sessions WHERE token_hash = $1', [hash]);
    const flash = rows[0]?.flash;
    if (typeof flash !== 'string') return undefined;
    const taken = await this.#db.query(
      'UPDATE dashboard_sessions SET flash = NULL WHERE token_hash = $1 AND flash = $2 RETURNING token_hash',
      [hash, flash],
    );
    if (taken.length === 0) return undefined;
    const [iv = '', tag = '', sealed = ''] = flash.split('.');
    const decipher = createDecipheriv('aes-256-gcm', flashKey(token), Buffer.from(iv, 'base64url'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(sealed, 'base64url')), decipher.final()]).toString('utf8');
  }

  async end(token: string): Promise<void> {
    await this.#db.query('DELETE FROM dashboard_sessions WHERE token_hash = $1', [hashToken(token)]);
  }

  /** Ends every session of the account but the one of `keptToken` (after a password change, on every replica). */
  async endOthers(accountId: string, keptToken: string): Promise<void> {
    await this.#db.query('DELETE FROM dashboard_sessions WHERE account_id = $1 AND token_hash <> $2', [
      accountId,
      hashToken(keptToken),
    ]);
  }
}
