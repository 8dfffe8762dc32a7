import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type {
  FastifyBaseLogger, FastifyInstance, RawReplyDefaultExpression, RawRequestDefaultExpression, RawServerDefault,
} from 'fastify';
import type { Config } from '../config/env.js';
import type { Clock } from '../domain/clock.js';
import type { Store } from '../storage/store.js';

/** What the HTTP layer needs from the outside world; main.ts and tests build it. */
export interface AppServices {
  config: Config;
  store: Store;
  clock: Clock;
}

export type App = FastifyInstance<
  RawServerDefault, RawRequestDefaultExpression, RawReplyDefaultExpression, FastifyBaseLogger, TypeBoxTypeProvider
>;
