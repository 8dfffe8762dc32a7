import type { Config } from '../config/env.js';
import type { ClientInfo } from '../domain/client.js';
import { sha256 } from '../domain/ids.js';
import { originAllowed } from '../domain/origin.js';
import type { KeyMode, Organization } from '../domain/types.js';
import { ApiError } from '../errors/api-error.js';
import type { LimiterBackend } from './backend.js';
import { VerifierUnavailable, type CaptchaVerifier, type SiteverifyResult } from './turnstile-client.js';

/**
 * Cloudflare's published Turnstile test secrets (always passes, always fails, "already
 * spent"). Anyone can solve a widget that verifies against them, so production refuses them.
 */
export const TURNSTILE_TEST_SECRETS: ReadonlySet<string> = new Set([
  '1x0000000000000000000000000000000AA',
  '2x0000000000000000000000000000000AA',
  '3x0000000000000000000000000000000AA',
]);

/**
 * How long a verified token is remembered as used. Turnstile tokens live 300 s; keeping them
 * twice as long covers clock skew between us and Cloudflare.
 */
export const USED_TOKEN_TTL_MS = 10 * 60_000;

/** How long a client is told to wait after a 503 from an unreachable verifier. */
const VERIFIER_RETRY_AFTER_SECONDS = 5;

/**
 * Cloudflare's documented dummy token (what its test site keys hand out). With a test key it
 * passes without a widget, a single-use claim or siteverify, in production too: a test key's
 * message never leaves the machine, so an application's CI can send through a CAPTCHA template.
 */
export const TURNSTILE_TEST_TOKEN = 'XXXX.DUMMY.TOKEN.XXXX';

export interface CaptchaInput {
  token: string | undefined;
  turnstileKey: 'org' | 'mail' | undefined;
  /** The sending key's mode (issue 27); only `test` lets the dummy token through. */
  keyMode?: KeyMode;
}

type Widget = { kind: 'org'; secret: string } | { kind: 'shared'; secret: string };

function hostnameOf(url: string | undefined): string | undefined {
  if (url === undefined) return undefined;
  try {
    const h = new URL(url).hostname.toLowerCase();
    return h === '' ? undefined : h;
  } catch {
    return undefined;
  }
}

/**
 * Authentication rule 8: the CAPTCHA check of public-key sends to templates that require it.
 * Private keys never reach it. See `check` for the order of the outcomes.
 */
export class CaptchaGuard {
  constructor(
    private readonly verifier: CaptchaVerifier,
    private readonly backend: LimiterBackend,
    private readonly config: Pick<Config, 'env' | 'baseUrl' | 'turnstile'>,
  ) {}

  /**
   * 1. Which widget issued the token: a request with an Origin header (a web page), or one that
   *    says `turnstile_key: org`, uses the organization's own widget and secret; otherwise the
   *    service's shared mobile widget, which only organizations that allow mobile apps may use.
   * 2. That secret must exist (403 `captcha_not_configured`) and, in production, must not be one
   *    of Cloudflare's test secrets (`details.reason = test_secret`).
   * 3. A token must be present (403 `captcha_required`).
   * 4. The token is claimed as used (memory or Redis, 10 minutes) before it is verified, so a
   *    replay is refused even when the verifier would accept it (403 `captcha_failed`,
   *    `details.reason = token_reused`).
   * 5. siteverify: a rejection is 403 `captcha_failed`; no answer in time is 503
   *    `service_unavailable` (and the claim is dropped so the client can retry the same token).
   * 6. The hostname the token was solved on must be the request Origin's (web pages), the
   *    service's own (shared widget page) or an allowed origin (own widget in an app): else 403
   *    `captcha_failed` with `details.reason = hostname_mismatch`.
   * Before all of it, a test key's `TURNSTILE_TEST_TOKEN` passes (any other token takes the path above).
   */
  async check(org: Organization, input: CaptchaInput, client: ClientInfo): Promise<void> {
    if (input.keyMode === 'test' && input.token?.trim() === TURNSTILE_TEST_TOKEN) return;
    const widget = this.widget(org, input, client);
    const testSecret = TURNSTILE_TEST_SECRETS.has(widget.secret);
    if (testSecret && this.config.env === 'production') {
      throw new ApiError('captcha_not_configured', {
        message: "Cloudflare's CAPTCHA test secrets are refused in production.",
        details: { reason: 'test_secret', widget: widget.kind === 'org' ? 'organization' : 'shared' },
      });
    }
    const token = input.token?.trim();
    if (token === undefined || token === '') {
      throw new ApiError('captcha_required', {
        message: 'This template requires a CAPTCHA token: send turnstile_token (or cf-turnstile-response in a form).',
      });
    }

    const claimKey = `captcha:used:${sha256(token)}`;
    const fresh = await this.backend.call('captcha', false, false, (store) => store.claim(claimKey, USED_TOKEN_TTL_MS));
    if (!fresh)
      throw new ApiError('captcha_failed', {
        message: 'This CAPTCHA token was already used.',
        details: { reason: 'token_reused' },
      });

    let result: SiteverifyResult;
    try {
      result = await this.verifier.verify({ secret: widget.secret, token, remoteIp: client.ip });
    } catch (err) {
      await this.backend.call('captcha', true, undefined, (store) => store.unclaim(claimKey));
      if (err instanceof VerifierUnavailable) {
        throw new ApiError('service_unavailable', {
          message: 'The CAPTCHA could not be verified right now; nothing was sent. Retry later.',
          details: { reason: 'captcha_verifier_unavailable' },
          headers: { 'retry-after': String(VERIFIER_RETRY_AFTER_SECONDS) },
        });
      }
      throw err;
    }

    if (!result.success) {
      const codes = result.errorCodes;
      if (codes.includes('invalid-input-secret') || codes.includes('missing-input-secret')) {
        throw new ApiError('captcha_not_configured', {
          message: 'The CAPTCHA secret key was refused by the verifier.',
          details: { reason: 'invalid_secret', widget: widget.kind === 'org' ? 'organization' : 'shared' },
        });
      }
      const reason = codes.includes('timeout-or-duplicate')
        ? 'expired_or_used'
        : codes.includes('invalid-input-response')
          ? 'invalid_token'
          : 'rejected';
      throw new ApiError('captcha_failed', { details: { reason, error_codes: codes } });
    }
    // Test secrets answer with a fixed hostname; they only ever reach here outside production.
    if (!testSecret && !this.hostnameMatches(org, widget, client, result.hostname)) {
      throw new ApiError('captcha_failed', {
        message: 'The CAPTCHA was solved on another hostname than the one this request comes from.',
        details: { reason: 'hostname_mismatch' },
      });
    }
  }

  private widget(org: Organization, input: CaptchaInput, client: ClientInfo): Widget {
    if (client.origin !== undefined || input.turnstileKey === 'org') {
      const secret = org.captcha?.secret_key;
      if (secret === undefined || secret === '') {
        throw new ApiError('captcha_not_configured', {
          message: 'This template requires CAPTCHA but the organization has no CAPTCHA keys of its own.',
          details: { reason: 'no_organization_keys' },
        });
      }
      return { kind: 'org', secret };
    }
    if (!org.security.allow_mobile_apps) {
      throw new ApiError('captcha_failed', {
        message:
          'The shared mobile CAPTCHA widget is only accepted when the organization allows mobile apps; use turnstile_key "org".',
        details: { reason: 'shared_widget_not_allowed' },
      });
    }
    const secret = this.config.turnstile.secretKey;
    if (secret === undefined) {
      throw new ApiError('captcha_not_configured', {
        message: 'The shared mobile CAPTCHA widget is not configured on this server (MAILROOM_TURNSTILE_SECRET_KEY).',
        details: { reason: 'no_shared_widget' },
      });
    }
    return { kind: 'shared', secret };
  }

  private hostnameMatches(org: Organization, widget: Widget, client: ClientInfo, solvedOn: string | undefined): boolean {
    const hostname = solvedOn?.toLowerCase().replace(/\.$/, '');
    if (hostname === undefined || hostname === '') return false;
    const origin = hostnameOf(client.origin);
    if (origin !== undefined) return hostname === origin;
    if (widget.kind === 'shared') return hostname === hostnameOf(this.config.baseUrl);
    // The organization's own widget inside an app: solved on one of its allowed origins, if it
    // lists any (an empty list says nothing about where its widget lives).
    const allowed = org.security.allowed_origins;
    return (
      allowed.length === 0 ||
      originAllowed(
        allowed.map((a) => a.replace(/:\d+$/, '')),
        `https://${hostname}`,
      )
    );
  }
}
