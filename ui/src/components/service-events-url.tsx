import { useState } from 'preact/hooks';
import { servicesApi } from '../api/services';
import { ActionButton, CopyButton, ErrorNotice, Section } from './ui';

/** The URL to paste into the provider's console, with a copy button and token rotation. */
export function ServiceEventsUrl(props: {
  org: string;
  id: string;
  url: string;
  hasEvents: boolean;
  onRotated: (url: string) => void;
}) {
  const [error, setError] = useState<unknown>();
  return (
    <Section title="Events URL">
      <p>
        Paste this into the provider's webhook settings
        {props.hasEvents ? '' : ' (it answers once the service has an events source, chosen under Provider events above)'}. Treat
        it as a secret: the token in it is all that names the service.
      </p>
      <p class="key-value">
        <code id="events-url">{props.url}</code> <CopyButton value={props.url} label="Copy the events URL" />
      </p>
      <ErrorNotice error={error} />
      <ActionButton
        kind="danger"
        onClick={async () => {
          if (!window.confirm('Give this service a new events URL? The old one stops working at once.')) return;
          setError(undefined);
          try {
            props.onRotated((await servicesApi.rotateEventsToken(props.org, props.id)).events_url);
          } catch (err) {
            setError(err);
          }
        }}
      >
        Rotate the URL
      </ActionButton>
    </Section>
  );
}
