import './layout.css';
import type { ComponentChildren } from 'preact';
import { useEffect, useRef } from 'preact/hooks';
import { href } from '../lib/route-match';
import { ORG_SECTIONS } from '../routes';
import { ServerModeNote } from './server-mode';

/**
 * The frame of every signed-in screen: a skip link, the navigation (the organization's
 * sections when one is open) and the main region, which takes focus on every change of page.
 * The current section is marked with aria-current, not colour alone.
 */
export function Layout(props: { org: string | undefined; onSignOut: () => Promise<void>; children: ComponentChildren }) {
  const current = window.location.hash.split('?')[0] ?? '';
  // A new page (not a new query on the same one, nor the first load) takes focus to the main
  // region, so a screen reader user lands on it instead of staying on the link left behind.
  const shown = useRef(current);
  useEffect(() => {
    if (shown.current === current) return;
    shown.current = current;
    document.getElementById('main')?.focus();
  }, [current]);
  return (
    <div class="shell">
      {/* biome-ignore lint/a11y/useValidAnchor: a skip link is a link; the click moves focus (#main would read as a route). */}
      <a
        class="skip-link"
        href="#main"
        onClick={(e) => {
          e.preventDefault();
          document.getElementById('main')?.focus();
        }}
      >
        Skip to content
      </a>
      <nav class="sidebar" aria-label="Main">
        <a class="brand" href="#/">
          mailroom
        </a>
        <ServerModeNote />
        <ul>
          <li>
            <a href="#/orgs" aria-current={current === '#/orgs' || current === '#/' || current === '' ? 'page' : undefined}>
              Organizations
            </a>
          </li>
        </ul>
        {props.org !== undefined && (
          <>
            <p class="nav-org" id="nav-org">
              Organization <strong>{props.org}</strong>
            </p>
            <ul aria-labelledby="nav-org">
              {ORG_SECTIONS.map(([section, label]) => {
                const link = section === '' ? href('orgs', props.org as string) : href('orgs', props.org as string, section);
                const active = current === link || (section !== '' && current.startsWith(`${link}/`));
                return (
                  <li key={section}>
                    <a href={link} aria-current={active ? 'page' : undefined}>
                      {label}
                    </a>
                  </li>
                );
              })}
            </ul>
          </>
        )}
        <button type="button" class="btn btn-plain sign-out" onClick={() => void props.onSignOut()}>
          Sign out
        </button>
      </nav>
      <main id="main" tabIndex={-1}>
        {props.children}
      </main>
    </div>
  );
}
