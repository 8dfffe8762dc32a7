import type { Config } from '../config/env.js';
import type { SubmissionSettings } from '../config/env-submission.js';
import type { TlsMaterial } from '../config/tls.js';
import type { SignInLimiter } from '../protection/sign-in-limiter.js';
import type { SendDeps } from '../send/accept.js';
import { acceptSubmission, checkSubmissionRecipient, SUBMISSION_MAX_SIZE, submissionSizeLimit } from '../send/submission.js';
import type { SmtpLog } from '../smtp/server.js';
import { startSubmissionListener, type SubmissionListener } from './listener.js';
import type { SubmissionPipeline } from './transaction.js';

/** The send path's submission entry points (src/send/submission.ts), as the listener calls them. */
export const SEND_PIPELINE: SubmissionPipeline = {
  accept: acceptSubmission,
  checkRecipient: checkSubmissionRecipient,
  sizeLimit: submissionSizeLimit,
  maxSize: SUBMISSION_MAX_SIZE,
};

/** What tests may replace: the pipeline (a stub), and a probe of the bytes a DATA holds. */
export interface SubmissionSeams {
  pipeline?: SubmissionPipeline;
  onBytesKept?: (bytes: number) => void;
}

/**
 * The submission listener of `mailroom serve` over the process's send path (the same SendDeps
 * as the HTTP API: one idempotency guard, so an HTTP send and an SMTP resubmission see each
 * other in flight) and its sign-in limiter. `tls`: the certificate read at start (serve reads
 * it, as it does the API's, so a bad file stops the start with nothing to undo).
 */
export function startSubmission(
  config: Pick<Config, 'submission' | 'env'>,
  deps: { sendDeps: SendDeps; signIns: SignInLimiter; log: SmtpLog },
  tls: TlsMaterial | undefined,
  seams: SubmissionSeams = {},
): Promise<SubmissionListener | undefined> {
  const settings = config.submission;
  if (settings === undefined) return Promise.resolve(undefined);
  return startSubmissionListener(
    { ...deps, pipeline: seams.pipeline ?? SEND_PIPELINE },
    {
      port: settings.port,
      host: settings.host,
      tlsPort: settings.tlsPort,
      tls,
      // Development takes AUTH before TLS (the start banner says so: src/config/mode.ts).
      allowInsecureAuth: config.env === 'development' || settings.allowInsecure,
      maxClients: settings.maxClients,
      idleMs: settings.idleMs,
      name: deps.sendDeps.messageIdHost,
      onBytesKept: seams.onBytesKept,
    },
  );
}

/** The start line: where it listens and how TLS is offered. */
export function submissionLine(settings: SubmissionSettings, listener: SubmissionListener): string {
  const mode = settings.tls === undefined ? 'no TLS' : 'STARTTLS';
  const tls = listener.tlsPort === undefined ? '' : `, implicit TLS on ${settings.host}:${listener.tlsPort}`;
  return `SMTP submission on ${settings.host}:${listener.port} (${mode})${tls}`;
}
