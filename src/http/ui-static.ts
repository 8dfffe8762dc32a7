import type { App, AppServices } from './app-types.js';

export async function registerUi(_app: App, _services: AppServices): Promise<void> {
  // Owned by a helper of issue 15; serves dist/ui under /ui/.
}
