/**
 * Version history: every stored version (newest first) with its time; "View" shows what it
 * held (subject, addresses, parameters, the start of its bodies), "Restore" stores it again as
 * a new version and hands the restored template back to the editor.
 */
import { useState } from 'preact/hooks';
import { templatesApi, type TemplateVersion, type TemplateWritten } from '../api/templates';
import { formatTime } from '../lib/format';
import { useLoad } from './use-load';
import { Badge, ErrorNotice, Loading, Section, Table } from './ui';

export function TemplateVersions(props: {
  org: string;
  id: string;
  reloadKey: number;
  /** The editor holds unsaved changes, which a restore replaces. */
  unsaved: boolean;
  onRestored: (t: TemplateWritten) => void;
}) {
  const { data, error, loading, reload } = useLoad(
    () => templatesApi.versions(props.org, props.id),
    [props.org, props.id, props.reloadKey],
  );
  const [open, setOpen] = useState<number | undefined>();
  const [restoreError, setRestoreError] = useState<unknown>();
  const restore = async (v: TemplateVersion) => {
    const lost = props.unsaved ? ' Your unsaved changes are discarded.' : '';
    if (!window.confirm(`Restore version ${v.version}? It is stored again as a new version.${lost}`)) return;
    setRestoreError(undefined);
    try {
      const restored = await templatesApi.restore(props.org, props.id, v.version);
      props.onRestored(restored);
      await reload();
    } catch (err) {
      setRestoreError(err);
    }
  };
  const items = data ?? [];
  const shown = items.find((v) => v.version === open);
  return (
    <Section title="Version history">
      <ErrorNotice error={error ?? restoreError} />
      {loading && data === undefined ? (
        <Loading />
      ) : (
        <Table
          caption="Versions of this template"
          head={['Version', 'Saved, subject', 'Actions']}
          rows={items.length}
          empty="No versions stored yet."
        >
          {items.map((v) => (
            <tr key={v.version}>
              <td>
                {v.version} {v.current && <Badge value="current" />}
              </td>
              <td>
                {formatTime(v.created_at)}
                <br />
                <span class="hint">{v.template.content.subject}</span>
              </td>
              <td>
                <div class="row-actions">
                  <button
                    type="button"
                    class="btn btn-small"
                    aria-expanded={open === v.version}
                    onClick={() => setOpen(open === v.version ? undefined : v.version)}
                    aria-label={`View version ${v.version}`}
                  >
                    {open === v.version ? 'Hide' : 'View'}
                  </button>
                  {!v.current && (
                    <button
                      type="button"
                      class="btn btn-small"
                      aria-label={`Restore version ${v.version}`}
                      onClick={() => void restore(v)}
                    >
                      Restore
                    </button>
                  )}
                </div>
              </td>
            </tr>
          ))}
        </Table>
      )}
      {shown !== undefined && <VersionSummary version={shown} />}
    </Section>
  );
}

function VersionSummary(props: { version: TemplateVersion }) {
  const t = props.version.template;
  const excerpt = (s: string) => (s.length > 400 ? `${s.slice(0, 400)}…` : s);
  return (
    <section class="version-summary" aria-label={`Version ${props.version.version}`}>
      <h3 class="sub-title">Version {props.version.version}</h3>
      <dl class="rendered-head">
        <dt>Subject</dt>
        <dd>{t.content.subject}</dd>
        <dt>From</dt>
        <dd>{[t.content.from_name, t.content.from_email].filter((s) => s !== '').join(' ') || '—'}</dd>
        <dt>To</dt>
        <dd>{t.content.to || '—'}</dd>
        <dt>Parameters</dt>
        <dd>{t.params.map((p) => `${p.name}: ${p.type}${p.required === true ? ' (required)' : ''}`).join(', ') || '—'}</dd>
        <dt>Sample</dt>
        <dd>{t.sample_params === null ? '—' : excerpt(JSON.stringify(t.sample_params))}</dd>
        <dt>Service</dt>
        <dd>{t.service_id ?? 'organization default'}</dd>
      </dl>
      {t.content.html !== '' && (
        <>
          <h4>HTML</h4>
          <pre class="preview-text">{excerpt(t.content.html)}</pre>
        </>
      )}
      {t.content.text !== '' && (
        <>
          <h4>Text</h4>
          <pre class="preview-text">{excerpt(t.content.text)}</pre>
        </>
      )}
    </section>
  );
}
