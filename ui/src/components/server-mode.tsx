import { useEffect, useState } from 'preact/hooks';
import { api } from '../api/client';
import type { ServerMode } from '../api/types';

/** Asked once per page load: the mode cannot change without a restart, which reloads nothing here but costs one call. */
let asked: Promise<ServerMode> | undefined;

/**
 * The header's statement of the server's mode (issue 25): development, what `npm start` runs,
 * relaxes rules an operator must know about before others can reach the server (webhooks over
 * http, CAPTCHA test secrets…), so it is named with every relaxation, on every page.
 */
export function ServerModeNote() {
  const [mode, setMode] = useState<ServerMode>();
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
    <section class="server-mode server-mode-relaxed" aria-labelledby="server-mode-name">
      <p id="server-mode-name">
        <strong>{name}</strong>, which relaxes:
      </p>
      <ul>
        {mode.relaxed.map((r) => (
          <li key={r}>{r}</li>
        ))}
      </ul>
    </section>
  );
}
