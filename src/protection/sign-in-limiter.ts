import type { Clock } from '../domain/clock.js';
import { unmappedIp } from '../net/ip-address.js';

/**
 * Wrong admin tokens and wrong SMTP submission logins per client address, in this process (each
 * `mailroom serve` counts its own), from POST /session, a wrong bearer on any admin route and a
 * wrong SMTP AUTH alike (one counter, so no path is a way around the others): after `max`
 * failures within `windowMs` every wrong one is refused (HTTP 429, SMTP 454 4.7.0) until the
 * oldest failure leaves the window; the right one still passes (adminTokenGate,
 * src/submission/auth.ts). A success does not clear the count: behind a proxy that
 * MAILROOM_TRUST_PROXY does not name, every client shares one address, and a script's right
 * token must not reset a guesser's budget. Addresses are keyed IPv4-mapped IPv6 as IPv4: HTTP and
 * SMTP on `::` see `::ffff:a.b.c.d`, on `0.0.0.0` `a.b.c.d`, for the same client.
 */
export class SignInLimiter {
  private readonly failures = new Map<string, number[]>();

  constructor(
    private readonly clock: Clock,
    private readonly max = 5,
    private readonly windowMs = 15 * 60_000,
  ) {}

  /** Seconds until `address` may try again, or undefined when it may try now. */
  retryAfterSeconds(address: string): number | undefined {
    const recent = this.recent(unmappedIp(address));
    if (recent.length < this.max) return undefined;
    const oldest = recent[recent.length - this.max] ?? this.clock.now();
    return Math.max(1, Math.ceil((oldest + this.windowMs - this.clock.now()) / 1000));
  }

  /**
   * A wrong token or login from `address`: the seconds to wait when the address is locked out
   * (that attempt is not counted: a locked-out client cannot push its own lockout further),
   * else undefined, with the failure counted.
   */
  refuse(address: string): number | undefined {
    const wait = this.retryAfterSeconds(address);
    if (wait !== undefined) return wait;
    const key = unmappedIp(address);
    const recent = this.recent(key);
    recent.push(this.clock.now());
    this.failures.set(key, recent);
    // Bounded memory under a flood of addresses: forget those with nothing in the window.
    if (this.failures.size > 10_000) for (const k of [...this.failures.keys()]) this.recent(k);
    return undefined;
  }

  private recent(address: string): number[] {
    const since = this.clock.now() - this.windowMs;
    const kept = (this.failures.get(address) ?? []).filter((t) => t > since);
    if (kept.length === 0) this.failures.delete(address);
    else this.failures.set(address, kept);
    return kept;
  }
}
