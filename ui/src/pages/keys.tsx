import '../components/org-pages.css';
import { useState } from 'preact/hooks';
import { keysApi, type ApiKey, type IssuedKey } from '../api/keys';
import { IssuedKeyNotice } from '../components/key-issued';
import { KeyRotateForm } from '../components/key-rotate';
import { Badge, CopyButton, ErrorNotice, Loading, PageHeader, Section, Select, Table } from '../components/ui';
import { useLoad } from '../components/use-load';
import { formatTime } from '../lib/format';
import { href } from '../lib/route-match';
import type { PageProps } from './page-props';

/**
 * An organization's keys: public keys in full (they are public), private keys by their prefix
 * only (the server keeps no value to show). A new or rotated key's value is shown once.
 */
export function Keys(props: PageProps) {
  const org = props.params.org as string;
  const { data, error, loading, reload } = useLoad(() => keysApi.list(org), [org]);
  const [type, setType] = useState<ApiKey['type']>('private');
  const [mode, setMode] = useState<ApiKey['mode']>('live');
  const [issued, setIssued] = useState<IssuedKey | undefined>();
  const [rotating, setRotating] = useState<ApiKey | undefined>();
  const [failure, setFailure] = useState<unknown>();

  const act = async (what: () => Promise<void>) => {
    setFailure(undefined);
    try {
      await what();
    } catch (err) {
      setFailure(err);
    }
  };
  const create = () =>
    act(async () => {
      setIssued(await keysApi.create(org, type, mode));
      await reload();
    });
  const revoke = (k: ApiKey) =>
    act(async () => {
      if (!window.confirm(`Revoke key ${k.id}? Sends with it are refused at once.`)) return;
      await keysApi.revoke(org, k.id);
      await reload();
    });

  return (
    <>
      <PageHeader title="Keys" />
      {issued !== undefined && <IssuedKeyNotice issued={issued} onDismiss={() => setIssued(undefined)} />}
      <ErrorNotice error={failure} />
      <Section title="New key">
        <form
          class="org-inline-form"
          onSubmit={(e) => {
            e.preventDefault();
            void create();
          }}
          aria-label="Create a key"
        >
          <Select
            label="Type"
            value={type}
            options={[
              ['private', `Private (servers: ${mode === 'test' ? 'sk_test_' : 'sk_'}…)`],
              ['public', `Public (browsers: ${mode === 'test' ? 'pk_test_' : 'pk_'}…)`],
            ]}
            onValue={(v) => setType(v === 'public' ? 'public' : 'private')}
          />
          <Select
            label="Mode"
            value={mode}
            options={[
              ['live', 'Live (delivers, takes credits)'],
              ['test', 'Test (captured, never sent)'],
            ]}
            onValue={(v) => setMode(v === 'test' ? 'test' : 'live')}
          />
          <button class="btn btn-primary" type="submit">
            Create key
          </button>
        </form>
        {mode === 'test' && (
          <p class="hint">
            A test key runs every send through the whole pipeline, but nothing leaves this machine and no credit is taken: the
            messages land in the <a href={href('orgs', org, 'test-inbox')}>Test inbox</a>.
          </p>
        )}
      </Section>
      {rotating !== undefined && (
        <KeyRotateForm
          org={org}
          apiKey={rotating}
          onCancel={() => setRotating(undefined)}
          onRotated={(k) => {
            setIssued(k);
            setRotating(undefined);
            void reload();
          }}
        />
      )}
      <ErrorNotice error={error} />
      {loading && data === undefined ? (
        <Loading />
      ) : (
        data !== undefined && (
          <Table
            caption="Keys"
            head={['Id', 'Type', 'Mode', 'Key', 'Status', 'Created', 'Stops working', 'Actions']}
            rows={data.items.length}
            empty="No keys yet."
          >
            {data.items.map((k) => (
              <tr key={k.id}>
                <td>
                  <code>{k.id}</code>
                </td>
                <td>{k.type}</td>
                <td>
                  <Badge value={k.mode} />
                </td>
                <td>
                  {k.public_key !== null ? (
                    <>
                      <code class="key-value">{k.public_key}</code>{' '}
                      <CopyButton value={k.public_key} label={`Copy public key ${k.id}`} />
                    </>
                  ) : (
                    <code class="key-hint" title="Only a fragment is kept for display">
                      {k.hint}
                    </code>
                  )}
                </td>
                <td>
                  <Badge value={k.status} />
                </td>
                <td>{formatTime(k.created_at)}</td>
                <td>{k.expires_at === null ? '—' : formatTime(k.expires_at)}</td>
                <td>
                  {k.status !== 'revoked' && (
                    <div class="key-actions">
                      {k.status === 'active' && (
                        <button
                          type="button"
                          class="btn btn-plain btn-small"
                          aria-label={`Rotate key ${k.id}`}
                          onClick={() => setRotating(k)}
                        >
                          Rotate
                        </button>
                      )}
                      <button
                        type="button"
                        class="btn btn-danger btn-small"
                        aria-label={`Revoke key ${k.id}`}
                        onClick={() => void revoke(k)}
                      >
                        Revoke
                      </button>
                    </div>
                  )}
                </td>
              </tr>
            ))}
          </Table>
        )
      )}
    </>
  );
}
