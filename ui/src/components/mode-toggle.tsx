import './org-pages.css';
import { MODES, type Mode } from '../lib/test-mode';
import { navigate } from '../router';

const LABELS: Readonly<Record<Mode, string>> = { live: 'Live', test: 'Test' };

/**
 * Live or test messages (issue 27): two buttons in a named group, the shown one pressed
 * (aria-pressed, and filled: not colour alone). A press moves to `link(mode)`, so the choice
 * lives in the hash (`mode=test`) and survives a reload.
 */
export function ModeToggle(props: { mode: Mode; link: (mode: Mode) => string; label?: string }) {
  return (
    <fieldset aria-label={props.label ?? 'Messages shown'} class="segmented mode-toggle">
      {MODES.map((m) => (
        <button
          key={m}
          type="button"
          class="btn btn-plain"
          aria-pressed={m === props.mode}
          onClick={() => navigate(props.link(m))}
        >
          {LABELS[m]}
        </button>
      ))}
    </fieldset>
  );
}
