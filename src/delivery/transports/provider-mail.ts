import { createHash } from 'node:crypto';
import { isAllowedEndpoint } from '../../providers/endpoint.js';
import type { Service } from '../../domain/types.js';
import type { Address } from '../../templates/recipients.js';
import { DeliveryError, type DeliveryReceipt, type OutgoingEmail, type Refusal } from '../transport.js';

/**
 * What the JSON provider transports (Postmark, SendGrid, Resend) share: their settings block,
 * who a request goes to, addresses as their APIs take them, attachments in base64.
 */

/** The key our message id travels under in each provider's metadata (events/sources/wire.ts reads it). */
export const METADATA_KEY = 'mailroom_message_id';

/** One request's recipients, each in the field the message gave them. */
export interface RecipientGroup {
  to: Address[];
  cc: Address[];
  bcc: Address[];
}

/**
 * Who the request(s) go to. JSON APIs have no envelope apart from To/Cc/Bcc, so a retry owed to
 * some recipients only (`envelopeTo`) names only those, each in its own field: the headers then
 * differ from the first attempt's, which cannot be helped. The three APIs require a To: when no
 * To address is owed, the owed Cc take its place; when only Bcc addresses are owed, each gets a
 * request (a group) of its own with itself as To, so none learns of another.
 * Addresses are listed once across the fields (SendGrid refuses a duplicate with a 400).
 */
export function recipientGroups(mail: OutgoingEmail): RecipientGroup[] {
  const owed = mail.envelopeTo === undefined ? undefined : new Set(mail.envelopeTo.map((a) => a.toLowerCase()));
  const seen = new Set<string>();
  const pick = (list: Address[]) =>
    list.filter((a) => {
      const key = a.address.toLowerCase();
      if (seen.has(key) || (owed !== undefined && !owed.has(key))) return false;
      seen.add(key);
      return true;
    });
  const e = mail.email;
  const to = pick(e.to);
  const cc = pick(e.cc);
  const bcc = pick(e.bcc);
  if (to.length > 0) return [{ to, cc, bcc }];
  if (cc.length > 0) return [{ to: cc, cc: [], bcc }];
  return bcc.map((a) => ({ to: [a], cc: [], bcc: [] }));
}

export const addressesOf = (g: RecipientGroup): string[] => [...g.to, ...g.cc, ...g.bcc].map((a) => a.address);

/**
 * Sends the groups in order (one request each: several only when only Bcc recipients are owed).
 * The first group's failure is the message's (thrown, retried whole: nobody got it). Once one
 * group is accepted, a later group's failure must not be thrown: the retry would send the
 * accepted groups again. It becomes that group's `refused` on the receipt instead, each address
 * with the failure's kind (mailbox: bounced and suppressed; permanent: failed; anything else,
 * a held-service error included: temporary, owed and retried alone, where a service error is
 * then the whole attempt's and holds the message). After a temporary or service failure the
 * groups not yet tried are not tried (a 5xx or 429 would answer them the same way): they are
 * refused for now too. The receipt is the first accepted group's, with every group's refusals.
 */
export async function sendGroups(
  provider: string,
  groups: readonly RecipientGroup[],
  sendGroup: (group: RecipientGroup) => Promise<DeliveryReceipt>,
): Promise<DeliveryReceipt> {
  const [first, ...rest] = groups;
  if (first === undefined) throw new DeliveryError('permanent', `${provider}: no recipient left to send to`);
  const receipt = await sendGroup(first);
  const refused: Refusal[] = [...(receipt.refused ?? [])];
  let stopped: string | undefined;
  for (const group of rest) {
    if (stopped !== undefined) {
      refused.push(
        ...addressesOf(group).map((address): Refusal => ({ address, kind: 'temporary', reason: `not tried: ${stopped}` })),
      );
      continue;
    }
    try {
      refused.push(...((await sendGroup(group)).refused ?? []));
    } catch (error) {
      refused.push(...refusalsOf(error, addressesOf(group)));
      if (!(error instanceof DeliveryError) || error.kind === 'temporary' || error.kind === 'service') {
        stopped = (error instanceof Error ? error.message : String(error)).slice(0, 400);
      }
    }
  }
  return refused.length > 0 ? { ...receipt, refused } : receipt;
}

/** One failed group's addresses as refusals: the error's own per-address ones when it names them. */
export function refusalsOf(error: unknown, addresses: readonly string[]): Refusal[] {
  const reason = (error instanceof Error ? error.message : String(error)).slice(0, 500);
  const named = new Map((error instanceof DeliveryError ? error.refused : []).map((r) => [r.address.toLowerCase(), r]));
  const kind =
    error instanceof DeliveryError && (error.kind === 'mailbox' || error.kind === 'permanent') ? error.kind : 'temporary';
  return addresses.map((address) => named.get(address.toLowerCase()) ?? { address, kind, reason });
}

/** `"Display, Name" <a@x>` (quoted: Postmark refuses an unquoted comma with ErrorCode 300), or the bare address. */
export function formatAddress(a: Address): string {
  if (a.name === '') return a.address;
  return `"${a.name.replace(/[\\"]/g, (c) => `\\${c}`).replace(/[\r\n]+/g, ' ')}" <${a.address}>`;
}

export const base64 = (content: Buffer): string => content.toString('base64');

/** Resend's Idempotency-Key: our id and the recipients (a partial retry is another request). */
export function idempotencyKey(messageId: string, recipients: readonly string[]): string {
  const sorted = [...recipients]
    .map((r) => r.toLowerCase())
    .sort()
    .join(',');
  return `${messageId}:${createHash('sha256').update(sorted).digest('hex')}`;
}

/** The provider's settings block (`service.settings.<provider>`), or a thrown reason why not. */
export function settingsBlock(service: Pick<Service, 'id' | 'settings'>, provider: string): Record<string, unknown> {
  const block: unknown = service.settings[provider];
  if (typeof block !== 'object' || block === null || Array.isArray(block)) {
    throw new Error(`service ${service.id} (provider ${provider}) has no ${provider} settings block`);
  }
  return Object.fromEntries(Object.entries(block));
}

export function requiredString(block: Record<string, unknown>, provider: string, name: string): string {
  const v = block[name];
  if (typeof v !== 'string' || v.trim() === '') throw new Error(`${provider}.${name} must be a non-empty string`);
  return v.trim();
}

export function optionalString(block: Record<string, unknown>, provider: string, name: string, fallback: string): string {
  const v = block[name];
  if (v === undefined || v === null) return fallback;
  if (typeof v !== 'string' || v.trim() === '') throw new Error(`${provider}.${name} must be a non-empty string when given`);
  return v.trim();
}

/** `endpoint` overrides the API's base URL (regional APIs, the tests' loopback fakes): http(s), no trailing slash. */
export function endpointOf(block: Record<string, unknown>, provider: string, fallback: string): string {
  const raw = optionalString(block, provider, 'endpoint', fallback);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new Error(`${provider}.endpoint must be an http(s) URL, got ${JSON.stringify(raw.slice(0, 100))}`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new Error(`${provider}.endpoint must be an http(s) URL`);
  if (url.search !== '' || url.hash !== '') throw new Error(`${provider}.endpoint must not carry a query or fragment`);
  // The secret goes with every request: plain http only to a loopback host, as the input schema says.
  if (!isAllowedEndpoint(raw)) throw new Error(`${provider}.endpoint must be https, or http to a loopback host`);
  return url.toString().replace(/\/+$/, '');
}
