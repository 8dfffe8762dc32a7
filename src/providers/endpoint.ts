import * as Type from '@sinclair/typebox';
import { LOOPBACK_HOST_PATTERN } from '../net/loopback-pattern.js';

/**
 * An API base URL. The service's secret goes there with every request, so plain http is only
 * for a loopback host (127.0.0.0/8, [::1], localhost and names under it: a local proxy, the tests'
 * fakes; the one rule of net/loopback.ts); anything
 * else must be https. The host is matched as written: `http://127.0.0.1@evil.example` has a `@`
 * where the port or path must be, and `http://localhost.evil.example` a `.` — both refused.
 */
const ENDPOINT_PATTERN = `^(https://[^/?#\\s]+|http://(${LOOPBACK_HOST_PATTERN})(:[0-9]{1,5})?)(/[^?#\\s]*)?$`;
const ENDPOINT_RULE = new RegExp(ENDPOINT_PATTERN);

/** The same rule for a stored value (a row written before the rule existed must not send either). */
export const isAllowedEndpoint = (url: string): boolean => url.length <= 2048 && ENDPOINT_RULE.test(url);

/** Every HTTP provider's optional `endpoint` setting. */
export const Endpoint = Type.Optional(
  Type.String({
    pattern: ENDPOINT_PATTERN,
    maxLength: 2048,
    description:
      "Replaces the API's base URL (a regional endpoint, a proxy, a test server): https, or http to a loopback host " +
      '(127.0.0.0/8, [::1], localhost or a name under it); no query',
  }),
);

/** `endpoint` as GET shows it. */
export const EndpointView = Type.Optional(Type.String());

export const ENDPOINT_LABEL = {
  label: 'Endpoint',
  hint: 'Optional: replaces the API base URL (https, or http to a loopback host).',
} as const;
