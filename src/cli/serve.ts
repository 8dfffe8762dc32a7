import { buildApp } from '../app.js';
import { applyConfig, generatedLines, webhookApplyOptions } from '../admin/apply.js';
import { demoInstructions, ensureDemo } from '../bootstrap/demo.js';
import type { Config } from '../config/env.js';
import { modeBanner, modeSummary } from '../config/mode.js';
import { httpsTarget, readTlsMaterial, reloadOnSighup, type ReloadTarget } from '../http/tls.js';
import { SignInLimiter } from '../protection/sign-in-limiter.js';
import { createSendDeps } from '../send/accept.js';
import type { SubmissionListener } from '../submission/listener.js';
import { startSubmission, submissionLine } from '../submission/wiring.js';
import { createRuntime, untilSignal } from './runtime.js';

/** How long in-flight requests and sends get on SIGTERM before the process exits anyway. */
const SHUTDOWN_GRACE_MS = 10_000;

/**
 * `mailroom serve`: config → store (migrated) → declarative config or first-run demo → app
 * (+ a delivery worker and the webhook dispatcher unless MAILROOM_WORKER=off) → listen, over HTTPS when MAILROOM_TLS_* are
 * set (SIGHUP reloads the certificate), with the SMTP submission listener when MAILROOM_SUBMISSION_PORT is set
 * (src/submission, issue 28). SIGTERM/SIGINT: stop accepting, let requests and sends
 * finish, give back unfinished claims, close the store.
 */
export async function serve(config: Config, out: (line: string) => void): Promise<void> {
  // Before the store opens: a bad certificate path stops the start with nothing to undo.
  const tls = config.tls === undefined ? undefined : readTlsMaterial(config.tls);
  // Submission on the API's pair (the same files, src/config/env-submission.ts): read once.
  const ownTls = config.submission?.tls;
  const sharedTls = ownTls !== undefined && ownTls.certFile === config.tls?.certFile && ownTls.keyFile === config.tls.keyFile;
  const submissionTls =
    config.submission?.tls === undefined ? undefined : sharedTls ? tls : readTlsMaterial(config.submission.tls);
  const runtime = await createRuntime(config);
  const { store } = runtime;
  if (config.configFile !== undefined) {
    // Loaded only for a MAILROOM_CONFIG file: the YAML parser (~70 modules) stays out of a server without one.
    const { readConfigFile } = await import('../resources/config-file.js');
    const report = await applyConfig(store, readConfigFile(config.configFile), webhookApplyOptions(config));
    out(`Applied ${config.configFile}: ${report.changes.length === 0 ? 'no changes' : `${report.changes.length} change(s)`}`);
    for (const line of generatedLines(report)) out(line);
  }
  const demo = await ensureDemo(store, config);

  const worker = config.runWorker ? runtime.createWorker() : undefined;
  // Outbound webhooks go wherever deliveries go: with the in-process worker, or from `mailroom worker`.
  const dispatcher = config.runWorker ? runtime.createDispatcher() : undefined;
  const { clock, metrics, protection, blobs, notifier, webhooks } = runtime;
  // An accepted send wrote its `queued` event: its webhook deliveries are due too.
  const onAccepted = () => {
    worker?.nudge();
    webhooks.wakeup.nudge();
  };
  // One of each per process: wrong admin tokens and wrong SMTP logins share one lockout, and an
  // HTTP send and an SMTP submission share one idempotency guard (issue 28).
  const signIns = new SignInLimiter(clock);
  const sendDeps = createSendDeps({ store, clock, config, blobs: blobs.blobs, metrics, protection, onAccepted });
  const app = await buildApp({
    config,
    store,
    clock,
    metrics,
    protection,
    blobs,
    notifier,
    webhooks,
    onAccepted,
    signIns,
    sendDeps,
    ...(tls === undefined ? {} : { https: tls }),
  });
  // SIGHUP reads the files again for the API and, once it listens, the submission listener
  // (src/http/tls.ts); registered before listening, as a SIGHUP without a handler ends the process.
  // A shared pair is one target: read once, applied to both.
  let submission: SubmissionListener | undefined;
  const https = config.tls === undefined ? undefined : httpsTarget(app.server, config.tls);
  const reloads: ReloadTarget[] =
    https === undefined
      ? []
      : [
          sharedTls
            ? {
                files: https.files,
                apply: (m) => {
                  https.apply(m);
                  submission?.updateCertificate(m);
                },
              }
            : https,
        ];
  const stopReload = config.tls === undefined && submissionTls === undefined ? undefined : reloadOnSighup(reloads, app.log);
  await app.listen({ port: config.port, host: config.host });
  worker?.start();
  dispatcher?.start();
  // Bounces and feedback reports for VERP addresses (runtime.ts: startInbound).
  const inbound = await runtime.startInbound();
  submission = await startSubmission(
    config,
    { sendDeps, signIns, log: runtime.logger.child({ component: 'submission' }) },
    submissionTls,
  );
  const own = submission;
  if (own !== undefined && config.submission?.tls !== undefined && !sharedTls)
    reloads.push({ files: config.submission.tls, apply: (m) => own.updateCertificate(m) });
  // Listening for the signal before saying we run: a supervisor that reads the line may stop us at once.
  const signalled = untilSignal();
  if (submission !== undefined && config.submission !== undefined) out(submissionLine(config.submission, submission));
  if (inbound !== undefined) out(`inbound SMTP (bounces, feedback reports) on ${config.inboundSmtp?.host}:${inbound.port}`);
  out(`mailroom listening on ${config.baseUrl} (database: ${store.dialect}, worker: ${worker === undefined ? 'off' : 'on'})`);
  // Which mode runs and what it gives away: `npm start` is development (issue 25).
  for (const line of modeBanner(modeSummary(config))) out(line);
  if (demo !== undefined) out(demoInstructions(demo, config));

  const signal = await signalled;
  stopReload?.();
  app.log.info({ signal }, 'shutting down');
  const timer = setTimeout(() => {
    app.log.error('shutdown took too long; exiting');
    process.exit(1);
  }, SHUTDOWN_GRACE_MS + 5_000);
  timer.unref();
  // All three stop accepting at once: an SMTP listener left open while HTTP drains would take new
  // sessions meanwhile. The SMTP ones' closeTimeout (5 s) cuts sessions still open, inside SHUTDOWN_GRACE_MS.
  await Promise.all([app.close(), submission?.close(), inbound?.close()]);
  await Promise.all([worker?.stop(SHUTDOWN_GRACE_MS), dispatcher?.stop(SHUTDOWN_GRACE_MS)]);
  await runtime.close();
}
