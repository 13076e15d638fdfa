import { createHash } from 'node:crypto';
import { addressBucket } from '../kernel/index.js';
import type { Db } from '../storage/index.js';
import { SqlAttemptCounter } from './adapters/sql-attempt-counter.js';
import type { AttemptCounter } from './attempt-counter.js';
import { type Refusal, signInRefusal } from './refusal.js';

/** The window sign-in attempts are counted in. */
const SIGN_IN_WINDOW_MS = 15 * 60_000;

export interface SignInLimits {
  /** Attempts per email from one client address (an IPv6 address by its /64) in a window. */
  perPair: number;
  /** Attempts from one client address, whatever the emails, in a window. */
  perAddress: number;
}

/**
 * 5 guesses per email and address, and 20 per address, in 15 minutes: a person who mistypes gets several
 * tries; a guesser gets 480 an address a day spread over emails, 20 a day at one email.
 */
const DEFAULT_SIGN_IN_LIMITS: SignInLimits = { perPair: 5, perAddress: 20 };

/**
 * The dashboard's sign-in throttling, one that cannot lock an account's owner out. Attempts are counted per (email, client
 * address) pair and per client address, never per email alone: failures from an attacker's addresses
 * throttle those addresses, and the owner signing in from their own is not affected by them. Counted
 * before the password is checked, so concurrent guesses cannot get past the limit together; a success
 * forgets the pair and takes its attempt back from the address (only failures stay counted). Past either
 * limit the attempt is refused, even with the right password, until that window ends.
 */
export class SignInThrottle {
  readonly #counter: AttemptCounter;
  readonly #limits: SignInLimits;

  constructor(counter: AttemptCounter, limits: SignInLimits = DEFAULT_SIGN_IN_LIMITS) {
    this.#counter = counter;
    this.#limits = limits;
  }

  /** The email appears only hashed: strangers type other people's addresses into this form. */
  #keys(email: string, address: string): { pair: string; address: string } {
    const bucket = addressBucket(address);
    const pair = createHash('sha256').update(`${email}\n${bucket}`).digest('base64url');
    return { pair: `pair:${pair}`, address: `address:${bucket}` };
  }

  /**
   * Counts an attempt of `email` from `address`; the refusal (429, until the later window ends) when it is
   * over a limit (it must then be refused without checking the password), else null. A refused attempt
   * counts too: it cannot move a window's end, and only adds to the address it came from.
   */
  async attempt(email: string, address: string, now: number): Promise<Refusal | null> {
    const keys = this.#keys(email, address);
    const [pair, fromAddress] = await this.#counter.count([keys.pair, keys.address], now);
    let until = now;
    if (pair && pair.attempts > this.#limits.perPair) until = pair.windowEnd;
    if (fromAddress && fromAddress.attempts > this.#limits.perAddress) until = Math.max(until, fromAddress.windowEnd);
    return until > now ? signInRefusal(until, now) : null;
  }

  /** The password was right. */
  async succeeded(email: string, address: string, now: number): Promise<void> {
    const keys = this.#keys(email, address);
    await this.#counter.clear([keys.pair]);
    await this.#counter.uncount([keys.address], now);
  }
}

/** The throttle on the service's database: replicas sharing it share the counts, a restart keeps them. */
export function storedSignInThrottle(db: Db, limits: SignInLimits = DEFAULT_SIGN_IN_LIMITS): SignInThrottle {
  return new SignInThrottle(new SqlAttemptCounter(db, { scope: 'sign-in', windowMs: SIGN_IN_WINDOW_MS }), limits);
}
