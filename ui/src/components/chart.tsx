import './chart.css';
import { useState } from 'preact/hooks';
import {
  barSlot,
  chartSummary,
  labelledDays,
  linearScale,
  niceTicks,
  SERIES,
  shortDate,
  stackDays,
  type DayCounts,
} from '../lib/chart';
import { formatCount } from '../lib/format';

/**
 * The drawing's width in viewBox units: 720 on a wide screen; 360 on a phone (under 720 px), where
 * the SVG is scaled into ~340 px, so the 11-unit tick labels stay ~10 px on screen instead of ~5 px,
 * with at most 4 dates labelled instead of 8 so they do not collide.
 */
const WIDE = { width: 720, dates: 8 };
const NARROW = { width: 360, dates: 4 };
const HEIGHT = 260;
const PAD = { top: 12, right: 8, bottom: 28, left: 44 };

/**
 * Messages per day by status as a stacked bar chart in inline SVG (no chart library: a few
 * rects). The SVG is one image with a sentence as its label; the numbers are in a table that
 * a button shows (and screen readers can reach either way). Colours are the Okabe–Ito
 * palette, told apart without colour vision by the legend's order matching the stack's.
 */
export function MessagesChart(props: { daily: readonly DayCounts[] }) {
  const [showTable, setShowTable] = useState(false);
  // Read once per page: a phone does not turn into a desktop, and a rotated phone still reads 11-unit labels.
  const [{ width: WIDTH, dates }] = useState(() => (window.matchMedia('(max-width: 720px)').matches ? NARROW : WIDE));
  const days = stackDays(props.daily);
  const ticks = niceTicks(Math.max(0, ...days.map((d) => d.total)));
  const innerW = WIDTH - PAD.left - PAD.right;
  const innerH = HEIGHT - PAD.top - PAD.bottom;
  const y = linearScale(0, ticks[ticks.length - 1] ?? 1, PAD.top + innerH, PAD.top);
  const labelled = labelledDays(days.length, dates);
  return (
    <figure class="chart">
      <svg
        viewBox={`0 0 ${WIDTH} ${HEIGHT}`}
        role="img"
        aria-label={chartSummary(props.daily)}
        preserveAspectRatio="xMidYMid meet"
      >
        {ticks.map((t) => (
          <g key={t}>
            <line x1={PAD.left} x2={WIDTH - PAD.right} y1={y(t)} y2={y(t)} class="chart-grid" />
            <text x={PAD.left - 6} y={y(t) + 4} text-anchor="end" class="chart-tick">
              {formatCount(t)}
            </text>
          </g>
        ))}
        {days.map((d, i) => {
          const slot = barSlot(i, days.length, innerW);
          const x = PAD.left + slot.x;
          return (
            <g key={d.date}>
              {d.segments.map((s) => (
                <rect
                  key={s.key}
                  x={x}
                  width={slot.width}
                  y={y(s.to)}
                  height={Math.max(0, y(s.from) - y(s.to))}
                  fill={SERIES.find((c) => c.key === s.key)?.colour}
                  class="chart-bar"
                >
                  <title>{`${d.date}: ${s.value} ${SERIES.find((c) => c.key === s.key)?.label.toLowerCase()}`}</title>
                </rect>
              ))}
              {labelled.has(i) && (
                <text x={x + slot.width / 2} y={HEIGHT - 8} text-anchor="middle" class="chart-tick">
                  {shortDate(d.date)}
                </text>
              )}
            </g>
          );
        })}
      </svg>
      <figcaption>
        <ul class="chart-legend" aria-label="Legend, bottom to top">
          {SERIES.map((s) => (
            <li key={s.key}>
              <span class="chart-swatch" style={{ background: s.colour }} aria-hidden="true" />
              {s.label}
            </li>
          ))}
        </ul>
        <button
          type="button"
          class="btn btn-plain btn-small"
          aria-expanded={showTable}
          aria-controls="chart-data"
          onClick={() => setShowTable((v) => !v)}
        >
          {showTable ? 'Hide the numbers' : 'Show the numbers'}
        </button>
      </figcaption>
      <div id="chart-data" class={showTable ? 'table-wrap' : 'visually-hidden'}>
        <table>
          <caption class="visually-hidden">Messages per day by status</caption>
          <thead>
            <tr>
              {['Date', 'Accepted', 'Delivered', 'Held', 'Bounced', 'Complained', 'Failed'].map((h) => (
                <th key={h} scope="col">
                  {h}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {props.daily.map((d) => (
              <tr key={d.date}>
                <th scope="row">{d.date}</th>
                <td>{formatCount(d.accepted)}</td>
                <td>{formatCount(d.delivered)}</td>
                <td>{formatCount(d.held)}</td>
                <td>{formatCount(d.bounced)}</td>
                <td>{formatCount(d.complained)}</td>
                <td>{formatCount(d.failed)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </figure>
  );
}
