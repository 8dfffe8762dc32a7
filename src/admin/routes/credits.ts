import { Type } from '@sinclair/typebox';
import { OUT_OF_CREDIT_MODES } from '../../domain/types.js';
import type { App, AppServices } from '../../http/app-types.js';
import { responses } from '../../http/schemas.js';
import { creditStatus } from '../../credits/balance.js';
import { addCredits } from '../../credits/top-up.js';
import { ADMIN_BODY_ERRORS, ADMIN_ERRORS, ADMIN_SECURITY, ADMIN_TAGS, OrgParams } from './common.js';

const TopUpInput = Type.Object(
  {
    amount: Type.Integer({ minimum: 1, maximum: 1_000_000_000, description: 'Credits to add' }),
  },
  { additionalProperties: false },
);

const TopUpResult = Type.Object({
  credits: Type.Integer({ description: 'Balance after the top-up and the releases it paid for' }),
  released: Type.Array(Type.String(), { description: 'Held messages released by this top-up, oldest first' }),
});

const CreditStatusResource = Type.Object({
  org_id: Type.String(),
  credits: Type.Integer({
    description: 'Credits left; below zero when sends used the overdraft. Kept, and unused, while `unlimited` is true',
  }),
  unlimited: Type.Boolean({
    description:
      "The organization's `credits` setting is `unlimited`: sends take no credit and are never held or refused for one",
  }),
  overdraft: Type.Integer({ description: 'How far below zero private-key sends may take the balance' }),
  public_overdraft: Type.Boolean({ description: 'Whether public-key sends may use the overdraft too' }),
  when_out_of_credits: Type.Union(OUT_OF_CREDIT_MODES.map((m) => Type.Literal(m))),
  hold_queue_limit: Type.Integer({ description: 'Most messages held at once in hold mode' }),
  held: Type.Integer({ description: 'Messages held for lack of credits now' }),
});

export function registerCreditRoutes(app: App, { store }: AppServices): void {
  app.get(
    '/organizations/:org/credits',
    {
      schema: {
        tags: ADMIN_TAGS,
        security: ADMIN_SECURITY,
        summary: 'Credit balance, overdraft, out-of-credit mode and number of held messages (`mailroom credits show`)',
        params: OrgParams,
        response: responses({ 200: CreditStatusResource }, ADMIN_ERRORS),
      },
    },
    async (request) => creditStatus(store, request.params.org),
  );

  app.post(
    '/organizations/:org/credits',
    {
      schema: {
        tags: ADMIN_TAGS,
        security: ADMIN_SECURITY,
        summary: 'Add credits; held messages are released oldest first while the balance allows',
        description:
          'With credits `unlimited` the balance still grows (it is what metering starts from when switched back), ' +
          'and nothing is held to release.',
        params: OrgParams,
        body: TopUpInput,
        response: responses({ 200: TopUpResult }, ADMIN_BODY_ERRORS),
      },
    },
    async (request) => addCredits(store, request.params.org, request.body.amount),
  );
}
