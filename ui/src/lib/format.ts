/** Display helpers shared by every page (pure, no DOM). */

/** An ISO time as `2026-11-25 18:52:06 UTC`, or an em dash for null. */
export function formatTime(iso: string | null | undefined): string {
  if (iso === null || iso === undefined || iso === '') return '—';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return `${d.toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}

/** 1234567 → `1,234,567`. */
export function formatCount(n: number | null | undefined): string {
  if (n === null || n === undefined) return '—';
  return Math.round(n).toLocaleString('en-US');
}

/** A duration in seconds as `45 s`, `12 min`, `3 h 5 min`, `2 d 4 h`. */
export function formatAge(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined) return '—';
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
  return `${Math.floor(s / 86400)} d ${Math.floor((s % 86400) / 3600)} h`;
}

/** `['a', 'b']` → `a, b`: an address list as one line; an empty or missing list as an em dash. */
export const formatList = (a: readonly string[] | null | undefined): string =>
  a === null || a === undefined || a.length === 0 ? '—' : a.join(', ');

/** `12345` → `12.1 KB`: a message's size as an operator reads it (1 KB = 1024 bytes, as mail clients count). */
export function formatSize(bytes: number | null | undefined): string {
  if (bytes === null || bytes === undefined || !Number.isFinite(bytes) || bytes < 0) return '—';
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}
