import type { App, AppServices } from '../../http/app-types.js';

export function registerAdminRoutes(_app: App, _services: AppServices): void {}
