import type { App, AppServices } from '../../http/app-types.js';
import type { SendDeps } from '../../send/accept.js';
import { registerAlertRoutes } from './alerts.js';
import { adminTokenGate, installAdminAuth } from './auth.js';
import { registerCreditRoutes } from './credits.js';
import { registerKeyRoutes } from './keys.js';
import { registerListRoutes } from './lists.js';
import { registerSuppressionCsvRoutes } from './suppression-csv.js';
import { registerMessageExportRoutes } from './message-export.js';
import { registerMessageHistoryRoutes } from './message-history.js';
import { registerMessageBulkRoutes } from './message-bulk.js';
import { registerMessageRoutes } from './messages.js';
import { registerMessageSourceRoutes } from './message-source.js';
import { registerOrganizationRoutes } from './organizations.js';
import { registerOverviewRoutes } from './overview.js';
import { registerRequestLogRoutes } from './request-log.js';
import { registerServerRoutes } from './server.js';
import { registerServiceRoutes } from './services.js';
import { registerServiceTestRoutes } from './service-test.js';
import { registerSessionRoutes } from './session.js';
import { registerTemplateRenderRoutes } from './template-render.js';
import { registerTemplateSendTestRoutes } from './template-send-test.js';
import { registerTemplateVersionRoutes } from './template-versions.js';
import { registerTemplateRoutes } from './templates.js';
import { registerTestInboxRoutes } from './test-inbox.js';
import { registerWebhookRoutes } from './webhooks.js';

/**
 * The admin API, mounted under /admin/v1 in its own Fastify context: its token hook guards
 * these routes only, and none of the public API's key rules apply to them. Without
 * MAILROOM_ADMIN_TOKEN nothing is registered, so every /admin/v1 URL is a 404 `not_found` and
 * the OpenAPI document does not advertise an API that is switched off.
 */
export function registerAdminRoutes(app: App, services: AppServices, sendDeps: SendDeps): void {
  const token = services.config.adminToken;
  if (token === undefined) return;
  // One gate, so wrong tokens at sign-in and wrong bearers share one per-address limit.
  const gate = adminTokenGate(token, services.clock, services.signIns);
  installAdminAuth(app, services, gate);
  registerSessionRoutes(app, services, gate);
  registerOrganizationRoutes(app, services);
  registerKeyRoutes(app, services);
  registerServiceRoutes(app, services);
  registerServiceTestRoutes(app, services);
  registerTemplateRoutes(app, services);
  registerTemplateVersionRoutes(app, services);
  registerTemplateRenderRoutes(app, sendDeps);
  registerTemplateSendTestRoutes(app, sendDeps);
  registerCreditRoutes(app, services);
  registerListRoutes(app, services);
  registerSuppressionCsvRoutes(app, services);
  registerMessageRoutes(app, services);
  registerMessageBulkRoutes(app, services);
  registerMessageHistoryRoutes(app, services);
  registerMessageExportRoutes(app, services);
  registerMessageSourceRoutes(app, services);
  registerOverviewRoutes(app, services);
  registerTestInboxRoutes(app, services);
  registerRequestLogRoutes(app, services);
  registerServerRoutes(app, services);
  registerWebhookRoutes(app, services);
  registerAlertRoutes(app, services);
}
