import { templatesApi } from '../api/templates';
import { ErrorNotice, Loading, PageHeader, Table } from '../components/ui';
import { useLoad } from '../components/use-load';
import { formatTime } from '../lib/format';
import { href } from '../lib/route-match';
import type { PageProps } from './page-props';

/** An organization's templates: id, name, subject, version, last change; each opens the editor. */
export function Templates(props: PageProps) {
  const org = props.params.org ?? '';
  const { data, error, loading } = useLoad(() => templatesApi.list(org), [org]);
  const items = data ?? [];
  return (
    <>
      <PageHeader title="Templates">
        <a class="btn btn-primary" href={href('orgs', org, 'templates', 'new')}>
          New template
        </a>
      </PageHeader>
      <ErrorNotice error={error} />
      {loading && data === undefined ? (
        <Loading />
      ) : (
        <Table
          caption={`Templates of ${org}`}
          head={['Id', 'Name', 'Subject', 'Version', 'Updated']}
          rows={items.length}
          empty="No templates yet."
        >
          {items.map((t) => (
            <tr key={t.id}>
              <td>
                <a href={href('orgs', org, 'templates', t.id)}>
                  <code>{t.id}</code>
                </a>
              </td>
              <td>{t.name}</td>
              <td>{t.content.subject}</td>
              <td>{t.version}</td>
              <td>{formatTime(t.updated_at)}</td>
            </tr>
          ))}
        </Table>
      )}
    </>
  );
}
