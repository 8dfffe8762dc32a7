import '../components/org-pages.css';
import { servicesApi } from '../api/services';
import { Badge, ErrorNotice, Loading, PageHeader, Table } from '../components/ui';
import { useLoad } from '../components/use-load';
import { href } from '../lib/route-match';
import type { PageProps } from './page-props';

/** The organization's email services: provider, default, breaker state. */
export function Services(props: PageProps) {
  const org = props.params.org as string;
  const { data, error, loading } = useLoad(() => servicesApi.list(org), [org]);
  return (
    <>
      <PageHeader title="Services">
        <a class="btn btn-primary" href={href('orgs', org, 'services', 'new')}>
          New service
        </a>
      </PageHeader>
      <ErrorNotice error={error} />
      {loading && data === undefined ? (
        <Loading />
      ) : (
        data !== undefined && (
          <Table
            caption="Services"
            head={['Id', 'Provider', 'Default', 'From', 'Failover', 'Breaker', 'Last error']}
            rows={data.items.length}
            empty="No services yet."
          >
            {data.items.map((s) => (
              <tr key={s.id}>
                <td>
                  <a href={href('orgs', org, 'services', s.id)}>
                    <code>{s.id}</code>
                  </a>
                </td>
                <td>{s.provider}</td>
                <td>{s.default ? 'Yes' : 'No'}</td>
                <td>{s.from_email ?? '—'}</td>
                <td>{s.failover !== undefined && s.failover.length > 0 ? s.failover.join(' → ') : '—'}</td>
                <td>{s.breaker !== undefined ? <Badge value={s.breaker.state} /> : '—'}</td>
                <td class="wrap">{s.breaker?.last_error ?? '—'}</td>
              </tr>
            ))}
          </Table>
        )
      )}
    </>
  );
}
