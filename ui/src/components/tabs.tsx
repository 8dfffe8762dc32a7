import './tabs.css';
import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { splitHash } from '../lib/route-match';
import { useId } from './ui';

export interface TabDef {
  /** The tab's value in the hash query (`?tab=raw`). */
  id: string;
  label: string;
}

/**
 * The selected tab, kept in the hash query (`#/orgs/acme/messages/msg_1?tab=raw`) so a link opens
 * it. A change replaces the hash in place (history.replaceState: no hashchange, no history entry
 * per arrow key, the page is not reloaded); a hash that changes otherwise (a link, Back) is followed.
 * The first tab is the default and leaves no `tab` in the hash. An unknown value shows the first.
 */
export function useHashTab(query: URLSearchParams, tabs: readonly TabDef[]): [string, (id: string) => void] {
  const first = tabs[0]?.id ?? '';
  const valid = (v: string | null) => (v !== null && tabs.some((t) => t.id === v) ? v : first);
  const asked = query.get('tab');
  const [tab, setTab] = useState(() => valid(asked));
  // biome-ignore lint/correctness/useExhaustiveDependencies: follows the hash's value only.
  useEffect(() => setTab(valid(asked)), [asked]);
  const select = (id: string) => {
    setTab(id);
    const [path, q] = splitHash(window.location.hash);
    const params = new URLSearchParams(q);
    if (id === first) params.delete('tab');
    else params.set('tab', id);
    const rest = params.toString();
    window.history.replaceState(window.history.state, '', `#${path}${rest === '' ? '' : `?${rest}`}`);
  };
  return [tab, select];
}

/**
 * WAI-ARIA tabs with automatic activation (APG "Tabs"): a tablist of buttons, one tabpanel each
 * (all present, so every aria-controls names an element; only the selected one is shown and
 * rendered: `panel` is called for it alone). Roving tabindex: Tab enters the selected tab and
 * leaves for its panel; Left/Right move and select (wrapping), Home/End go to the ends.
 */
export function Tabs(props: {
  label: string;
  tabs: readonly TabDef[];
  selected: string;
  onSelect: (id: string) => void;
  panel: (id: string) => ComponentChildren;
}) {
  const base = useId('tabs');
  const buttons = useRef<Array<HTMLButtonElement | null>>([]);
  const index = Math.max(
    0,
    props.tabs.findIndex((t) => t.id === props.selected),
  );
  const go = (i: number) => {
    const n = props.tabs.length;
    const next = props.tabs[((i % n) + n) % n];
    if (next === undefined) return;
    props.onSelect(next.id);
    buttons.current[props.tabs.indexOf(next)]?.focus();
  };
  const onKeyDown = (e: KeyboardEvent) => {
    const moves: Record<string, number> = { ArrowRight: index + 1, ArrowLeft: index - 1, Home: 0, End: props.tabs.length - 1 };
    const to = moves[e.key];
    if (to === undefined) return;
    e.preventDefault();
    go(to);
  };
  return (
    <>
      <div class="tab-list" role="tablist" aria-label={props.label} onKeyDown={onKeyDown}>
        {props.tabs.map((t, i) => (
          <button
            key={t.id}
            ref={(el) => {
              buttons.current[i] = el;
            }}
            type="button"
            role="tab"
            id={`${base}-tab-${t.id}`}
            aria-selected={i === index ? 'true' : 'false'}
            aria-controls={`${base}-panel-${t.id}`}
            tabIndex={i === index ? 0 : -1}
            data-tab={t.id}
            onClick={() => props.onSelect(t.id)}
          >
            {t.label}
          </button>
        ))}
      </div>
      {props.tabs.map((t, i) => (
        <div
          key={t.id}
          class="tab-panel"
          role="tabpanel"
          id={`${base}-panel-${t.id}`}
          aria-labelledby={`${base}-tab-${t.id}`}
          // biome-ignore lint/a11y/noNoninteractiveTabindex: APG Tabs: a panel (the headers table) may hold nothing focusable.
          tabIndex={0}
          hidden={i !== index}
        >
          {i === index && props.panel(t.id)}
        </div>
      ))}
    </>
  );
}
