import type { Overview } from '../api/overview';
import { useState } from 'preact/hooks';
import { formatPercent, formatRate, formatRateCount, RATES, type RateFigures, STATUSES_OF } from '../lib/rates';
import { Section, Table } from './ui';

/** What each figure is called after its count ("21 bounced of 1,000 sent"), and in a link's hidden context. */
const NOUN: Record<keyof typeof STATUSES_OF, string> = {
  sent: 'sent',
  delivered: 'delivered',
  bounced: 'bounced',
  complained: 'complained',
};

type MessagesLink = (query: Record<string, string>) => string;

/**
 * Days in the table until "Show all" is pressed: two weeks, the days an operator checks. A
 * 90-day range has up to 90 rows of five links (on a phone a list of 90 five-line items), built
 * and laid out before the services below them; 14 bound that work whatever the range. Measured
 * with `npm run bench:ui` (100,000 messages, a machine at load 15–19): the 90-day overview
 * from a link 320 and 312 ms (median) against 450 and 515 ms for the page before the rates.
 */
const FIRST_DAYS = 14;

/**
 * Delivery, bounce and complaint rates (issue 29) over the overview's range and per UTC day, each
 * with its numerator and denominator; every count links to the Messages page filtered to its day
 * (or the range) and statuses. Days with no message at all are left out of the table (a 90-day
 * range of a quiet organization would otherwise be rows of dashes); a day with messages but none
 * sent stays, with dashes. The newest FIRST_DAYS show until the operator asks for all.
 */
export function OverviewRates(props: { rates: Overview['rates']; daily: Overview['daily']; messages: MessagesLink }) {
  const { rates, daily, messages } = props;
  const first = daily[0]?.date ?? '';
  const last = daily[daily.length - 1]?.date ?? '';
  const shown = rates.daily.filter((_, i) => (daily[i]?.accepted ?? 0) > 0).reverse();
  const left = rates.daily.length - shown.length;
  const [all, setAll] = useState(false);
  const rows = all ? shown : shown.slice(0, FIRST_DAYS);
  const link = (from: string, to: string, figure: keyof typeof STATUSES_OF) =>
    messages({ status: STATUSES_OF[figure].join(','), from, to });
  return (
    <Section title={`Delivery, bounce and complaint rates, last ${rates.daily.length} days`}>
      <div class="grid overview-cards rate-cards">
        {RATES.map((r) => (
          <div key={r.label} class="card">
            <h3 class="stat-label">{r.label}</h3>
            <p class="stat">{formatPercent(r.rate(rates.range))}</p>
            <p class="hint">
              <Count n={rates.range[r.numerator]} href={link(first, last, r.numerator)} noun={NOUN[r.numerator]} /> of{' '}
              <Count n={rates.range[r.denominator]} href={link(first, last, r.denominator)} noun={NOUN[r.denominator]} />
            </p>
          </div>
        ))}
      </div>
      <p class="hint rate-definitions">
        Of the messages created each UTC day: <strong>sent</strong> counts those their service took (delivered, bounced,
        complained, or no outcome reported yet); failed messages are not counted. Delivery rate = delivered ÷ sent, bounce rate =
        bounced ÷ sent, complaint rate = complained ÷ delivered (a complaint comes after its delivery, so a complained message
        counts as delivered too).
      </p>
      <div class="rate-days">
        <Table
          caption="Rates per UTC day, newest first"
          head={['Day (UTC)', 'Sent', ...RATES.map((r) => r.label)]}
          rows={rows.length}
          empty="No messages in these days."
        >
          {rows.map((d) => (
            <tr key={d.date}>
              <th scope="row">
                <a href={messages({ from: d.date, to: d.date })}>
                  <span class="visually-hidden">Messages of </span>
                  {d.date}
                </a>
              </th>
              <td class="num">
                <Count n={d.sent} href={link(d.date, d.date, 'sent')} hidden={`sent on ${d.date}`} />
              </td>
              {RATES.map((r) => (
                <td key={r.label} class="num">
                  <RateText figures={d} cell={r} href={link(d.date, d.date, r.numerator)} date={d.date} />
                </td>
              ))}
            </tr>
          ))}
        </Table>
      </div>
      {shown.length > FIRST_DAYS && (
        <button type="button" class="btn btn-plain btn-small" aria-expanded={all} onClick={() => setAll((v) => !v)}>
          {all ? `Show the latest ${FIRST_DAYS} days only` : `Show all ${shown.length} days`}
        </button>
      )}
      {left > 0 && shown.length > 0 && (
        <p class="hint">
          {left === 1 ? 'One day' : `${left} days`} with no messages {left === 1 ? 'is' : 'are'} left out.
        </p>
      )}
    </Section>
  );
}

/**
 * A count ("61 delivered", or "48" with its context hidden where the column names it), a link to
 * its messages when there are any: a link to an empty list would only waste a click.
 */
function Count(props: { n: number; href: string; noun?: string; hidden?: string }) {
  const text = props.noun === undefined ? formatRateCount(props.n) : `${formatRateCount(props.n)} ${props.noun}`;
  if (props.n === 0) return <>{text}</>;
  return (
    <a href={props.href}>
      {text}
      {props.hidden !== undefined && <span class="visually-hidden"> {props.hidden}</span>}
    </a>
  );
}

/** `2.1% (21 of 1,000)`, the link to the day's messages of the numerator; `—` with no denominator. */
function RateText(props: { figures: RateFigures; cell: (typeof RATES)[number]; href: string; date: string }) {
  const { figures: f, cell } = props;
  const text = formatRate(cell.rate(f), f[cell.numerator], f[cell.denominator]);
  if (f[cell.denominator] === 0 || f[cell.numerator] === 0) return <>{text}</>;
  return (
    <a href={props.href}>
      {text}
      <span class="visually-hidden">
        {' '}
        {NOUN[cell.numerator]} on {props.date}
      </span>
    </a>
  );
}
