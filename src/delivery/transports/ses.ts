import { createRequire } from 'node:module';
import type { Destination, SESv2Client } from '@aws-sdk/client-sesv2';
import { DeliveryError, ServiceTestError, type Transport, type TransportFactory } from '../transport.js';
import type { Service } from '../../domain/types.js';
import { endpointOf, requiredString, settingsBlock } from './provider-mail.js';
import { rawComposer, splitRecipients } from './raw-mime.js';
import { classifySesError, describeSesFailure, sesFailureOf, sesTestReason } from './ses-errors.js';

/**
 * Amazon SES through the v2 API: `SendEmail` with raw content (the MIME nodemailer composes, as
 * the outbox writes it), signed with SigV4 by the AWS SDK (@aws-sdk/client-sesv2).
 *
 * Settings (`service.settings.ses`):
 * - `region`: required, e.g. `eu-west-1`: the endpoint's region and SigV4's credential scope
 * - `access_key_id`, `secret_access_key`: both or neither; neither: the AWS SDK's default chain (environment, shared files,
 *   instance or task role)
 * - `configuration_set`: optional, sent as ConfigurationSetName (event publishing)
 * - `endpoint`: optional base URL replacing `https://email.<region>.amazonaws.com`
 *
 * Every envelope recipient is in `Destination` (bcc only there: the MIME carries no Bcc header);
 * our message id goes as the tag `mailroom_message_id` (EmailTags), which SES events carry back.
 * SES replaces our Message-ID header with its own; its notifications keep the original headers.
 * The sent event records `MessageId` from the answer. The SDK never retries by itself
 * (maxAttempts 1): its standard mode would make one attempt up to three sends.
 *
 * Errors (ses-errors.ts; names from SendEmailCommand's declared errors and the AWS common errors,
 * docs.aws.amazon.com/ses/latest/APIReference/CommonErrors.html):
 * Condition → outcome — Doc wording:
 * - 429 `TooManyRequestsException`, `ThrottlingException`/`Throttling`, `LimitExceededException` → deferred (SES gives no
 *   Retry-After: the retry schedule), pacing slowed — "Too many requests have been made to the operation" / "The request was
 *   denied due to request throttling"
 * - 5xx (`InternalFailure`, `ServiceUnavailable`, `InternalServiceErrorException`), timeouts, connection errors → deferred —
 *   "temporary failure of the server"
 * - `RequestExpired` (clock skew) → deferred — the SDK corrects its clock offset from the answer
 * - 403 `AccessDeniedException`, `UnrecognizedClientException`, `InvalidClientTokenId`, `SignatureDoesNotMatch`,
 *   `IncompleteSignature`, `ExpiredToken`, any other 401/403; no credentials found → held_service_error — "You do not have
 *   sufficient access to perform this action" / "The security token included in the request is invalid"
 * - 400 `MessageRejected` saying "not verified" → held_service_error (service test: `unverified_sender`) — "Email address is not
 *   verified. The following identities failed the check in region …"
 * - 400 `MailFromDomainNotVerifiedException` → held_service_error — "…because the sending domain isn't verified"
 * - 400 `AccountSuspendedException`, `SendingPausedException` → held_service_error — "…permanently restricted" / "…currently
 *   paused"
 * - 404 `NotFoundException` (the configuration set) → held_service_error — "The resource you attempted to access doesn't exist"
 * - 400 `MessageRejected` (other) → failed — "The message can't be sent because it contains invalid content"
 * - 400 `BadRequestException`, any other 4xx → failed — "The input you provided is invalid"
 * - endpoint name does not resolve (ENOTFOUND), TLS certificate refused → held_service_error — a setting to fix
 *
 * SES never refuses a recipient synchronously (a suppressed address is accepted, then bounces,
 * and the events say so), so there is no bounce row.
 *
 * Service test: `GetAccount` (GET /v2/email/account). A key allowed only ses:SendEmail fails it
 * with AccessDeniedException (`auth`, the message says so); `SendingEnabled: false` is `other`.
 */

export interface SesSettings {
  region: string;
  credentials: { accessKeyId: string; secretAccessKey: string } | undefined;
  configurationSet: string | undefined;
  endpoint: string | undefined;
}

const REGION = /^[a-z]{2}(-[a-z]+)+-\d{1,2}$/;
/** SES's rule for configuration set names: letters, digits, _ and -, at most 64. */
const CONFIGURATION_SET = /^[A-Za-z0-9_-]{1,64}$/;

/** `settings.ses`, checked (provider-mail.ts's readers); throws (the service is then held: brokenTransport) naming the field. */
export function readSesSettings(svc: Pick<Service, 'id' | 'settings'>): SesSettings {
  const block = settingsBlock(svc, 'ses');
  const given = (name: string): string | undefined =>
    block[name] === undefined || block[name] === null ? undefined : requiredString(block, 'ses', name);
  const region = requiredString(block, 'ses', 'region');
  if (!REGION.test(region)) throw new Error('ses.region: must be an AWS region such as eu-west-1');
  const accessKeyId = given('access_key_id');
  const secretAccessKey = given('secret_access_key');
  if ((accessKeyId === undefined) !== (secretAccessKey === undefined)) {
    throw new Error(
      "ses.access_key_id and ses.secret_access_key: give both, or neither for the AWS SDK's default credential chain",
    );
  }
  const configurationSet = given('configuration_set');
  if (configurationSet !== undefined && !CONFIGURATION_SET.test(configurationSet))
    throw new Error('ses.configuration_set: letters, digits, _ and - only, at most 64');
  // No default: without an endpoint the SDK derives https://email.<region>.amazonaws.com itself.
  const endpoint = given('endpoint') === undefined ? undefined : endpointOf(block, 'ses', '');
  return {
    region,
    credentials: accessKeyId !== undefined && secretAccessKey !== undefined ? { accessKeyId, secretAccessKey } : undefined,
    configurationSet,
    endpoint,
  };
}

export interface SesTransportOptions {
  /** Connect within 10 s; an answer within 30 s (a raw send of several MB included). Tests shorten them. */
  connectTimeoutMs: number;
  requestTimeoutMs: number;
}

const DEFAULTS: SesTransportOptions = { connectTimeoutMs: 10_000, requestTimeoutMs: 30_000 };

const require = createRequire(import.meta.url);

/**
 * The SES client, loaded by the first SES service rather than imported: ~4 MB of heap (~18 MB
 * of RSS in a fresh process) in every process that loads the transports, most of which have no
 * SES service. Its `main` is CommonJS, which is what an `import` of it loads too.
 */
function sesSdk(): typeof import('@aws-sdk/client-sesv2') {
  return require('@aws-sdk/client-sesv2') as typeof import('@aws-sdk/client-sesv2');
}

export function sesClient(s: SesSettings, o: SesTransportOptions = DEFAULTS): SESv2Client {
  return new (sesSdk().SESv2Client)({
    region: s.region,
    ...(s.endpoint !== undefined ? { endpoint: s.endpoint } : {}),
    ...(s.credentials !== undefined ? { credentials: s.credentials } : {}),
    maxAttempts: 1,
    // Keep-alive agents (the handler's default, 50 sockets); a request timeout that fails the
    // request rather than only logging a warning.
    requestHandler: {
      connectionTimeout: o.connectTimeoutMs,
      requestTimeout: o.requestTimeoutMs,
      socketTimeout: o.requestTimeoutMs,
      throwOnRequestTimeout: true,
    },
  });
}

export const sesTransport: TransportFactory = (service, context) => createSesTransport(DEFAULTS)(service, context);

export const createSesTransport =
  (options: SesTransportOptions): TransportFactory =>
  (service): Transport => {
    const settings = readSesSettings(service);
    const client = sesClient(settings, options);
    const { GetAccountCommand, SendEmailCommand } = sesSdk();
    const composer = rawComposer();
    // Sends in flight: close() waits for them, since client.destroy() would abort them mid-request
    // (a send SES may already have accepted, then retried: sent twice). Each ends within requestTimeoutMs.
    const inFlight = new Set<Promise<unknown>>();
    return {
      async send(mail) {
        const raw = await composer.compose(mail);
        const split = splitRecipients(mail, raw.recipients);
        const destination: Destination = {
          ...(split.to.length > 0 ? { ToAddresses: split.to } : {}),
          ...(split.cc.length > 0 ? { CcAddresses: split.cc } : {}),
          ...(split.bcc.length > 0 ? { BccAddresses: split.bcc } : {}),
        };
        try {
          const sending = client.send(
            new SendEmailCommand({
              FromEmailAddress: mail.email.from.address,
              Destination: destination,
              Content: { Raw: { Data: raw.bytes } },
              ...(settings.configurationSet !== undefined ? { ConfigurationSetName: settings.configurationSet } : {}),
              EmailTags: [{ Name: 'mailroom_message_id', Value: mail.messageId }],
            }),
          );
          inFlight.add(sending);
          const out = await sending.finally(() => inFlight.delete(sending));
          // A 200 is a hand-off even without an id: retrying it would send the message twice.
          const id = out.MessageId;
          return id !== undefined && id !== ''
            ? { response: `ses 200 ${id}`, providerMessageId: id }
            : { response: 'ses 200 (no MessageId)' };
        } catch (error) {
          const f = sesFailureOf(error);
          const c = classifySesError(f);
          throw new DeliveryError(c.kind, describeSesFailure(f), [], [], c.throttled ? { throttled: true } : {});
        }
      },
      async verify() {
        let enabled: boolean | undefined;
        try {
          enabled = (await client.send(new GetAccountCommand({}))).SendingEnabled;
        } catch (error) {
          const f = sesFailureOf(error);
          const hint =
            f.name === 'AccessDeniedException'
              ? ' (the test calls ses:GetAccount: a key allowed only to send is refused it, and may still send)'
              : '';
          const reason = sesTestReason(f);
          // What a send failing so would be retried for (5xx, throttling, no answer) is transient.
          throw new ServiceTestError(
            reason,
            `${describeSesFailure(f)}${hint}`,
            classifySesError(f).kind === 'temporary' || undefined,
          );
        }
        if (enabled === false)
          throw new ServiceTestError(
            'other',
            'ses: GetAccount answers SendingEnabled: false (sending is paused for this account in this region)',
          );
      },
      async close() {
        await Promise.allSettled([...inFlight]);
        client.destroy();
        composer.close();
      },
    };
  };
