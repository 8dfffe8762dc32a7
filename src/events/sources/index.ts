import type { WebhookSource, WebhookSourceHandler } from '../types.js';
import { mailgunSource, type ClaimToken } from './mailgun.js';
import { postmarkSource } from './postmark.js';
import { resendSource } from './resend.js';
import { sendgridSource } from './sendgrid.js';
import { sesSource } from './ses.js';

/**
 * The registry of webhook sources: a service's `events.source` names one. A source not built
 * yet is undefined, and the intake treats a service configured for it like one with no events
 * config (404), never as an open door.
 */

/** What the sources need from the outside world (storage for single-use tokens, fetch, …). */
export interface SourceDeps {
  claimToken: ClaimToken;
  /** Config.snsCertHosts (MAILROOM_SNS_CERT_HOSTS); absent: AWS's own hosts only. */
  snsCertHosts?: readonly string[];
}

export type SourceRegistry = Readonly<Record<WebhookSource, WebhookSourceHandler | undefined>>;

export function webhookSources(deps: SourceDeps): SourceRegistry {
  return {
    postmark: postmarkSource,
    mailgun: mailgunSource(deps.claimToken),
    resend: resendSource,
    ses: sesSource({ certHosts: deps.snsCertHosts ?? ['sns.*.amazonaws.com'] }),
    sendgrid: sendgridSource,
  };
}
