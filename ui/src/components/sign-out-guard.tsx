/**
 * "Sign out" while a screen holds unsaved edits (the template editor, a service form) asks
 * first (issue 29), as leaving the template editor does: a modal alertdialog, "Stay signed in"
 * (focused, and what Escape does) or "Sign out without saving". Nothing unsaved: it signs out.
 */
import { useState } from 'preact/hooks';
import { hasUnsavedEdits } from '../lib/unsaved-edits';
import { Modal } from './modal';

export function SignOutButton(props: { onSignOut: () => Promise<void> }) {
  const [asking, setAsking] = useState(false);
  return (
    <>
      <button
        type="button"
        class="btn btn-plain sign-out"
        onClick={() => (hasUnsavedEdits() ? setAsking(true) : void props.onSignOut())}
      >
        Sign out
      </button>
      {/* Mounted only while asking: its buttons must not sit hidden beside "Sign out" (a name lookup would find two). */}
      {asking && (
        <Modal
          open
          role="alertdialog"
          title="Sign out without saving?"
          onClose={() => setAsking(false)}
          actions={
            <>
              {/* biome-ignore lint/a11y/noAutofocus: the safe choice takes focus as the dialog opens (alertdialog). */}
              <button type="button" class="btn btn-primary" autoFocus onClick={() => setAsking(false)}>
                Stay signed in
              </button>
              <button
                type="button"
                class="btn btn-danger"
                onClick={() => {
                  setAsking(false);
                  void props.onSignOut();
                }}
              >
                Sign out without saving
              </button>
            </>
          }
        >
          <p>This page has changes that are not saved. Signing out now discards them.</p>
        </Modal>
      )}
    </>
  );
}
