import { useEffect, useRef, useState } from 'preact/hooks';

/**
 * The Messages page's auto-refresh (issue 29): off by default; the choice is kept in this
 * browser (localStorage), so it outlives a reload but no shared link turns it on for someone
 * else. One load at a time: the next is timed from the end of the last, so a slow server
 * never gets overlapping requests; a hidden tab loads nothing and catches up when shown again.
 */

export const AUTO_REFRESH_MS = 10_000;
const STORAGE_KEY = 'mailroom.messages.autoRefresh';

function stored(): boolean {
  try {
    return window.localStorage.getItem(STORAGE_KEY) === 'on';
  } catch {
    return false; // storage refused (a privacy mode): off, as by default
  }
}

export function useAutoRefresh(reload: () => Promise<void>, every = AUTO_REFRESH_MS): [boolean, (on: boolean) => void] {
  const [on, setOn] = useState(stored);
  const latest = useRef(reload);
  latest.current = reload;
  useEffect(() => {
    if (!on) return;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let stopped = false;
    let running = false;
    const schedule = () => {
      clearTimeout(timer);
      if (!stopped && document.visibilityState === 'visible') timer = setTimeout(() => void tick(), every);
    };
    const tick = async () => {
      if (running) return;
      running = true;
      try {
        await latest.current();
      } finally {
        running = false;
        schedule();
      }
    };
    const visibility = () => {
      if (document.visibilityState === 'visible') void tick();
      else clearTimeout(timer);
    };
    schedule();
    document.addEventListener('visibilitychange', visibility);
    return () => {
      stopped = true;
      clearTimeout(timer);
      document.removeEventListener('visibilitychange', visibility);
    };
  }, [on, every]);
  const set = (value: boolean) => {
    setOn(value);
    try {
      window.localStorage.setItem(STORAGE_KEY, value ? 'on' : 'off');
    } catch {
      // kept for this page only
    }
  };
  return [on, set];
}
