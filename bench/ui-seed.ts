import Database from 'better-sqlite3';
import { applyConfig } from '../src/admin/apply.js';
import { loadConfig } from '../src/config/env.js';
import type { ConfigFile } from '../src/resources/inputs.js';
import { systemClock } from '../src/domain/clock.js';
import { openStore } from '../src/storage/store.js';

const DAY = 86_400_000;
export const BENCH_ORG = 'acme';

/** A mostly healthy organization's status mix (the same as the admin API measurement's). */
const MIX: ReadonlyArray<readonly [string, number]> = [
  ['delivered', 0.7],
  ['sent', 0.1],
  ['bounced', 0.05],
  ['complained', 0.01],
  ['failed', 0.04],
  ['held', 0.02],
  ['held_service_error', 0.01],
  ['queued', 0.02],
  ['discarded', 0.05],
];
/**
 * The queue of a healthy organization: what came in over the last few minutes, not messages of
 * past weeks. A drawn `queued` older than this is delivered instead, and the last RECENT_QUEUED
 * messages are queued within it (some retrying after an error).
 */
const QUEUED_WITHIN = 300_000;
const RECENT_QUEUED = 14;
/** Each service's failure as its transport words it (SMTP's socket error, src/delivery/transports/http-errors.ts). */
const SERVICE_ERRORS: Readonly<Record<'relay' | 'postmark', string>> = {
  relay: 'connect ECONNREFUSED 10.0.0.9:587',
  postmark: 'HTTP 503 Service Unavailable',
};
const TEMPLATE_IDS = ['contact', 'welcome', 'receipt', 'password-reset'] as const;
/** Fifteen of these make a message body of a realistic size for a transactional email. */
const BODY_LINE = 'Hello there, this is a message of a realistic size for a transactional email.';

function statusAt(r: number): string {
  let acc = 0;
  for (const [s, p] of MIX) {
    acc += p;
    if (r < acc) return s;
  }
  return 'delivered';
}

type OrgInput = ConfigFile['organizations'][number];
type TemplateInput = NonNullable<OrgInput['templates']>[number];

/** `required` false: the editor's preview renders with empty samples (the bench times a full render). */
function template(id: string, subject: string, required = true): TemplateInput {
  return {
    id,
    subject,
    to: required ? '{{email}}' : 'customer@example.org',
    from_email: 'noreply@acme.test',
    reply_to: 'support@acme.test',
    html: `<h1>${subject}</h1><p>Hello {{name}},</p><p>{{message}}</p><p>The Acme team</p>`,
    text: `${subject}\n\nHello {{name}},\n\n{{message}}\n\nThe Acme team`,
    strict_params: true,
    allow_dynamic_recipients: required,
    params: [
      { name: 'name', type: 'string', required, max_length: 100 },
      { name: 'email', type: 'email', required },
      { name: 'message', type: 'string', required },
    ],
  };
}

export interface SeedResult {
  /** A delivered message from the last three days (three events: queued, sent, delivered). */
  sampleMessageId: string;
  messages: number;
  seconds: number;
}

/**
 * Seeds `count` messages of one organization over the last 90 days into the SQLite database of
 * `dataDir`. The organization, keys, services and templates go through applyConfig (the path
 * operators use); the messages, their content, recipients and events are written straight into
 * the same tables with prepared statements in one transaction, since 100,000 sends through the
 * API would take minutes. Rows are shaped like the ones a send and a delivery write, so the
 * history's indexes are exercised as in production.
 */
export async function seedUiBench(dataDir: string, count: number): Promise<SeedResult> {
  const started = performance.now();
  const config = loadConfig({ MAILROOM_DATA_DIR: dataDir, MAILROOM_LOG_LEVEL: 'warn' });
  const store = await openStore(config.databaseUrl, { clock: systemClock });
  await applyConfig(store, {
    organizations: [
      {
        id: BENCH_ORG,
        name: 'Acme',
        plan: 'pro',
        credits: 250_000,
        keys: [
          { type: 'public', key: 'pk_bench_public_0001' },
          { type: 'private', key: 'sk_bench_private_key_000000000000' },
        ],
        // Never contacted: the bench runs with the worker off.
        services: [
          { id: 'relay', provider: 'smtp', default: true, smtp: { host: 'smtp.acme.internal', port: 587 } },
          { id: 'postmark', provider: 'postmark', postmark: { server_token: 'bench-token-never-used' } },
        ],
        templates: [
          template('contact', 'Message from {{name}}'),
          template('welcome', 'Welcome to Acme, {{name}}'),
          template('receipt', 'Your Acme receipt', false),
          template('password-reset', 'Reset your Acme password'),
        ],
      },
    ],
  });
  await store.close();

  const file = config.databaseUrl.slice('sqlite:'.length);
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  const insertMessage =
    db.prepare(`insert into messages (id, org_id, template_id, service_id, status, status_token_hash, key_type, subject,
    header_message_id, credit_taken, attempts, next_attempt_at, lease_until, last_error, idempotency_key, created_at,
    updated_at, sent_at, provider_message_id)
    values (@id, @org_id, @template_id, @service_id, @status, @status_token_hash, @key_type, @subject, @header_message_id,
    @credit_taken, @attempts,
    @next_attempt_at, null, @last_error, null, @created_at, @updated_at, @sent_at, @provider_message_id)`);
  const insertContent = db.prepare('insert into message_contents (message_id, content, attachments) values (?, ?, null)');
  const insertRecipient = db.prepare(
    'insert into message_recipients (message_id, org_id, kind, email, created_at) values (?, ?, ?, ?, ?)',
  );
  const insertEvent = db.prepare('insert into message_events (message_id, type, at, detail) values (?, ?, ?, ?)');
  const insertSuppression = db.prepare(
    'insert or ignore into suppressions (org_id, email, reason, created_at, message_id) values (?, ?, ?, ?, ?)',
  );

  // A fixed LCG: the same data on every run, so runs compare.
  let seed = 1;
  const rand = (): number => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed / 2147483648;
  };
  const now = Date.now();
  let sampleMessageId = '';
  db.transaction(() => {
    for (let i = 0; i < count; i++) {
      const id = `msg_${String(i).padStart(8, '0')}${Math.floor(rand() * 1e9).toString(36)}`;
      const recent = i >= count - RECENT_QUEUED;
      const created = now - Math.floor(rand() * (recent ? QUEUED_WITHIN : 90 * DAY));
      const drawn = statusAt(rand());
      const status = recent ? 'queued' : drawn === 'queued' && created < now - QUEUED_WITHIN ? 'delivered' : drawn;
      const templateId = TEMPLATE_IDS[Math.floor(rand() * TEMPLATE_IDS.length)] ?? 'contact';
      const to = `user${Math.floor(rand() * 5000)}@example.org`;
      const cc = rand() < 0.1 ? `team${Math.floor(rand() * 50)}@example.org` : undefined;
      const service = rand() < 0.8 ? 'relay' : 'postmark';
      const failing = ['failed', 'held_service_error', 'bounced'].includes(status) || (status === 'queued' && rand() < 0.3);
      const error = failing ? (status === 'bounced' ? '550 5.1.1 mailbox unavailable' : SERVICE_ERRORS[service]) : null;
      const sent = ['delivered', 'sent', 'bounced', 'complained'].includes(status);
      const subject = `Hello User ${i % 5000}, about your request`;
      insertMessage.run({
        id,
        org_id: BENCH_ORG,
        template_id: templateId,
        service_id: service,
        status,
        status_token_hash: `h${i}`,
        key_type: rand() < 0.7 ? 'public' : 'private',
        subject,
        header_message_id: `<${id}@acme.test>`,
        credit_taken: status === 'discarded' ? 0 : 1,
        attempts: failing ? 3 : 1,
        next_attempt_at: status === 'queued' ? created + 60_000 : null,
        last_error: error,
        created_at: created,
        updated_at: created + 5000,
        sent_at: sent ? created + 1000 : null,
        provider_message_id: sent ? `prov-${i}` : null,
      });
      insertContent.run(
        id,
        JSON.stringify({
          subject,
          from: { name: 'Acme', address: 'noreply@acme.test' },
          reply_to: [{ name: '', address: 'support@acme.test' }],
          to: [{ name: '', address: to }],
          cc: cc === undefined ? [] : [{ name: '', address: cc }],
          bcc: [],
          html: `<h1>${subject}</h1>${`<p>${BODY_LINE}</p>`.repeat(15)}`,
          text: `${subject}\n\n${`${BODY_LINE}\n`.repeat(15)}`,
        }),
      );
      insertRecipient.run(id, BENCH_ORG, 'to', to, created);
      if (cc !== undefined) insertRecipient.run(id, BENCH_ORG, 'cc', cc, created);
      insertEvent.run(id, 'queued', created, null);
      if (sent)
        insertEvent.run(id, 'sent', created + 1000, JSON.stringify({ provider: service, response: '250 2.0.0 OK queued' }));
      if (status === 'delivered')
        insertEvent.run(id, 'delivered', created + 5000, JSON.stringify({ provider: service, recipient: to }));
      if (status === 'bounced') {
        insertEvent.run(id, 'bounced', created + 5000, JSON.stringify({ recipient: to, reason: error, hard: true }));
        insertSuppression.run(BENCH_ORG, to, 'hard_bounce', created + 5000, id);
      }
      if (status === 'complained') {
        insertEvent.run(id, 'complained', created + 5000, JSON.stringify({ recipient: to, provider: service }));
        insertSuppression.run(BENCH_ORG, to, 'complaint', created + 5000, id);
      }
      if (status === 'failed' || status === 'held_service_error')
        insertEvent.run(id, status, created + 5000, JSON.stringify({ reason: error }));
      if (status === 'held') insertEvent.run(id, 'held', created, JSON.stringify({ reason: 'hold mode' }));
      if (status === 'delivered' && created > now - 3 * DAY) sampleMessageId = id;
    }
  })();
  // No ANALYZE: mailroom never runs it, so the query plans are the ones production gets.
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
  return { sampleMessageId, messages: count, seconds: (performance.now() - started) / 1000 };
}
