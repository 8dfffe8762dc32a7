import '../components/org-pages.css';
import { organizationsApi } from '../api/organizations';
import { Badge, ErrorNotice, Loading, PageHeader, Table } from '../components/ui';
import { useLoad } from '../components/use-load';
import { formatCount } from '../lib/format';
import { href } from '../lib/route-match';
import type { PageProps } from './page-props';

/** Every organization with its plan, credits and what happens when they run out. */
export function Organizations(_props: PageProps) {
  const { data, error, loading } = useLoad(() => organizationsApi.list(), []);
  return (
    <>
      <PageHeader title="Organizations">
        <a class="btn btn-primary" href={href('orgs', 'new')}>
          New organization
        </a>
      </PageHeader>
      <ErrorNotice error={error} />
      {loading && data === undefined ? (
        <Loading />
      ) : (
        data !== undefined && (
          <Table
            caption="Organizations"
            head={['Id', 'Name', 'Plan', 'Credits', 'Out of credits', 'Held', 'State', 'Settings']}
            rows={data.items.length}
            empty="No organizations yet."
          >
            {data.items.map((o) => (
              <tr key={o.id}>
                <td>
                  <a href={href('orgs', o.id)}>
                    <code>{o.id}</code>
                  </a>
                </td>
                <td>{o.name}</td>
                <td>{o.plan}</td>
                <td>{o.credits === 'unlimited' ? 'Unlimited' : formatCount(o.credits)}</td>
                <td>{o.credits === 'unlimited' ? '—' : o.when_out_of_credits === 'hold' ? 'hold messages' : 'reject sends'}</td>
                <td>{o.held > 0 ? <a href={`${href('orgs', o.id, 'messages')}?status=held`}>{formatCount(o.held)}</a> : '0'}</td>
                <td>{o.suspended ? <Badge value="suspended" /> : <Badge value="active" />}</td>
                <td>
                  <a href={href('orgs', o.id, 'settings')} aria-label={`Settings of ${o.id}`}>
                    Settings
                  </a>
                </td>
              </tr>
            ))}
          </Table>
        )
      )}
    </>
  );
}
