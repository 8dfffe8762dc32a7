import { describe, expect, it } from 'vitest';
import { EVENT_SOURCES } from '../../src/domain/event-sources.js';
import { WEBHOOK_EVENT_TYPES } from '../../src/webhooks/types.js';
import { messageEventPayload, testEventPayload } from '../../src/webhooks/payload.js';
import { alertEventPayload } from '../../src/webhooks/alert-payload.js';
import { freshApp } from '../support/app.js';
import { Ajv } from 'ajv';

interface Operation {
  parameters: Array<{ name: string; in: string; required: boolean }>;
  requestBody: { content: Record<string, { schema: { $ref: string } }> };
  responses: Record<string, unknown>;
}
interface Document {
  openapi: string;
  webhooks: Record<string, { post: Operation }>;
  components: { schemas: Record<string, Record<string, unknown>> };
  paths: Record<string, Record<string, { tags?: string[]; security?: unknown[] }>>;
}

describe('OpenAPI document: outbound webhooks', () => {
  it('one webhook per event type, its three headers and a body schema every payload matches; the admin routes too', async () => {
    const t = await freshApp('sqlite');
    try {
      const res = await t.app.inject({ method: 'GET', url: '/v1/openapi.json' });
      expect(res.statusCode).toBe(200);
      const doc = res.json<Document>();
      expect(doc.openapi).toBe('3.1.0');
      expect(Object.keys(doc.webhooks).sort()).toEqual([...WEBHOOK_EVENT_TYPES].sort());
      // webhook-id is per event, not per endpoint.
      const idHeader = doc.webhooks['message.delivered']?.post.parameters.find((p) => p.name === 'webhook-id') as
        | { description?: string }
        | undefined;
      expect(idHeader?.description).toMatch(/^Unique per event: the same at every endpoint/);
      for (const [type, { post }] of Object.entries(doc.webhooks)) {
        expect(
          post.parameters.filter((p) => p.in === 'header' && p.required).map((p) => p.name),
          type,
        ).toEqual(['webhook-id', 'webhook-timestamp', 'webhook-signature']);
        const ref = post.requestBody.content['application/json']?.schema.$ref ?? '';
        const schema =
          type === 'webhook.test' ? 'WebhookTest' : type.startsWith('alert.') ? 'WebhookAlertEvent' : 'WebhookMessageEvent';
        expect(ref, type).toBe(`#/components/schemas/${schema}`);
        expect(Object.keys(post.responses)).toEqual(expect.arrayContaining(['2XX', '410']));
      }

      // The payload's `provider` names every source the record path takes (the simulator's too).
      const eventSchema = doc.components.schemas.WebhookMessageEvent as {
        properties: { data: { properties: { provider: { description: string } } } };
      };
      for (const source of EVENT_SOURCES) {
        expect(eventSchema.properties.data.properties.provider.description).toContain(source);
      }

      // What payload.ts builds validates against the documented schemas.
      const ajv = new Ajv({ strict: false, validateFormats: false });
      const messageEvent = ajv.compile(doc.components.schemas.WebhookMessageEvent ?? {});
      const bounced = JSON.parse(
        messageEventPayload({
          eventType: 'message.bounced',
          at: 1_767_225_600_000,
          messageId: 'msg_1',
          orgId: 'acme',
          templateId: 'contact',
          serviceId: 'ses',
          messageStatus: 'bounced',
          sequence: 4,
          mode: 'test',
          simulated: true,
          detail: JSON.stringify({
            recipient: 'ada@example.org',
            bounce_type: 'hard',
            reason: '550 5.1.1',
            provider: 'ses',
            status: '5.1.1',
          }),
        }),
      ) as unknown;
      expect(messageEvent(bounced), JSON.stringify(messageEvent.errors)).toBe(true);
      expect(messageEvent({ type: 'message.exploded', timestamp: 'x', data: {} })).toBe(false);
      const testEvent = ajv.compile(doc.components.schemas.WebhookTest ?? {});
      expect(testEvent(JSON.parse(testEventPayload('acme', 'wh_1', 1_767_225_600_000)) as unknown)).toBe(true);
      // Alerts (issue 29): a rate alert and a breaker alert as alert-payload.ts builds them.
      const alertEvent = ajv.compile(doc.components.schemas.WebhookAlertEvent ?? {});
      const rate = { percent: 6, threshold_percent: 5, count: 6, sample: 100, window_hours: 24 };
      for (const body of [
        alertEventPayload({ id: 1, orgId: 'acme', kind: 'bounce_rate', state: 'firing', at: 0, detail: { rate } }),
        alertEventPayload({
          id: 2,
          orgId: 'acme',
          kind: 'breaker_open',
          state: 'resolved',
          at: 0,
          detail: { service_id: 'ses' },
        }),
      ]) {
        expect(alertEvent(JSON.parse(body) as unknown), JSON.stringify(alertEvent.errors)).toBe(true);
      }

      const admin = '/admin/v1/organizations/{org}/webhooks';
      const routes = [
        [admin, 'get'],
        [admin, 'post'],
        [`${admin}/{id}`, 'get'],
        [`${admin}/{id}`, 'put'],
        [`${admin}/{id}`, 'patch'],
        [`${admin}/{id}`, 'delete'],
        [`${admin}/{id}/rotate-secret`, 'post'],
        [`${admin}/{id}/test`, 'post'],
        [`${admin}/{id}/enable`, 'post'],
        [`${admin}/{id}/deliveries`, 'get'],
        [`${admin}/{id}/replay`, 'post'],
        [`${admin}/deliveries`, 'get'],
        [`${admin}/deliveries/{delivery_id}`, 'get'],
        [`${admin}/deliveries/{delivery_id}/replay`, 'post'],
        [`${admin}/{id}/deliveries/{delivery_id}`, 'get'],
        [`${admin}/{id}/deliveries/{delivery_id}/replay`, 'post'],
      ] as const;
      for (const [p, method] of routes) {
        expect(doc.paths[p]?.[method], `${method} ${p}`).toMatchObject({
          tags: ['admin'],
          security: [{ adminToken: [] }, { adminSession: [] }],
        });
      }
    } finally {
      await t.cleanup();
    }
  });
});
