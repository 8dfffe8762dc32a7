import type { Page } from 'playwright-core';
import { expect } from 'vitest';

/**
 * Keyboard checks for the operator UI's E2E tests (issue 15: "usable without a mouse, labelled
 * form controls, visible focus"): where focus is, with its accessible role and name as the
 * browser exposes them, whether it shows a focus ring with enough contrast, and walks of the
 * Tab order. Keys only: nothing here clicks or fills. KBD_DEBUG=1 prints every stop passed.
 */

/** Where focus is: what the test asserts on, and prints when a step goes wrong. */
export interface Focused {
  /** The element's number in this page (stable while it stays in the DOM). */
  uid: number;
  tag: string;
  role: string;
  name: string;
  ring: boolean;
  /** The outline's contrast with the background around it (0 without an outline). */
  ringContrast: number;
  onScreen: boolean;
  region: 'main' | 'nav' | 'other';
  inEditor: boolean;
  editorIndex: number;
}

// A string, not a function: the tests' TypeScript has no DOM types. Runs in the page.
const FOCUS_STATE = `(() => {
  const el = document.activeElement;
  if (el === null || el === document.body || el === document.documentElement) return null;
  // CodeMirror focuses its content, and draws the ring on the editor around it.
  const ringOn = el.closest('.cm-editor') ?? el;
  const s = getComputedStyle(ringOn);
  const outline = s.outlineStyle !== 'none' && parseFloat(s.outlineWidth) >= 1 && !/rgba\\(.*, 0\\)$/.test(s.outlineColor);
  const r = el.getBoundingClientRect();
  // The outline (drawn 2px outside) against what is behind it: the first opaque background up.
  const rgb = (c) => (c.match(/[\\d.]+/g) ?? []).map(Number);
  const lum = (c) => {
    const v = rgb(c).slice(0, 3).map((x) => {
      x /= 255;
      return x <= 0.03928 ? x / 12.92 : ((x + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * v[0] + 0.7152 * v[1] + 0.0722 * v[2];
  };
  let behind = 'rgb(255, 255, 255)';
  for (let p = ringOn.parentElement; p !== null; p = p.parentElement) {
    const bg = getComputedStyle(p).backgroundColor;
    if (rgb(bg)[3] !== 0) { behind = bg; break; }
  }
  const [hi, lo] = [lum(s.outlineColor), lum(behind)].sort((a, b) => b - a);
  // The same element keeps its number, so a walk knows when it has come round.
  window.__stopIds ??= new WeakMap();
  if (!window.__stopIds.has(el)) window.__stopIds.set(el, (window.__stopSeq = (window.__stopSeq ?? 0) + 1));
  return {
    uid: window.__stopIds.get(el),
    tag: el.tagName.toLowerCase(),
    ring: outline || (s.boxShadow !== 'none' && s.boxShadow !== ''),
    ringContrast: outline ? (hi + 0.05) / (lo + 0.05) : 0,
    onScreen: r.width > 0 && r.height > 0 && r.left >= 0 && r.top >= 0 && r.right <= innerWidth && r.bottom <= innerHeight,
    region: el.closest('main') ? 'main' : el.closest('nav.sidebar') ? 'nav' : 'other',
    inEditor: el.closest('.cm-editor') !== null,
    editorIndex: [...document.querySelectorAll('.cm-content')].indexOf(el),
  };
})()`;

export async function focused(page: Page): Promise<Focused | undefined> {
  const state = (await page.evaluate(FOCUS_STATE)) as Omit<Focused, 'role' | 'name'> | null;
  if (state === null) return undefined;
  // The accessible role and name as the browser exposes them (first line of the aria snapshot).
  const snapshot = await page
    .locator('*:focus')
    .first()
    .ariaSnapshot({ timeout: 2000 })
    .catch(() => '');
  // YAML quotes the whole line when the name holds characters such as `{`.
  const m = /^- '?([\w-]+)(?: "((?:[^"\\]|\\.)*)")?/.exec(snapshot);
  return { ...state, role: m?.[1] ?? '', name: (m?.[2] ?? '').replace(/\\"/g, '"') };
}

/** As `focused`, once CodeMirror has marked its frame focused (a few milliseconds after the focus event). */
export async function settledFocus(page: Page): Promise<Focused | undefined> {
  let f = await focused(page);
  for (let i = 0; i < 20 && f?.inEditor === true && !f.ring; i++) {
    await page.waitForTimeout(50);
    f = await focused(page);
  }
  return f;
}

export const describeFocus = (f: Focused | undefined) =>
  f === undefined ? '(nothing: body)' : `${f.role} "${f.name}" <${f.tag}> in ${f.region}`;

/** Presses `key` until the focused element is `role` named `name`; fails naming every stop passed. */
export async function pressUntil(
  page: Page,
  key: 'Tab' | 'Shift+Tab',
  role: string,
  name: string | RegExp,
  max = 40,
): Promise<Focused> {
  const seen: string[] = [];
  for (let i = 0; i < max; i++) {
    await page.keyboard.press(key);
    const f = await focused(page);
    seen.push(describeFocus(f));
    if (process.env.KBD_DEBUG !== undefined) console.log(key, describeFocus(f), new Date().toISOString());
    if (f !== undefined && f.role === role && (typeof name === 'string' ? f.name === name : name.test(f.name))) return f;
  }
  throw new Error(`${key} x${max} never reached ${role} "${String(name)}"; stops:\n  ${seen.join('\n  ')}`);
}

/** The focused element has a visible focus ring, is on screen and has an accessible name. */
export async function expectVisibleNamedFocus(page: Page, role?: string, name?: string | RegExp): Promise<Focused> {
  const f = await settledFocus(page);
  expect(f, 'something has focus').toBeDefined();
  const at = describeFocus(f);
  expect(f?.ring, `focus ring on ${at}`).toBe(true);
  // WCAG 1.4.11: a focus indicator needs 3:1 against what is next to it.
  if ((f?.ringContrast ?? 0) > 0) expect(f?.ringContrast, `focus ring contrast on ${at}`).toBeGreaterThanOrEqual(3);
  expect(f?.onScreen, `${at} is scrolled into view`).toBe(true);
  expect(f?.name, `accessible name of ${at}`).not.toBe('');
  if (role !== undefined) expect(f?.role, at).toBe(role);
  if (name !== undefined)
    expect(f?.name, at).toMatch(typeof name === 'string' ? new RegExp(`^${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`) : name);
  return f as Focused;
}

/**
 * Tabs through the whole page once (until focus comes back round) and checks every stop: a
 * ring, a name. Returns the stops, so a test can also say what must be among them.
 */
export async function walkTabOrder(page: Page, max = 120): Promise<string[]> {
  const stops: string[] = [];
  const visited = new Set<number>();
  let bodies = 0;
  for (let i = 0; i < max && bodies < 2; i++) {
    await page.keyboard.press('Tab');
    const f = await settledFocus(page);
    if (f === undefined) {
      bodies++;
      continue;
    }
    const at = describeFocus(f);
    if (visited.has(f.uid)) break;
    visited.add(f.uid);
    stops.push(at);
    if (process.env.KBD_DEBUG !== undefined) console.log('walk', at, f.ringContrast.toFixed(2));
    expect(f.ring, `focus ring on ${at} (${page.url()})`).toBe(true);
    if (f.ringContrast > 0) expect(f.ringContrast, `focus ring contrast on ${at} (${page.url()})`).toBeGreaterThanOrEqual(3);
    expect(f.name, `accessible name of ${at} (${page.url()})`).not.toBe('');
  }
  return stops;
}
