import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/env.js';
import { messageEventPayload, testEventPayload, webhookIdOf } from '../../src/webhooks/payload.js';
import { DEFAULT_RETRY_SCHEDULE_SECONDS, nextAttemptAt, parseRetrySchedule } from '../../src/webhooks/schedule.js';

describe('webhook retry schedule', () => {
  it('defaults to 0 s, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h (≈ 27 h in all)', () => {
    expect(DEFAULT_RETRY_SCHEDULE_SECONDS).toEqual([0, 5, 300, 1800, 7200, 18_000, 36_000, 36_000]);
    const total = DEFAULT_RETRY_SCHEDULE_SECONDS.reduce((a, b) => a + b, 0);
    expect(total / 3600).toBeGreaterThan(27);
    expect(loadConfig({}).webhooks.retryScheduleSeconds).toEqual(DEFAULT_RETRY_SCHEDULE_SECONDS);
  });

  it('MAILROOM_WEBHOOK_RETRY_SCHEDULE replaces it; a bad value stops the start naming the variable', () => {
    expect(loadConfig({ MAILROOM_WEBHOOK_RETRY_SCHEDULE: '0, 1,1' }).webhooks.retryScheduleSeconds).toEqual([0, 1, 1]);
    for (const bad of ['1,,2', '-1', '1.5', 'soon', '172801', '0,5m']) {
      expect(() => loadConfig({ MAILROOM_WEBHOOK_RETRY_SCHEDULE: bad })).toThrow(ConfigError);
      expect(parseRetrySchedule(bad).ok).toBe(false);
    }
    expect(() => loadConfig({ MAILROOM_WEBHOOK_RETRY_SCHEDULE: 'x' })).toThrow(/MAILROOM_WEBHOOK_RETRY_SCHEDULE/);
  });

  it("the first entry is the first attempt's delay, made at once: anything but 0 stops the start, saying so", () => {
    for (const bad of ['5,300', '1', ' 30 ,0']) {
      expect(parseRetrySchedule(bad).ok).toBe(false);
      expect(() => loadConfig({ MAILROOM_WEBHOOK_RETRY_SCHEDULE: bad })).toThrow(
        /MAILROOM_WEBHOOK_RETRY_SCHEDULE's first entry .* must be 0/,
      );
    }
    expect(parseRetrySchedule('0')).toEqual({ ok: true, seconds: [0] });
    expect(parseRetrySchedule('00,5')).toEqual({ ok: true, seconds: [0, 5] });
  });

  it('the other MAILROOM_WEBHOOK_* settings, with their defaults', () => {
    expect(loadConfig({}).webhooks).toMatchObject({
      attemptTimeoutMs: 15_000,
      secretGraceMs: 86_400_000,
      disableAfterMs: 5 * 86_400_000,
      endpointConcurrency: 4,
      maxInFlight: 64,
      urlPolicy: { production: false, allowPrivate: false },
    });
    const set = loadConfig({
      MAILROOM_ENV: 'production',
      MAILROOM_WEBHOOK_ALLOW_PRIVATE: 'true',
      MAILROOM_WEBHOOK_TIMEOUT_SECONDS: '2',
      MAILROOM_WEBHOOK_SECRET_GRACE_SECONDS: '60',
      MAILROOM_WEBHOOK_DISABLE_AFTER_SECONDS: '3600',
      MAILROOM_WEBHOOK_ENDPOINT_CONCURRENCY: '2',
      MAILROOM_WEBHOOK_MAX_IN_FLIGHT: '10',
    }).webhooks;
    expect(set).toMatchObject({
      attemptTimeoutMs: 2000,
      secretGraceMs: 60_000,
      disableAfterMs: 3_600_000,
      endpointConcurrency: 2,
      maxInFlight: 10,
      urlPolicy: { production: true, allowPrivate: true },
    });
    expect(() => loadConfig({ MAILROOM_WEBHOOK_ALLOW_PRIVATE: 'yes' })).toThrow(/MAILROOM_WEBHOOK_ALLOW_PRIVATE/);
    expect(() => loadConfig({ MAILROOM_WEBHOOK_ENDPOINT_CONCURRENCY: '0' })).toThrow(/MAILROOM_WEBHOOK_ENDPOINT_CONCURRENCY/);
  });

  it('the next attempt: the delay after the attempts made, up to 10% jitter on top, never before; none once used up', () => {
    const schedule = [0, 5, 300];
    expect(nextAttemptAt(schedule, 1, 1000, () => 0)).toBe(6000);
    expect(nextAttemptAt(schedule, 1, 1000, () => 0.999)).toBe(1000 + 5000 + 499);
    expect(nextAttemptAt(schedule, 2, 0, () => 0.5)).toBe(300_000 + 15_000);
    expect(nextAttemptAt(schedule, 3, 0, () => 0)).toBeUndefined();
  });
});

describe('webhook payload', () => {
  it('lifts recipient, bounce_type, reason and provider; the rest of the detail is in details', () => {
    const body = JSON.parse(
      messageEventPayload({
        eventType: 'message.bounced',
        at: Date.UTC(2026, 0, 1, 12),
        messageId: 'msg_1',
        orgId: 'acme',
        templateId: 'contact',
        serviceId: 'ses',
        messageStatus: 'bounced',
        sequence: 4,
        mode: 'live',
        simulated: false,
        detail: JSON.stringify({
          provider: 'ses',
          recipient: 'ada@example.org',
          bounce_type: 'hard',
          reason: '550 5.1.1',
          status: '5.1.1',
        }),
      }),
    ) as unknown;
    expect(body).toEqual({
      type: 'message.bounced',
      timestamp: '2026-01-01T12:00:00.000Z',
      data: {
        message_id: 'msg_1',
        organization_id: 'acme',
        template_id: 'contact',
        service_id: 'ses',
        status: 'bounced',
        sequence: 4,
        mode: 'live',
        recipient: 'ada@example.org',
        bounce_type: 'hard',
        reason: '550 5.1.1',
        provider: 'ses',
        details: { status: '5.1.1' },
      },
    });
    expect(JSON.parse(testEventPayload('acme', 'wh_1', 0))).toEqual({
      type: 'webhook.test',
      timestamp: '1970-01-01T00:00:00.000Z',
      data: { organization_id: 'acme', endpoint_id: 'wh_1' },
    });
    expect(webhookIdOf({ id: 7, message_id: 'msg_1', sequence: 2 })).toBe('msg_1.2');
    expect(webhookIdOf({ id: 7, message_id: null, sequence: null })).toBe('test_7');
  });
});
