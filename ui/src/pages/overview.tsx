import '../components/org-pages.css';
import '../ops-pages.css';
import { OVERVIEW_DAYS, overviewApi, type OverviewDays } from '../api/overview';
import { AlertSummary } from '../components/alert-summary';
import { MessagesChart } from '../components/chart';
import { ModeToggle } from '../components/mode-toggle';
import { OverviewRates } from '../components/overview-rates';
import { Badge, ErrorNotice, Loading, Notice, PageHeader, Section, Table } from '../components/ui';
import { useLoad } from '../components/use-load';
import { formatAge, formatCount, formatTime } from '../lib/format';
import { href, hrefWithQuery } from '../lib/route-match';
import { type Mode, modeFromQuery, modeQuery } from '../lib/test-mode';
import { navigate } from '../router';
import type { PageProps } from './page-props';

/**
 * `#/orgs/:org?days=30[&mode=test]`: the organization at a glance. The range and the mode (live or
 * test messages counted, never both) live in the URL, so they survive a reload.
 */
export function Overview(props: PageProps) {
  return <OrgOverview {...props} />;
}

function OrgOverview(props: PageProps) {
  const org = props.params.org as string;
  const asked = Number(props.query.get('days'));
  const days: OverviewDays = (OVERVIEW_DAYS as readonly number[]).includes(asked) ? (asked as OverviewDays) : 7;
  const mode = modeFromQuery(props.query);
  const { data, error, loading } = useLoad(() => overviewApi.get(org, days, mode), [org, days, mode]);
  const messages = (query: Record<string, string>) => hrefWithQuery(['orgs', org, 'messages'], { ...query, ...modeQuery(mode) });
  // The range and the mode are each kept when the other changes; the defaults (7 days, live) are left out of the link.
  const link = (d: OverviewDays, m: Mode) =>
    hrefWithQuery(['orgs', org], { days: d === 7 ? undefined : String(d), ...modeQuery(m) });
  return (
    <>
      <PageHeader title={`Overview of ${org}`}>
        <ModeToggle mode={mode} link={(m) => link(days, m)} label="Messages counted" />
        <fieldset aria-label="Range" class="segmented">
          {OVERVIEW_DAYS.map((d) => (
            <button key={d} type="button" class="btn btn-plain" aria-pressed={d === days} onClick={() => navigate(link(d, mode))}>
              {d} days
            </button>
          ))}
        </fieldset>
      </PageHeader>
      <ErrorNotice error={error} />
      <AlertSummary org={org} />
      {loading && data === undefined ? (
        <Loading />
      ) : (
        data !== undefined && (
          <>
            <div class="grid overview-cards">
              <section class="card" aria-labelledby="c-queue">
                <h2 id="c-queue" class="stat-label">
                  Queue depth
                </h2>
                <p class="stat">{formatCount(data.queue.depth)}</p>
              </section>
              <section class="card" aria-labelledby="c-oldest">
                <h2 id="c-oldest" class="stat-label">
                  Oldest due
                </h2>
                <p class="stat">
                  {data.queue.oldest_due_age_seconds === null ? '—' : formatAge(data.queue.oldest_due_age_seconds)}
                </p>
                {data.queue.oldest_due_at !== null && <p class="hint">due {formatTime(data.queue.oldest_due_at)}</p>}
              </section>
              <section class="card" aria-labelledby="c-retrying">
                <h2 id="c-retrying" class="stat-label">
                  Retrying
                </h2>
                <p class="stat">{formatCount(data.retrying.count)}</p>
                {data.retrying.oldest !== null && (
                  <p class="hint">
                    oldest {formatAge((Date.parse(data.generated_at) - Date.parse(data.retrying.oldest.created_at)) / 1000)} old
                  </p>
                )}
                {data.retrying.count > 0 && <a href={messages({ status: 'retrying' })}>See retrying messages</a>}
              </section>
              <section class="card" aria-labelledby="c-credits">
                <h2 id="c-credits" class="stat-label">
                  Credits left
                </h2>
                <p class="stat">{data.credits.balance === null ? 'Unlimited' : formatCount(data.credits.balance)}</p>
                {/* null: credits unlimited (issue 29), nothing to top up. */}
                {data.credits.balance === null ? (
                  <p class="hint">not metered</p>
                ) : (
                  <a href={href('orgs', org, 'settings')}>Top up</a>
                )}
              </section>
              <section class="card" aria-labelledby="c-held">
                <h2 id="c-held" class="stat-label">
                  Held messages
                </h2>
                <p class="stat">{formatCount(data.held_messages)}</p>
                <a href={messages({ status: 'held,held_service_error' })}>See held {mode === 'test' ? 'test ' : ''}messages</a>
              </section>
            </div>
            {data.retrying.oldest !== null && (
              <Section title="Oldest retrying message">
                <p>
                  <a href={href('orgs', org, 'messages', data.retrying.oldest.message_id)}>
                    <code>{data.retrying.oldest.message_id}</code>
                  </a>{' '}
                  on service <code>{data.retrying.oldest.service_id}</code>, created {formatTime(data.retrying.oldest.created_at)}
                  , {data.retrying.oldest.attempts} {data.retrying.oldest.attempts === 1 ? 'attempt' : 'attempts'}
                  {data.retrying.oldest.next_attempt_at !== null && (
                    <>, next at {formatTime(data.retrying.oldest.next_attempt_at)}</>
                  )}
                  .
                </p>
                <p>Its last error, in full:</p>
                <pre class="message-text wrap">{data.retrying.oldest.last_error}</pre>
              </Section>
            )}
            {mode === 'test' && (
              <Notice kind="info">
                Test messages only: sent with a test key, captured in the <a href={href('orgs', org, 'test-inbox')}>Test inbox</a>
                , never charged.
              </Notice>
            )}
            <Section title={`${mode === 'test' ? 'Test messages' : 'Messages'} per day, last ${data.days} days`}>
              <MessagesChart daily={data.daily} />
            </Section>
            <OverviewRates rates={data.rates} daily={data.daily} messages={messages} />
            <Section title="Services">
              <Table
                caption="Services' health"
                head={['Service', 'Provider', 'Breaker', 'Last error']}
                rows={data.services.length}
                empty="No services yet."
              >
                {data.services.map((s) => (
                  <tr key={s.id}>
                    <td>
                      <a href={href('orgs', org, 'services', s.id)}>
                        <code>{s.id}</code>
                      </a>
                      {s.default && ' (default)'}
                    </td>
                    <td>{s.provider}</td>
                    <td>
                      <Badge value={s.breaker} />
                    </td>
                    <td class="wrap">
                      {s.last_error === null ? (
                        '—'
                      ) : (
                        <>
                          {s.last_error.message} <span class="hint">({formatTime(s.last_error.at)})</span>
                          {s.last_error.message_id !== null && (
                            <>
                              {' '}
                              <a
                                href={href('orgs', org, 'messages', s.last_error.message_id)}
                                aria-label={`Message ${s.last_error.message_id}`}
                              >
                                message
                              </a>
                            </>
                          )}
                        </>
                      )}
                    </td>
                  </tr>
                ))}
              </Table>
            </Section>
          </>
        )
      )}
    </>
  );
}
