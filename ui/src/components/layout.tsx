import './layout.css';
import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { href } from '../lib/route-match';
import { ORG_SECTIONS } from '../routes';
import { ServerModeNote } from './server-mode';
import { SignOutButton } from './sign-out-guard';

const focusMain = () => document.getElementById('main')?.focus();

/**
 * The frame of every signed-in screen: a skip link, the navigation (the organization's
 * sections when one is open) and the main region, which takes focus on every change of page.
 * The current section is marked with aria-current, not colour alone.
 *
 * Under 720px (layout.css) the navigation is a top bar: the brand, the server's mode and a Menu
 * button that shows or hides the links, so a page starts 46px from the top instead of below
 * the links in wrapped rows (386px down on a 390px phone, in an organization). `focusMain` (after signing in) puts
 * focus on the main region at once, as a change of page does.
 */
export function Layout(props: {
  org: string | undefined;
  onSignOut: () => Promise<void>;
  focusMain?: boolean;
  children: ComponentChildren;
}) {
  const current = window.location.hash.split('?')[0] ?? '';
  const [menuOpen, setMenuOpen] = useState(false);
  const toggle = useRef<HTMLButtonElement>(null);
  // A new page (not a new query on the same one, nor the first load) takes focus to the main
  // region, so a screen reader user lands on it instead of staying on the link left behind.
  const shown = useRef(current);
  useEffect(() => {
    if (shown.current === current) return;
    shown.current = current;
    setMenuOpen(false);
    focusMain();
  }, [current]);
  // Only on mount: the sign-in form's button is gone, and focus would be left on the body.
  // biome-ignore lint/correctness/useExhaustiveDependencies: once, for the screen signing in opened.
  useEffect(() => {
    if (props.focusMain === true) focusMain();
  }, []);
  const closeMenu = (refocus: 'toggle' | 'main') => {
    setMenuOpen(false);
    if (refocus === 'toggle') toggle.current?.focus();
    else focusMain();
  };
  return (
    <div class="shell">
      {/* biome-ignore lint/a11y/useValidAnchor: a skip link is a link; the click moves focus (#main would read as a route). */}
      <a
        class="skip-link"
        href="#main"
        onClick={(e) => {
          e.preventDefault();
          focusMain();
        }}
      >
        Skip to content
      </a>
      <nav class="sidebar" aria-label="Main">
        <div class="nav-top">
          <a class="brand" href="#/">
            mailroom
          </a>
          <ServerModeNote />
          <button
            ref={toggle}
            type="button"
            class="btn nav-toggle"
            aria-expanded={menuOpen ? 'true' : 'false'}
            aria-controls="nav-links"
            onClick={() => setMenuOpen((open) => !open)}
          >
            Menu
          </button>
        </div>
        {/* biome-ignore lint/a11y/noStaticElementInteractions: Escape and link clicks bubble up from the links inside. */}
        <div
          id="nav-links"
          class={menuOpen ? 'nav-links open' : 'nav-links'}
          onKeyDown={(e) => {
            if (e.key === 'Escape' && menuOpen) {
              e.preventDefault();
              closeMenu('toggle');
            }
          }}
          onClick={(e) => {
            // A link to the page already shown changes no hash: close the menu here, and put
            // focus on the page, since the link it was on is hidden with the menu.
            const link = (e.target as Element).closest('a');
            if (link !== null && menuOpen && link.getAttribute('href') === current) closeMenu('main');
          }}
        >
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
          <SignOutButton onSignOut={props.onSignOut} />
        </div>
      </nav>
      <main id="main" tabIndex={-1}>
        {props.children}
      </main>
    </div>
  );
}
