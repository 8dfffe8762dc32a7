import { useEffect, useState } from 'preact/hooks';
import { api, onUnauthorized, setSession } from './api/client';
import type { Session } from './api/types';
import { Layout } from './components/layout';
import { Loading } from './components/ui';
import { SignIn } from './pages/sign-in';
import { ROUTES } from './routes';
import { useRoute } from './router';

type State = { kind: 'loading' } | { kind: 'signed-out'; expired: boolean } | { kind: 'signed-in'; session: Session };

/** Asks the server whether the cookie still holds a session, then shows sign-in or the app. */
export function App() {
  const [state, setState] = useState<State>({ kind: 'loading' });
  useEffect(() => {
    onUnauthorized(() => {
      setSession(undefined);
      setState({ kind: 'signed-out', expired: true });
    });
    api.get<Session>('/session').then(
      (session) => {
        setSession(session);
        setState({ kind: 'signed-in', session });
      },
      () => setState({ kind: 'signed-out', expired: false }),
    );
  }, []);
  if (state.kind === 'loading') return <main id="main"><Loading /></main>;
  if (state.kind === 'signed-out') {
    return <SignIn expired={state.expired} onSignedIn={(session) => { setSession(session); setState({ kind: 'signed-in', session }); }} />;
  }
  return (
    <SignedIn
      onSignOut={async () => {
        await api.delete('/session').catch(() => undefined);
        setSession(undefined);
        setState({ kind: 'signed-out', expired: false });
      }}
    />
  );
}

function SignedIn(props: { onSignOut: () => Promise<void> }) {
  const route = useRoute(ROUTES.map(([pattern]) => pattern));
  const entry = ROUTES.find(([pattern]) => pattern === route?.pattern);
  useEffect(() => {
    document.title = entry === undefined ? 'mailroom' : `${entry[2]}${route?.params.org !== undefined ? ` · ${route.params.org}` : ''} · mailroom`;
  }, [entry, route?.params.org]);
  if (route === undefined || entry === undefined) {
    return <Layout org={undefined} onSignOut={props.onSignOut}><h1>Not found</h1><p><a href="#/">Back to the organizations</a></p></Layout>;
  }
  const Page = entry[1];
  const org = route.params.org;
  return (
    <Layout org={org === 'new' ? undefined : org} onSignOut={props.onSignOut}>
      <Page key={window.location.hash.split('?')[0]} params={route.params} query={route.query} />
    </Layout>
  );
}
