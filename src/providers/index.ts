import type { ProviderDescriptor } from './descriptor.js';
import { mailgun } from './mailgun.js';
import { outbox } from './outbox.js';
import { postmark } from './postmark.js';
import { resend } from './resend.js';
import { sendgrid } from './sendgrid.js';
import { ses } from './ses.js';
import { smtp } from './smtp.js';

/**
 * The registry: every provider a service may name, in the order schemas and lists show them.
 * A new provider is four files: its descriptor here (src/providers/<name>.ts) and one line in
 * this list, its transport (src/delivery/transports/<name>.ts, exporting `<name>Transport`) and
 * its events source (src/events/sources/<name>.ts, exporting `<name>Source`). Every list and
 * schema that names providers is derived from this one (test/providers/registry.test.ts).
 */
export const PROVIDERS = [smtp, outbox, ses, postmark, sendgrid, mailgun, resend] as const;

type Registered = (typeof PROVIDERS)[number];
export type ProviderName = Registered['name'];
/** Providers with a settings block of their name. */
export type SettingsProvider = Extract<Registered, { settings: object }>;
/** Providers reached over an HTTP API (issue 14). */
export type HttpProvider = Extract<Registered, { kind: 'http' }>;
export type HttpProviderName = HttpProvider['name'];
/** Providers whose webhooks a service's `events.source` may name. */
export type WebhookSource = Extract<Registered, { events: object }>['name'];

/** The registry widened, for code that walks it without caring which provider is which. */
export const DESCRIPTORS: readonly ProviderDescriptor[] = PROVIDERS;

export const PROVIDER_NAMES = PROVIDERS.map((p) => p.name) as readonly ProviderName[];
export const HTTP_PROVIDERS = PROVIDERS.filter((p): p is HttpProvider => p.kind === 'http');
export const HTTP_PROVIDER_NAMES = HTTP_PROVIDERS.map((p) => p.name) as readonly HttpProviderName[];
export const SETTINGS_PROVIDERS = PROVIDERS.filter((p): p is SettingsProvider => 'settings' in p);
export const WEBHOOK_SOURCES = PROVIDERS.flatMap((p) => ('events' in p ? [p.name] : [])) as readonly WebhookSource[];

export const isHttpProvider = (name: string): name is HttpProviderName =>
  (HTTP_PROVIDER_NAMES as readonly string[]).includes(name);

/** The descriptor of a name a service gives, if it is registered. */
export const descriptorOf = (name: unknown): ProviderDescriptor | undefined => DESCRIPTORS.find((p) => p.name === name);
