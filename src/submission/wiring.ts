import type { Config } from '../config/env.js';
import type { SignInLimiter } from '../protection/sign-in-limiter.js';
import type { SendDeps } from '../send/accept.js';
import { acceptSubmission, checkSubmissionRecipient, SUBMISSION_MAX_SIZE, submissionSizeLimit } from '../send/submission.js';
import { startSubmissionListener, type SubmissionListener, type SubmissionLog, type TlsPair } from './listener.js';
import type { SubmissionPipeline } from './transaction.js';

/** The send path's submission entry points (src/send/submission.ts), as the listener calls them. */
export const SEND_PIPELINE: SubmissionPipeline = {
  accept: acceptSubmission,
  checkRecipient: checkSubmissionRecipient,
  sizeLimit: submissionSizeLimit,
  maxSize: SUBMISSION_MAX_SIZE,
};

/**
 * The submission listener of `mailroom serve` over the process's send path (the same SendDeps
 * as the HTTP API: one idempotency guard, so an HTTP send and an SMTP resubmission see each
 * other in flight) and its sign-in limiter. `tls`: the certificate read at start (serve reads
 * it, as it does the API's, so a bad file stops the start with nothing to undo).
 */
export function startSubmission(
  config: Pick<Config, 'submission' | 'env'>,
  deps: { sendDeps: SendDeps; signIns: SignInLimiter; log: SubmissionLog },
  tls: TlsPair | undefined,
): Promise<SubmissionListener | undefined> {
  const settings = config.submission;
  if (settings === undefined) return Promise.resolve(undefined);
  return startSubmissionListener(
    { ...deps, pipeline: SEND_PIPELINE },
    {
      port: settings.port,
      host: settings.host,
      tlsPort: settings.tlsPort,
      tls,
      // Development takes AUTH before TLS (the start banner says so: src/config/mode.ts).
      allowInsecureAuth: config.env === 'development' || settings.allowInsecure,
      maxClients: settings.maxClients,
      idleMs: settings.idleMs,
      name: new URL(deps.sendDeps.config.baseUrl).hostname || 'mailroom.local',
    },
  );
}

/** The start line: where it listens and how TLS is offered. */
export function submissionLine(config: Pick<Config, 'submission'>, listener: SubmissionListener): string {
  const s = config.submission;
  const host = s?.host ?? '0.0.0.0';
  const mode = s?.tls === undefined ? 'no TLS' : 'STARTTLS';
  const tls = listener.tlsPort === undefined ? '' : `, implicit TLS on ${host}:${listener.tlsPort}`;
  return `SMTP submission on ${host}:${listener.port} (${mode})${tls}`;
}
