import { Type } from '@sinclair/typebox';
import { organizationOverview, OVERVIEW_DAYS, type OverviewDays } from '../overview.js';
import type { App, AppServices } from '../../http/app-types.js';
import { responses, Timestamp } from '../../http/schemas.js';
import { ADMIN_ERRORS, ADMIN_SECURITY, ADMIN_TAGS, invalidFields, OrgParams, requireOrganization } from './common.js';

const Count = Type.Integer({ minimum: 0 });
const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()]);

const Rate = (what: string) =>
  Nullable(
    Type.Number({ minimum: 0, maximum: 1, description: `${what}, a fraction (0.021 = 2.1%); null when its denominator is 0` }),
  );

/** src/domain/rates.ts has the definitions and their reasons. */
const RateFigures = {
  sent: Type.Integer({
    minimum: 0,
    description:
      'Messages taken by their service: now sent (no outcome reported yet), delivered, bounced or complained. ' +
      'Failed messages are not counted (their retries ran out before any mailbox provider judged them)',
  }),
  delivered: Type.Integer({ minimum: 0, description: 'Delivered or complained (a complaint is about mail that arrived)' }),
  bounced: Type.Integer({ minimum: 0, description: 'Bounced (hard bounces)' }),
  complained: Type.Integer({ minimum: 0, description: 'Reported as spam by a recipient' }),
  delivery_rate: Rate('delivered / sent'),
  bounce_rate: Rate('bounced / sent'),
  complaint_rate: Rate('complained / delivered'),
};

const Rates = Type.Object(
  {
    range: Type.Object(RateFigures, { description: 'Over the whole range' }),
    daily: Type.Array(Type.Object({ date: Type.String({ format: 'date', description: 'A UTC day' }), ...RateFigures }), {
      description: 'One entry per UTC day, as `daily`: oldest first, today last, days with no message included',
    }),
  },
  {
    description:
      'Delivery, bounce and complaint rates of the messages created in the range (of `mode`), each message counted once ' +
      'by its status now',
  },
);

const Overview = Type.Object({
  organization_id: Type.String(),
  days: Type.Integer(),
  mode: Type.Union([Type.Literal('live'), Type.Literal('test')], {
    description: 'Whose messages `daily`, `rates`, `queue` and `held_messages` count: live or test, never both',
  }),
  generated_at: Timestamp,
  daily: Type.Array(
    Type.Object({
      date: Type.String({ format: 'date', description: 'A UTC day' }),
      accepted: Type.Integer({ description: 'Messages created that day' }),
      delivered: Count,
      bounced: Count,
      complained: Count,
      failed: Count,
      held: Type.Integer({ description: "Held for credits or for their service's error" }),
    }),
    {
      description:
        'One entry per UTC day, oldest first, today last, zeros included. Apart from ' +
        '`accepted`, each column counts the messages created that day that are in that status now',
    },
  ),
  rates: Rates,
  queue: Type.Object({
    depth: Type.Integer({ description: 'Queued messages of the organization (due now or waiting for a retry)' }),
    oldest_due_at: Nullable(Timestamp),
    oldest_due_age_seconds: Nullable(Type.Integer({ description: 'How long the oldest due message has waited for a worker' })),
  }),
  credits: Type.Object({
    balance: Nullable(
      Type.Integer({
        description: "Credits left; below zero when sends used the overdraft; null: the organization's credits are unlimited",
      }),
    ),
    overdraft: Type.Integer(),
    public_overdraft: Type.Boolean(),
    when_out_of_credits: Type.String(),
    hold_queue_limit: Type.Integer(),
    held: Type.Integer({ description: 'Messages held for lack of credits' }),
  }),
  held_messages: Type.Integer({ description: "Messages held now, for credits or for their service's error" }),
  retrying: Type.Object(
    {
      count: Type.Integer({
        description: 'Messages queued or sending after an attempt that failed (`status=retrying`), counted up to 100,000',
      }),
      oldest: Nullable(
        Type.Object({
          message_id: Type.String(),
          service_id: Type.String(),
          created_at: Timestamp,
          attempts: Type.Integer({ description: 'Attempts made so far' }),
          next_attempt_at: Nullable(Timestamp),
          last_error: Type.String({ description: 'Why its last attempt failed, in full' }),
        }),
      ),
    },
    {
      description:
        "Messages waiting on a provider that refused them for now (an outage): the queue's `oldest_due_at` misses them, " +
        'as their next attempt is not due yet',
    },
  ),
  services: Type.Array(
    Type.Object({
      id: Type.String(),
      provider: Type.String(),
      default: Type.Boolean(),
      breaker: Type.Union([Type.Literal('closed'), Type.Literal('half_open'), Type.Literal('open')]),
      breaker_scope: Type.Union([Type.Literal('shared'), Type.Literal('process')], {
        description:
          "shared: the breakers of every worker on MAILROOM_REDIS_URL; process: this process's own, moved only by a worker " +
          'running in it',
      }),
      last_error: Nullable(
        Type.Object(
          {
            at: Timestamp,
            message: Type.String(),
            message_id: Nullable(Type.String()),
          },
          { description: 'The newest failed, deferred or held_service_error event of a message of this service' },
        ),
      ),
    }),
  ),
});

const isOverviewDays = (n: number): n is OverviewDays => (OVERVIEW_DAYS as readonly number[]).includes(n);

export function registerOverviewRoutes(app: App, { store, clock, config, metrics }: AppServices): void {
  app.get(
    '/organizations/:org/overview',
    {
      schema: {
        tags: ADMIN_TAGS,
        security: ADMIN_SECURITY,
        summary: "Messages per day by status, the queue, credits, held messages and the services' health",
        params: OrgParams,
        querystring: Type.Object({
          days: Type.Integer({ enum: [...OVERVIEW_DAYS], default: 7, description: '7, 30 or 90' }),
          mode: Type.Union([Type.Literal('live'), Type.Literal('test')], {
            default: 'live',
            description: 'Count live messages (the default) or test ones',
          }),
        }),
        response: responses({ 200: Overview }, [...ADMIN_ERRORS, 'invalid_body']),
      },
    },
    async (request) => {
      const days = request.query.days;
      if (!isOverviewDays(days)) throw invalidFields([{ field: 'days', message: 'must be 7, 30 or 90' }], 'query');
      const org = await requireOrganization(store, request.params.org);
      return organizationOverview(
        {
          store,
          metrics,
          now: clock.now(),
          breakerScope: config.redisUrl === undefined ? 'process' : 'shared',
        },
        org.id,
        days,
        request.query.mode,
      );
    },
  );
}
