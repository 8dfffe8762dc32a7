import type { FunctionComponent } from 'preact';
import { lazyPage } from './components/lazy-page';
import { Keys } from './pages/keys';
import { MessageDetail } from './pages/message-detail';
import { Messages } from './pages/messages';
import { OrganizationEdit } from './pages/organization-edit';
import { Organizations } from './pages/organizations';
import { Overview } from './pages/overview';
import type { PageProps } from './pages/page-props';
import { ServiceEdit } from './pages/service-edit';
import { RequestLog } from './pages/request-log';
import { Services } from './pages/services';
import { Suppressions } from './pages/suppressions';
import { Templates } from './pages/templates';
import { TestInbox } from './pages/test-inbox';
import { TestInboxMessage } from './pages/test-inbox-message';
import { WebhookDeliveryPage } from './pages/webhook-delivery';
import { WebhookDetail } from './pages/webhook-detail';
import { Webhooks } from './pages/webhooks';

// CodeMirror comes with the template editor: in its own chunk, fetched when the editor opens.
const TemplateEditor = lazyPage<PageProps>(() => import('./pages/template-editor').then((m) => m.TemplateEditor));

/**
 * Every screen and its hash route, most specific first. `:org` is an organization id; `new`
 * as an id opens the page's create form (`#/orgs/new`, `#/orgs/acme/templates/new`).
 */
export const ROUTES: ReadonlyArray<readonly [string, FunctionComponent<PageProps>, string]> = [
  ['/', Organizations, 'Organizations'],
  ['/orgs', Organizations, 'Organizations'],
  ['/orgs/new', OrganizationEdit, 'New organization'],
  ['/orgs/:org', Overview, 'Overview'],
  ['/orgs/:org/settings', OrganizationEdit, 'Settings'],
  ['/orgs/:org/keys', Keys, 'Keys'],
  ['/orgs/:org/services', Services, 'Services'],
  ['/orgs/:org/services/:id', ServiceEdit, 'Service'],
  ['/orgs/:org/templates', Templates, 'Templates'],
  ['/orgs/:org/templates/:id', TemplateEditor, 'Template'],
  ['/orgs/:org/messages', Messages, 'Messages'],
  ['/orgs/:org/messages/:id', MessageDetail, 'Message'],
  ['/orgs/:org/test-inbox', TestInbox, 'Test inbox'],
  ['/orgs/:org/test-inbox/:id', TestInboxMessage, 'Captured message'],
  ['/orgs/:org/request-log', RequestLog, 'Request log'],
  ['/orgs/:org/suppressions', Suppressions, 'Suppressions'],
  ['/orgs/:org/webhooks', Webhooks, 'Webhooks'],
  ['/orgs/:org/webhooks/:id', WebhookDetail, 'Webhook'],
  ['/orgs/:org/webhooks/:id/deliveries/:delivery', WebhookDeliveryPage, 'Webhook delivery'],
];

/** The organization's sections, in the navigation's order. */
export const ORG_SECTIONS: ReadonlyArray<readonly [string, string]> = [
  ['', 'Overview'],
  ['templates', 'Templates'],
  ['messages', 'Messages'],
  ['test-inbox', 'Test inbox'],
  ['request-log', 'Request log'],
  ['services', 'Services'],
  ['keys', 'Keys'],
  ['suppressions', 'Suppressions'],
  ['webhooks', 'Webhooks'],
  ['settings', 'Settings'],
];
