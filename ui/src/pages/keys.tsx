import '../components/org-pages.css';
import '../components/keys.css';
import { useEffect, useState } from 'preact/hooks';
import { keysApi, type ApiKey, type IssuedKey } from '../api/keys';
import { KeyCreateForm } from '../components/key-create';
import { creatorLabel, LastUsed, scopeLabel } from '../components/key-facts';
import { IssuedKeyNotice } from '../components/key-issued';
import { KeyRenameForm } from '../components/key-rename';
import { KeyRotateForm } from '../components/key-rotate';
import { Badge, CopyButton, ErrorNotice, Loading, PageHeader, Table } from '../components/ui';
import { useLoad } from '../components/use-load';
import { formatTime } from '../lib/format';
import type { PageProps } from './page-props';

/** How often "12 min ago" moves on while the page stays open. */
const CLOCK_TICK_MS = 30_000;

/**
 * An organization's keys: public keys in full (they are public), private keys by their prefix
 * only (the server keeps no value to show). A new or rotated key's value is shown once. Each key
 * has a name, a scope, its last use and who made it (issue 29).
 */
export function Keys(props: PageProps) {
  const org = props.params.org as string;
  const { data, error, loading, reload } = useLoad(() => keysApi.list(org), [org]);
  const [issued, setIssued] = useState<IssuedKey | undefined>();
  const [rotating, setRotating] = useState<ApiKey | undefined>();
  const [renaming, setRenaming] = useState<ApiKey | undefined>();
  const [failure, setFailure] = useState<unknown>();
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), CLOCK_TICK_MS);
    return () => clearInterval(timer);
  }, []);

  const act = async (what: () => Promise<void>) => {
    setFailure(undefined);
    try {
      await what();
    } catch (err) {
      setFailure(err);
    }
  };
  const revoke = (k: ApiKey) =>
    act(async () => {
      if (!window.confirm(`Revoke key ${k.name ?? k.id}? Sends with it are refused at once.`)) return;
      await keysApi.revoke(org, k.id);
      await reload();
    });

  return (
    <>
      <PageHeader title="Keys" />
      {issued !== undefined && <IssuedKeyNotice issued={issued} onDismiss={() => setIssued(undefined)} />}
      <ErrorNotice error={failure} />
      <KeyCreateForm
        org={org}
        onCreated={(k) => {
          setIssued(k);
          void reload();
        }}
      />
      {renaming !== undefined && (
        <KeyRenameForm
          org={org}
          apiKey={renaming}
          onCancel={() => setRenaming(undefined)}
          onRenamed={() => {
            setRenaming(undefined);
            void reload();
          }}
        />
      )}
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
          <div class="keys-table">
            <Table
              caption="Keys"
              head={['Name', 'Type', 'Mode', 'Scope', 'Key', 'Status', 'Last used', 'Created', 'Stops working', 'Actions']}
              rows={data.items.length}
              empty="No keys yet."
            >
              {data.items.map((k) => (
                <tr key={k.id}>
                  <td>
                    <span class="key-name">
                      {k.name !== null ? <strong>{k.name}</strong> : <span class="key-unnamed">No name</span>}
                      <code>{k.id}</code>
                    </span>
                  </td>
                  <td>{k.type}</td>
                  <td>
                    <Badge value={k.mode} />
                  </td>
                  <td>{scopeLabel(k.scope)}</td>
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
                  <td>
                    <LastUsed at={k.last_used_at} now={now} />
                  </td>
                  <td>
                    <span class="key-created">
                      {formatTime(k.created_at)}
                      <small class="hint">by {creatorLabel(k.created_by)}</small>
                    </span>
                  </td>
                  <td>{k.expires_at === null ? '—' : formatTime(k.expires_at)}</td>
                  <td>
                    <div class="key-actions">
                      <button
                        type="button"
                        class="btn btn-plain btn-small"
                        aria-label={`Rename key ${k.id}`}
                        onClick={() => {
                          setRotating(undefined);
                          setRenaming(k);
                        }}
                      >
                        Rename
                      </button>
                      {k.status === 'active' && (
                        <button
                          type="button"
                          class="btn btn-plain btn-small"
                          aria-label={`Rotate key ${k.id}`}
                          onClick={() => {
                            setRenaming(undefined);
                            setRotating(k);
                          }}
                        >
                          Rotate
                        </button>
                      )}
                      {k.status !== 'revoked' && (
                        <button
                          type="button"
                          class="btn btn-danger btn-small"
                          aria-label={`Revoke key ${k.id}`}
                          onClick={() => void revoke(k)}
                        >
                          Revoke
                        </button>
                      )}
                    </div>
                  </td>
                </tr>
              ))}
            </Table>
          </div>
        )
      )}
    </>
  );
}
