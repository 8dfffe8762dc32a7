import { useEffect, useState } from 'preact/hooks';
import { api } from '../api/client';
import type { ServerMode } from '../api/types';

/** Asked once per page load: the mode cannot change without a restart, which reloads nothing here but costs one call. */
let asked: Promise<ServerMode> | undefined;

/**
 * The header's statement of the server's mode (issue 25): development, what `npm start` runs,
 * relaxes rules an operator must know about before others can reach the server (webhooks over
 * http, CAPTCHA test secrets…), so it is named on every page. A one-line badge (issue 29: the
 * box listing all four relaxations was 284px tall in the 220px sidebar, 150px of a 390px phone's
 * screen), with the list behind it as a disclosure; the region keeps the name, so it is found by it as before.
 */
export function ServerModeNote() {
  const [mode, setMode] = useState<ServerMode>();
  const [open, setOpen] = useState(false);
  useEffect(() => {
    asked ??= api.get<ServerMode>('/server');
    asked.then(setMode, () => {
      asked = undefined;
    });
  }, []);
  if (mode === undefined) return null;
  const name = mode.mode === 'development' ? 'Development mode' : 'Production mode';
  if (mode.relaxed.length === 0) return <p class="server-mode">{name}</p>;
  return (
    <section class={`server-mode server-mode-relaxed${open ? ' open' : ''}`} aria-labelledby="server-mode-name">
      <button
        type="button"
        id="server-mode-name"
        class="server-mode-badge"
        aria-expanded={open ? 'true' : 'false'}
        aria-controls="server-mode-list"
        title="What this mode relaxes"
        onClick={() => setOpen((o) => !o)}
      >
        {name}
      </button>
      {/* In the page while closed (hidden): the region's text names every relaxation either way. */}
      <div id="server-mode-list" class="server-mode-list" hidden={!open}>
        <p>It relaxes:</p>
        <ul>
          {mode.relaxed.map((r) => (
            <li key={r}>{r}</li>
          ))}
        </ul>
      </div>
    </section>
  );
}
