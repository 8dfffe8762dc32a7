import type { App, AppServices } from '../../http/app-types.js';
import { installAdminAuth } from './auth.js';
import { registerCreditRoutes } from './credits.js';
import { registerKeyRoutes } from './keys.js';
import { registerListRoutes } from './lists.js';
import { registerMessageRoutes } from './messages.js';
import { registerOrganizationRoutes } from './organizations.js';
import { registerServiceRoutes } from './services.js';
import { registerServiceTestRoutes } from './service-test.js';
import { registerTemplateRoutes } from './templates.js';
import { registerWebhookRoutes } from './webhooks.js';

/**
 * The admin API, mounted under /admin/v1 in its own Fastify context: its token hook guards
 * these routes only, and none of the public API's key rules apply to them. Without
 * MAILROOM_ADMIN_TOKEN nothing is registered, so every /admin/v1 URL is a 404 `not_found` and
 * the OpenAPI document does not advertise an API that is switched off.
 */
export function registerAdminRoutes(app: App, services: AppServices): void {
  const token = services.config.adminToken;
  if (token === undefined) return;
  installAdminAuth(app, token);
  registerOrganizationRoutes(app, services);
  registerKeyRoutes(app, services);
  registerServiceRoutes(app, services);
  registerServiceTestRoutes(app, services);
  registerTemplateRoutes(app, services);
  registerCreditRoutes(app, services);
  registerListRoutes(app, services);
  registerMessageRoutes(app, services);
  registerWebhookRoutes(app, services);
}
