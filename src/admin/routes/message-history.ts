import type { App, AppServices } from '../../http/app-types.js';

export function registerMessageHistoryRoutes(_app: App, _services: AppServices): void {
  // Owned by a helper of issue 15; replaced by the real routes.
}
