import { type Static, Type } from '@sinclair/typebox';
import { DEFAULT_ALERT_SETTINGS, MAX_ALERT_WINDOW_HOURS, type AlertSettings } from '../domain/alerts.js';

/**
 * An organization's alert settings (issue 29) as the admin API's PUT and the config file's
 * `alerts:` take them: every field optional, a field left out takes its default
 * (DEFAULT_ALERT_SETTINGS), so `alerts: {}` is the defaults.
 */
const Percent = (what: string, def: number) =>
  Type.Union([Type.Number({ exclusiveMinimum: 0, maximum: 100 }), Type.Null()], {
    description: `${what}, in percent of handed-off messages (over 0, at most 100); null turns it off. Default ${def}`,
  });

export const AlertSettingsInput = Type.Object(
  {
    bounce_rate_percent: Type.Optional(Percent('Fire alert.bounce_rate at this bounce rate or more', 5)),
    complaint_rate_percent: Type.Optional(Percent('Fire alert.complaint_rate at this complaint rate or more', 0.1)),
    min_sample: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 1_000_000,
        description: 'Rate alerts fire only over at least this many handed-off messages in the window. Default 100',
      }),
    ),
    window_hours: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: MAX_ALERT_WINDOW_HOURS,
        description:
          'The rolling window the rates are counted over (messages created in it), ' +
          `1–${MAX_ALERT_WINDOW_HOURS} h. Default 24`,
      }),
    ),
    breaker_open: Type.Optional(
      Type.Boolean({ description: "Fire alert.breaker_open when a service's breaker opens. Default true" }),
    ),
    endpoint_disabled: Type.Optional(
      Type.Boolean({ description: 'Fire alert.endpoint_disabled when the dispatcher disables a webhook endpoint. Default true' }),
    ),
  },
  { additionalProperties: false },
);
export type AlertSettingsInput = Static<typeof AlertSettingsInput>;

/** The settings a (checked) input stands for: the defaults where it says nothing. */
export function alertSettingsOf(input: AlertSettingsInput): AlertSettings {
  const d = DEFAULT_ALERT_SETTINGS;
  return {
    bounce_rate_percent: input.bounce_rate_percent === undefined ? d.bounce_rate_percent : input.bounce_rate_percent,
    complaint_rate_percent: input.complaint_rate_percent === undefined ? d.complaint_rate_percent : input.complaint_rate_percent,
    min_sample: input.min_sample ?? d.min_sample,
    window_hours: input.window_hours ?? d.window_hours,
    breaker_open: input.breaker_open ?? d.breaker_open,
    endpoint_disabled: input.endpoint_disabled ?? d.endpoint_disabled,
  };
}
