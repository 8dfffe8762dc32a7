import type { KeyInput } from './inputs.js';

/** What the schema cannot say about a key's details, shared by the admin API and the YAML file (issue 29). */
export interface KeyFieldProblem {
  field: 'name' | 'scope';
  message: string;
}

// Control characters (C0, DEL, C1): a label shows in tables and the CLI's one-line listing.
const CONTROL = /\p{Cc}/u;

/** A key's name as stored: spaces around it dropped; undefined when none was given. */
export function keyName(name: string | undefined): string | undefined {
  return name?.trim();
}

/** A name (1–100 characters once trimmed, no control characters), checked alone (rename). */
export function keyNameProblem(name: string): KeyFieldProblem | undefined {
  if (name.trim() === '') return { field: 'name', message: 'must not be blank' };
  if (CONTROL.test(name)) return { field: 'name', message: 'must not contain control characters (tabs, line breaks)' };
  return undefined;
}

/**
 * `send_only` is for private keys: a public key only ever sends anyway (it cannot read history),
 * so the scope would promise nothing and is refused rather than stored as a no-op.
 */
export function keyInputProblems(input: Pick<KeyInput, 'type' | 'name' | 'scope'>): KeyFieldProblem[] {
  const problems: KeyFieldProblem[] = [];
  const name = input.name === undefined ? undefined : keyNameProblem(input.name);
  if (name !== undefined) problems.push(name);
  if (input.scope === 'send_only' && input.type !== 'private')
    problems.push({ field: 'scope', message: 'send_only is for private keys only (a public key can only send anyway)' });
  return problems;
}
