import { useState } from 'preact/hooks';
import { api, ApiFailure } from '../api/client';
import type { Session } from '../api/types';
import { Field, Notice } from '../components/ui';

/** 900 → `15 minutes`, 40 → `40 seconds`. */
function waitText(seconds: number): string {
  if (seconds < 90) return `${seconds} seconds`;
  const minutes = Math.ceil(seconds / 60);
  return `${minutes} minutes`;
}

/**
 * The admin token is typed once and exchanged for an HttpOnly session cookie: the page keeps
 * neither the token nor the cookie (only the CSRF token, in memory). autocomplete="off": the
 * token is a server secret, not a password for the browser to offer to save and fill.
 */
export function SignIn(props: { onSignedIn: (s: Session) => void; expired?: boolean }) {
  const [token, setToken] = useState('');
  const [error, setError] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      const session = await api.post<Session>('/session', { token });
      setToken('');
      props.onSignedIn(session);
    } catch (err) {
      if (err instanceof ApiFailure && err.status === 429) {
        setError(`Too many failed attempts. Try again in ${waitText(err.retryAfterSeconds ?? 60)}.`);
      } else if (err instanceof ApiFailure && err.status === 401) {
        setError('That admin token is not right. Paste the value of MAILROOM_ADMIN_TOKEN.');
      } else {
        setError(err instanceof Error ? err.message : String(err));
      }
    } finally {
      setBusy(false);
    }
  };
  return (
    <main class="sign-in" id="main">
      <form class="card" onSubmit={submit} aria-labelledby="sign-in-title">
        <h1 id="sign-in-title">mailroom</h1>
        <p>
          Sign in with the admin token (<code>MAILROOM_ADMIN_TOKEN</code>).
        </p>
        {props.expired === true && <Notice kind="info">Your session ended. Sign in again.</Notice>}
        <Field label="Admin token" type="password" autoComplete="off" value={token} onValue={setToken} error={error} required />
        <button class="btn btn-primary" type="submit" disabled={busy || token === ''}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
    </main>
  );
}
