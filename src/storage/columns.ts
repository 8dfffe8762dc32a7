import {
  KEY_CREATORS,
  CREDIT_MODES,
  KEY_MODES,
  KEY_SCOPES,
  KEY_TYPES,
  MESSAGE_STATUSES,
  OUT_OF_CREDIT_MODES,
  PLANS,
  type ApiKey,
  type KeyCreator,
  type KeyScope,
  type CreditMode,
  type KeyMode,
  type KeyType,
  type MessageStatus,
  type OutOfCreditMode,
  type Plan,
} from '../domain/types.js';

/**
 * TEXT columns that hold one of the domain's unions, checked when read. The database has no
 * CHECK constraint on them (a later version may add a value, and an older one would refuse
 * rows it cannot read anyway), so a row written by hand or by a newer version is reported
 * with its table, column and value instead of travelling on as a lie about its type.
 */
export function oneOf<T extends string>(column: string, values: readonly T[]): (value: string) => T {
  return (value) => {
    const found = values.find((v) => v === value);
    if (found === undefined) throw new Error(`Corrupt row: ${column} holds "${value}", not one of ${values.join(', ')}.`);
    return found;
  };
}

const KEY_STATUSES: readonly ApiKey['status'][] = ['active', 'revoked', 'rotated'];
const UPLOAD_STATUSES = ['pending', 'uploaded'] as const;

export const planColumn: (value: string) => Plan = oneOf('organizations.plan', PLANS);
export const outOfCreditModeColumn: (value: string) => OutOfCreditMode = oneOf(
  'organizations.when_out_of_credits',
  OUT_OF_CREDIT_MODES,
);
export const creditModeColumn: (value: string) => CreditMode = oneOf('organizations.credit_mode', CREDIT_MODES);
export const keyTypeColumn: (value: string) => KeyType = oneOf('key_type', KEY_TYPES);
export const keyModeColumn: (value: string) => KeyMode = oneOf('mode', KEY_MODES);
export const keyScopeColumn: (value: string) => KeyScope = oneOf('api_keys.scope', KEY_SCOPES);
const keyCreator = oneOf('api_keys.created_by', KEY_CREATORS);
export const keyCreatorColumn = (value: string | null): KeyCreator | null => (value === null ? null : keyCreator(value));
export const keyStatusColumn: (value: string) => ApiKey['status'] = oneOf('api_keys.status', KEY_STATUSES);
export const messageStatusColumn: (value: string) => MessageStatus = oneOf('messages.status', MESSAGE_STATUSES);
export const uploadStatusColumn: (value: string) => (typeof UPLOAD_STATUSES)[number] = oneOf('uploads.status', UPLOAD_STATUSES);
