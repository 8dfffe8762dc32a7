import { Type } from '@sinclair/typebox';
import type { App, AppServices } from '../../http/app-types.js';
import { responses } from '../../http/schemas.js';
import { addCredits } from '../../credits/top-up.js';
import { ADMIN_BODY_ERRORS, ADMIN_SECURITY, ADMIN_TAGS, OrgParams } from './common.js';

const TopUpInput = Type.Object({
  amount: Type.Integer({ minimum: 1, maximum: 1_000_000_000, description: 'Credits to add' }),
}, { additionalProperties: false });

const TopUpResult = Type.Object({
  credits: Type.Integer({ description: 'Balance after the top-up and the releases it paid for' }),
  released: Type.Array(Type.String(), { description: 'Held messages released by this top-up, oldest first' }),
});

export function registerCreditRoutes(app: App, { store }: AppServices): void {
  app.post('/organizations/:org/credits', {
    schema: {
      tags: ADMIN_TAGS,
      security: ADMIN_SECURITY,
      summary: 'Add credits; held messages are released oldest first while the balance allows',
      params: OrgParams,
      body: TopUpInput,
      response: responses({ 200: TopUpResult }, ADMIN_BODY_ERRORS),
    },
  }, async (request) => addCredits(store, request.params.org, request.body.amount));
}
