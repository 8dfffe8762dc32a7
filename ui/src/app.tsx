import { useEffect, useState } from 'preact/hooks';
import { api, ApiFailure, onUnauthorized, setSession } from './api/client';
import type { Session } from './api/types';
import { Layout } from './components/layout';
import { Loading, Notice } from './components/ui';
import { SignIn } from './pages/sign-in';
import { ROUTES } from './routes';
import { useRoute } from './router';

/** `signedInHere`: the session began with this page's sign-in form (not a cookie from before). */
type State =
  | { kind: 'loading' }
  | { kind: 'signed-out'; expired: boolean }
  | { kind: 'signed-in'; session: Session; signedInHere: boolean };

/** Asks the server whether the cookie still holds a session, then shows sign-in or the app. */
export function App() {
  const [state, setState] = useState<State>({ kind: 'loading' });
  const [signOutError, setSignOutError] = useState<unknown>();
  useEffect(() => {
    onUnauthorized(() => {
      setSession(undefined);
      setState({ kind: 'signed-out', expired: true });
    });
    api.get<Session>('/session').then(
      (session) => {
        setSession(session);
        setState({ kind: 'signed-in', session, signedInHere: false });
      },
      () => setState({ kind: 'signed-out', expired: false }),
    );
  }, []);
  if (state.kind === 'loading')
    return (
      <main id="main">
        <Loading />
      </main>
    );
  if (state.kind === 'signed-out') {
    return (
      <SignIn
        expired={state.expired}
        onSignedIn={(session) => {
          setSession(session);
          setSignOutError(undefined);
          setState({ kind: 'signed-in', session, signedInHere: true });
        }}
      />
    );
  }
  return (
    <SignedIn
      focusMain={state.signedInHere}
      signOutError={signOutError}
      onSignOut={async () => {
        setSignOutError(undefined);
        try {
          await api.delete('/session');
        } catch (err) {
          // 401: the session had already ended, so the operator is signed out either way. Any
          // other failure leaves the session alive on the server: showing the sign-in form
          // would make the operator believe it ended (on a shared computer, say).
          if (!(err instanceof ApiFailure && err.status === 401)) {
            setSignOutError(err);
            return;
          }
        }
        setSession(undefined);
        setState({ kind: 'signed-out', expired: false });
      }}
    />
  );
}

/**
 * The signed-in frame. `focusMain`: just signed in, so focus goes to the main region (issue 29):
 * the form's button is gone, and focus was left on the page's body, before the navigation.
 */
function SignedIn(props: { onSignOut: () => Promise<void>; signOutError: unknown; focusMain: boolean }) {
  const route = useRoute(ROUTES.map(([pattern]) => pattern));
  const entry = ROUTES.find(([pattern]) => pattern === route?.pattern);
  useEffect(() => {
    document.title =
      entry === undefined
        ? 'mailroom'
        : `${entry[2]}${route?.params.org !== undefined ? ` · ${route.params.org}` : ''} · mailroom`;
  }, [entry, route?.params.org]);
  if (route === undefined || entry === undefined) {
    return (
      <Layout org={undefined} onSignOut={props.onSignOut} focusMain={props.focusMain}>
        {props.signOutError !== undefined && <SignOutFailed error={props.signOutError} />}
        <h1>Not found</h1>
        <p>
          <a href="#/">Back to the organizations</a>
        </p>
      </Layout>
    );
  }
  const Page = entry[1];
  const org = route.params.org;
  return (
    <Layout org={org === 'new' ? undefined : org} onSignOut={props.onSignOut} focusMain={props.focusMain}>
      {props.signOutError !== undefined && <SignOutFailed error={props.signOutError} />}
      <Page key={window.location.hash.split('?')[0]} params={route.params} query={route.query} />
    </Layout>
  );
}

/** A failed sign-out: the session is still open on the server, and the operator is told so. */
function SignOutFailed(props: { error: unknown }) {
  const e = props.error;
  const why = e instanceof ApiFailure ? `${e.code}: ${e.message}` : e instanceof Error ? e.message : String(e);
  return <Notice kind="error">Sign-out failed, so you are still signed in. Try again. The server said: {why}</Notice>;
}
