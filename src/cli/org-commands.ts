import { createKey, revokeKey, rotateKey, updateKey } from '../admin/keys.js';
import { creditStatus } from '../credits/balance.js';
import { addCredits } from '../credits/top-up.js';
import { keyAuthenticates } from '../domain/caller.js';
import { ApiError } from '../errors/api-error.js';
import type { ApiKey, KeyScope, KeyType } from '../domain/types.js';
import { keyInputProblems, keyName, keyNameProblem } from '../resources/key-details.js';
import type { Store } from '../storage/store.js';
import { usageOf } from './help.js';

/** `mailroom keys …` and `mailroom credits …`: the commands that act on one organization. */

type Out = (line: string) => void;

export interface OrgCommandOptions {
  /** `--grace-seconds` as typed, checked here. */
  graceSeconds?: string | undefined;
  /** `--test`: `keys create` makes a test key (issue 27). */
  test?: boolean;
  /** `--name`, `--scope` of `keys create` (issue 29), checked here as the admin API checks them. */
  name?: string | undefined;
  scope?: string | undefined;
}

/** `--name` and `--scope` checked as the admin API would; the first problem, or the details to store. */
function keyDetailsOf(type: KeyType, options: OrgCommandOptions): string | { name?: string; scope?: KeyScope } {
  const scope = options.scope;
  if (scope !== undefined && scope !== 'full' && scope !== 'send_only') return '--scope takes full or send_only.';
  if (options.name !== undefined && options.name.trim().length > 100) return '--name takes at most 100 characters.';
  const problem = keyInputProblems({ type, name: options.name, scope })[0];
  if (problem !== undefined) return `--${problem.field} ${problem.message}.`;
  return { ...(options.name !== undefined && { name: options.name.trim() }), ...(scope !== undefined && { scope }) };
}

/**
 * Refuses an organization that does not exist before anything else, so every command that
 * takes ORG says so (and exits non-zero) instead of printing an empty answer.
 */
async function requireOrg(store: Store, orgId: string): Promise<void> {
  if ((await store.organizations.get(orgId)) === undefined) {
    throw new ApiError('not_found', { message: `Organization "${orgId}" does not exist.` });
  }
}

const iso = (ms: number): string => new Date(ms).toISOString();

function keyLine(k: ApiKey, now: number): string {
  const scope = k.scope === 'send_only' ? '  send_only' : '';
  const name = k.name === null ? '' : `  ${JSON.stringify(k.name)}`;
  const value = k.public_key ?? k.hint;
  const base = `${k.id}  ${k.type.padEnd(7)}  ${k.mode.padEnd(4)}  ${k.status.padEnd(7)}  ${value}${scope}${name}`;
  if (k.status === 'active' || k.expires_at === null) return base;
  return `${base}  ${keyAuthenticates(k, now) ? 'works until' : 'stopped'} ${iso(k.expires_at)}`;
}

export async function runKeys(store: Store, args: string[], options: OrgCommandOptions, out: Out, err: Out): Promise<number> {
  const [action, org, arg] = args;
  const usage = (): number => {
    err(usageOf('keys'));
    return 1;
  };
  if (org === undefined) return usage();
  if (action === 'rename') return renameKey(store, args, options, out, err);
  const graceSeconds = options.graceSeconds;
  if (graceSeconds !== undefined && (action !== 'rotate' || !/^\d+$/.test(graceSeconds))) {
    err('--grace-seconds takes a whole number of seconds and applies to `mailroom keys rotate` only.');
    return 1;
  }
  if (options.test === true && action !== 'create') {
    err('--test applies to `mailroom keys create` only (a rotation keeps the mode of the key it replaces).');
    return 1;
  }
  if ((options.name !== undefined || options.scope !== undefined) && action !== 'create') {
    err('--name and --scope apply to `mailroom keys create` only (a rotation keeps the name and scope).');
    return 1;
  }
  if (
    !(
      action === 'list' ||
      (action === 'create' && (arg === 'public' || arg === 'private')) ||
      ((action === 'rotate' || action === 'revoke') && arg !== undefined)
    )
  ) {
    return usage();
  }
  await requireOrg(store, org);
  const now = store.clock.now();
  if (action === 'list') {
    const keys = await store.keys.list(org);
    if (keys.length === 0) out(`Organization "${org}" has no keys.`);
    for (const k of keys) out(keyLine(k, now));
    return 0;
  }
  if (arg === undefined) return usage();
  if (action === 'create') {
    const mode = options.test === true ? 'test' : 'live';
    const type = arg === 'public' ? 'public' : 'private';
    const details = keyDetailsOf(type, options);
    if (typeof details === 'string') {
      err(details);
      return 1;
    }
    const issued = await createKey(store, org, type, undefined, mode, { ...details, createdBy: 'cli' });
    out(`${issued.key.id}  ${issued.value}`);
    return 0;
  }
  if (action === 'rotate') {
    const rotation = await rotateKey(store, org, arg, graceSeconds === undefined ? 0 : Number(graceSeconds), 'cli');
    out(`${rotation.key.id}  ${rotation.value}`);
    const { previous } = rotation;
    // Judged at the rotation's own instant: `now` was read before it, so an old key cut off at
    // once would look alive for the milliseconds between (it read "keeps working until" under load).
    out(
      keyAuthenticates(previous, previous.revoked_at ?? now)
        ? `The old key ${previous.id} keeps working until ${iso(previous.expires_at)}.`
        : `The old key ${previous.id} stopped working now.`,
    );
    return 0;
  }
  await revokeKey(store, org, arg);
  out(`Revoked ${arg}.`);
  return 0;
}

/** Longest key name, as the admin API's KeyChanges schema allows. */
const NAME_MAX = 100;

/** `mailroom keys rename ORG KEY_ID NAME`: the admin API's PATCH, through the same updateKey. */
async function renameKey(store: Store, args: string[], options: OrgCommandOptions, out: Out, err: Out): Promise<number> {
  const [, org, keyId, name, ...extra] = args;
  if (org === undefined || keyId === undefined || name === undefined) {
    err(usageOf('keys rename'));
    return 1;
  }
  if (extra.length > 0) {
    err(`A name with spaces goes in quotes: mailroom keys rename ${org} ${keyId} "${[name, ...extra].join(' ')}"`);
    return 1;
  }
  if (options.graceSeconds !== undefined || options.test === true || options.name !== undefined || options.scope !== undefined) {
    err('`mailroom keys rename` takes no options: the new name is its last argument.');
    return 1;
  }
  const problem = keyNameProblem(name);
  if (problem !== undefined) {
    err(`NAME ${problem.message}.`);
    return 1;
  }
  if (name.trim().length > NAME_MAX) {
    err(`NAME takes at most ${NAME_MAX} characters.`);
    return 1;
  }
  await requireOrg(store, org);
  const key = await updateKey(store, org, keyId, { name: keyName(name) ?? null });
  out(keyLine(key, store.clock.now()));
  return 0;
}

export async function runCredits(store: Store, args: string[], out: Out, err: Out): Promise<number> {
  const [action, org, amount] = args;
  if (action === 'show' && org !== undefined && amount === undefined) {
    await requireOrg(store, org);
    const s = await creditStatus(store, org);
    out(`Organization ${s.org_id}`);
    out(`  balance:             ${s.credits} credits${s.unlimited ? ' (unused: credits unlimited)' : ''}`);
    out(`  overdraft:           ${s.overdraft} (private keys${s.public_overdraft ? ' and public keys' : ' only'})`);
    out(
      `  when out of ` +
        `credits: ${s.when_out_of_credits}${s.when_out_of_credits === 'hold' ? ` (up to ${s.hold_queue_limit} held)` : ''}`,
    );
    out(`  held messages:       ${s.held}`);
    return 0;
  }
  if (action === 'add' && org !== undefined && amount !== undefined && /^\d+$/.test(amount)) {
    await requireOrg(store, org);
    const result = await addCredits(store, org, Number(amount));
    out(`Balance of ${org}: ${result.credits} credits; released ${result.released.length} held message(s).`);
    return 0;
  }
  err(usageOf('credits'));
  return 1;
}
