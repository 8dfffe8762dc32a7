import type { ComponentChildren } from 'preact';
import { useLayoutEffect, useRef } from 'preact/hooks';

/**
 * Writes each body cell's column name into its data-label, for narrow.css's phone list (every
 * table inside `root`: a delivery's attempts too). A cell spanning columns gets an empty one.
 * Attributes are only written when they differ, so a re-render of an unchanged table writes none.
 */
function labelCells(root: HTMLElement): void {
  for (const table of root.querySelectorAll('table')) {
    const head = table.tHead?.rows[0];
    if (head === undefined) continue;
    const names = Array.from(head.cells, (c) => c.textContent?.trim() ?? '');
    for (const body of Array.from(table.tBodies)) {
      for (const row of Array.from(body.rows)) {
        let column = 0;
        for (const cell of Array.from(row.cells)) {
          const label = cell.colSpan > 1 || cell.classList.contains('empty') ? '' : (names[column] ?? '');
          if (cell.getAttribute('data-label') !== label) cell.setAttribute('data-label', label);
          column += cell.colSpan;
        }
      }
    }
  }
}

/**
 * A table with a caption (read by screen readers) and a message when empty. On a phone it is a
 * list (narrow.css), each cell with its column's name. `list` defaults to more than two columns:
 * a name and its value (a captured message's header fields) fit 390px as a table, and read
 * worse as "Name From, Value …"; false keeps any table one, in its own horizontal scroll.
 */
export function Table(props: {
  caption: string;
  head: string[];
  empty?: string;
  children: ComponentChildren;
  rows: number;
  list?: boolean;
}) {
  const wrap = useRef<HTMLDivElement>(null);
  // After every render, before the paint: rows come and go with the data, cells with the rows.
  useLayoutEffect(() => {
    if (wrap.current !== null) labelCells(wrap.current);
  });
  return (
    <div ref={wrap} class={(props.list ?? props.head.length > 2) ? 'table-wrap table-list' : 'table-wrap'}>
      <table>
        <caption class="visually-hidden">{props.caption}</caption>
        <thead>
          <tr>
            {props.head.map((h) => (
              <th key={h} scope="col">
                {h}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {props.rows === 0 ? (
            <tr>
              <td colSpan={props.head.length} class="empty">
                {props.empty ?? 'Nothing here yet.'}
              </td>
            </tr>
          ) : (
            props.children
          )}
        </tbody>
      </table>
    </div>
  );
}

/**
 * Tables made elsewhere shown as Table shows its own: a list on a phone, each cell labelled with
 * its column (a delivery's attempts on the delivery's page, pages/webhook-delivery.tsx).
 */
export function ListOnPhone(props: { children: ComponentChildren }) {
  const wrap = useRef<HTMLDivElement>(null);
  useLayoutEffect(() => {
    if (wrap.current !== null) labelCells(wrap.current);
  });
  return (
    <div ref={wrap} class="table-wrap table-list">
      {props.children}
    </div>
  );
}
