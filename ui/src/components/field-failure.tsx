import { ApiFailure } from '../api/client';
import { ErrorNotice, Notice } from './ui';

/**
 * A save's failure under a form: when the server named fields (a 400 `invalid_body`), their
 * problems already stand in words under each field (lib/field-messages.ts), so this says only
 * how many to fix, never Ajv's raw sentence again; any other failure shows as ErrorNotice does.
 */
export function FieldFailure(props: { error: unknown }) {
  const e = props.error;
  if (e instanceof ApiFailure && e.code === 'invalid_body') {
    const named = Object.keys(e.fieldIssues()).filter((k) => !/\.\d+$/.test(k)).length;
    if (named > 0)
      return (
        <Notice kind="error">
          Not saved: {named === 1 ? 'one setting needs' : `${named} settings need`} fixing, as said under{' '}
          {named === 1 ? 'it' : 'each'}.
        </Notice>
      );
  }
  return <ErrorNotice error={e} />;
}
