/**
 * Unsaved edits are not lost (issue 29): while the editor holds changes, leaving it asks first.
 * - A click on an in-app link (the sidebar, "All templates", any `#/…` link) is stopped before
 *   the hash changes, and a modal dialog asks: stay, or leave without saving.
 * - Back, forward or a hash typed in the address bar have moved already when the page hears of
 *   it: `popstate` comes before `hashchange` (the router's cue, router.ts), so the editor's
 *   address is put back there and the router never moves; the same dialog then asks.
 * - Reload, closing the tab and other sites get the browser's own `beforeunload` prompt.
 * - Ctrl+S / Cmd+S saves instead of offering to save the page as a file.
 * - Sign out asks as well (components/sign-out-guard.tsx).
 */
import type { JSX } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { useUnsavedEdits } from '../lib/unsaved-edits';
import { Modal } from './modal';

export interface LeaveGuard {
  /** Lets the next move through unasked (the editor moving itself to a template it created). */
  allowNextMove: () => void;
}

const hashOf = (url: string): string => {
  const i = url.indexOf('#');
  return i < 0 || i === url.length - 1 ? '' : url.slice(i);
};

/** The hash a click would move to, or undefined for a click the app does not route (modifiers, other pages). */
function routedHash(event: MouseEvent): string | undefined {
  if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey)
    return undefined;
  const anchor = event.target instanceof Element ? event.target.closest('a[href]') : null;
  if (!(anchor instanceof HTMLAnchorElement) || (anchor.target !== '' && anchor.target !== '_self')) return undefined;
  const url = new URL(anchor.href, window.location.href);
  const here = window.location;
  if (url.origin !== here.origin || url.pathname !== here.pathname || url.search !== here.search) return undefined;
  return hashOf(url.href) === hashOf(here.href) ? undefined : url.hash;
}

/**
 * `dirty`: the editor holds unsaved changes; `onSave`: what Ctrl/Cmd+S does; `what`: the thing
 * edited, as the dialog names it. The template editor and the service form (issue 29) use it.
 */
export function useLeaveGuard(
  dirty: boolean,
  onSave: () => void,
  what = 'This template',
): { guard: LeaveGuard; dialog: JSX.Element } {
  const dirtyRef = useRef(dirty);
  dirtyRef.current = dirty;
  // Signing out asks too (components/sign-out-guard.tsx).
  useUnsavedEdits(dirty);
  const saveRef = useRef(onSave);
  saveRef.current = onSave;
  // The editor's own address, as last rendered: what back/forward is undone to.
  const here = useRef(window.location.href);
  useEffect(() => {
    here.current = window.location.href;
  });
  const allowed = useRef(false);
  const [pending, setPending] = useState<string | undefined>();

  useEffect(() => {
    const onClick = (e: MouseEvent) => {
      const to = routedHash(e);
      if (to === undefined || !dirtyRef.current || allowed.current) return;
      e.preventDefault();
      setPending(to);
    };
    const onPopState = () => {
      if (allowed.current) {
        allowed.current = false;
        return;
      }
      const to = window.location.hash;
      if (!dirtyRef.current || hashOf(here.current) === to) return;
      // Back: the editor's entry comes again after the one moved to, so Back still leads there.
      window.history.pushState(window.history.state, '', here.current);
      setPending(to);
    };
    const onBeforeUnload = (e: BeforeUnloadEvent) => {
      if (!dirtyRef.current) return;
      e.preventDefault();
      // Chromium before 119 shows the prompt only when returnValue is set.
      e.returnValue = '';
    };
    const onKeyDown = (e: KeyboardEvent) => {
      if (!(e.ctrlKey || e.metaKey) || e.altKey || e.shiftKey || e.key.toLowerCase() !== 's') return;
      e.preventDefault();
      saveRef.current();
    };
    document.addEventListener('click', onClick, true);
    window.addEventListener('popstate', onPopState);
    window.addEventListener('beforeunload', onBeforeUnload);
    window.addEventListener('keydown', onKeyDown, true);
    return () => {
      document.removeEventListener('click', onClick, true);
      window.removeEventListener('popstate', onPopState);
      window.removeEventListener('beforeunload', onBeforeUnload);
      window.removeEventListener('keydown', onKeyDown, true);
    };
  }, []);

  const guard: LeaveGuard = {
    allowNextMove: () => {
      allowed.current = true;
    },
  };
  const leave = () => {
    const to = pending;
    setPending(undefined);
    if (to === undefined) return;
    allowed.current = true;
    window.location.hash = to;
  };
  return {
    guard,
    dialog: <LeaveDialog open={pending !== undefined} what={what} onStay={() => setPending(undefined)} onLeave={leave} />,
  };
}

function LeaveDialog(props: { open: boolean; what: string; onStay: () => void; onLeave: () => void }) {
  return (
    <Modal
      open={props.open}
      role="alertdialog"
      title="Leave without saving?"
      onClose={props.onStay}
      actions={
        <>
          {/* biome-ignore lint/a11y/noAutofocus: the safe choice takes focus when the dialog opens (WAI-ARIA alertdialog). */}
          <button type="button" class="btn btn-primary" autoFocus onClick={props.onStay}>
            Stay on this page
          </button>
          <button type="button" class="btn btn-danger" onClick={props.onLeave}>
            Leave without saving
          </button>
        </>
      }
    >
      <p>{props.what} has changes that are not saved. Leaving now discards them.</p>
    </Modal>
  );
}
