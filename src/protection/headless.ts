/**
 * Signs of a headless or automated browser in the request headers (Authentication rule 9).
 * Only what a request says about itself can be seen server-side; a bot that copies a real
 * browser's headers passes, which is why this is one layer beside CAPTCHA and the limits.
 *
 * - `HeadlessChrome` in User-Agent: headless Chrome/Chromium, which Puppeteer and Playwright
 *   launch by default (also `chrome-headless-shell`);
 * - `HeadlessChrome` among the `Sec-CH-UA` brands: the client hint of the same;
 * - PhantomJS, SlimerJS, CasperJS, NightmareJS, Electron-based Nightmare, HtmlUnit, jsdom,
 *   Zombie.js, Splash, Selenium/WebDriver and the user agents Puppeteer's and Playwright's
 *   HTTP clients announce themselves with.
 */
const USER_AGENT_SIGNS: ReadonlyArray<readonly [RegExp, string]> = [
  [/HeadlessChrome|Headless(?:Shell|Edg)?\//i, 'headless_chrome'],
  [/PhantomJS/i, 'phantomjs'],
  [/SlimerJS/i, 'slimerjs'],
  [/CasperJS/i, 'casperjs'],
  [/Nightmare/i, 'nightmare'],
  [/HtmlUnit/i, 'htmlunit'],
  [/\bjsdom\//i, 'jsdom'],
  [/Zombie\.js/i, 'zombie'],
  [/\bSplash\b/, 'splash'],
  [/Puppeteer/i, 'puppeteer'],
  [/Playwright/i, 'playwright'],
  [/Selenium|WebDriver/i, 'webdriver'],
];

export interface HeadlessSigns {
  userAgent: string | undefined;
  secChUa: string | undefined;
}

/** The first sign found (a short name for logs and `details.reason`), or undefined. */
export function headlessSign(req: HeadlessSigns): string | undefined {
  if (req.secChUa !== undefined && /HeadlessChrome/i.test(req.secChUa)) return 'headless_client_hint';
  const ua = req.userAgent;
  if (ua === undefined) return undefined;
  for (const [pattern, name] of USER_AGENT_SIGNS) if (pattern.test(ua)) return name;
  return undefined;
}
