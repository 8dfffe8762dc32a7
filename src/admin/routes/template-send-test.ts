import type { App } from '../../http/app-types.js';
import type { SendDeps } from '../../send/accept.js';

export function registerTemplateSendTestRoutes(_app: App, _deps: SendDeps): void {
  // Owned by a helper of issue 15; replaced by the real routes.
}
