import { describe, expect, it } from 'vitest';
import { isLoopbackHost, LOOPBACK_HOST_PATTERN } from '../../src/net/loopback.js';

/**
 * The one "is this loopback" rule (issue 26 §3), tested once, from the attacker's side: each URL
 * goes through the WHATWG parser as every caller's does, and the host it yields is judged.
 */

/** URLs whose request stays on this machine, however they are spelled. */
const LOOPBACK = [
  'http://localhost/',
  'http://LOCALHOST:8080/x',
  'http://%6cocalhost/',
  'http://api.localhost/',
  'http://a.b.localhost:9/',
  'http://127.0.0.1/',
  'http://127.255.255.254/',
  'http://127.1/',
  'http://2130706433/',
  'http://0x7f.1/',
  'http://0177.0.0.1/',
  'http://127.0.0.1%2e/',
  'http://[::1]/',
  'http://[0:0:0:0:0:0:0:1]:9/',
  'http://[::ffff:127.0.0.1]/',
  'http://[::ffff:7f00:1]/',
  'http://127.0.0.1\\@evil.example/', // a backslash ends the host of an http URL: the request goes to 127.0.0.1
];

/** URLs that look local and are not, or are local only in a way nobody should be let through by. */
const NOT_LOOPBACK = [
  'http://127.0.0.1.evil.example/',
  'http://localhost.evil.example/',
  'http://localhost%2eevil.example/',
  'http://evillocalhost/',
  'http://localhost@evil.example/',
  'http://127.0.0.1@evil.example/',
  'http://localhost:80@evil.example/',
  'http://localhost./', // a trailing dot: a resolver may ask DNS
  'http://0.0.0.0/',
  'http://[::]/',
  'http://0/', // unspecified: Linux connects it here, nobody means it
  'http://[::127.0.0.1]/',
  'http://[64:ff9b::127.0.0.1]/',
  'http://[2002:7f00:1::]/',
  'http://[::ffff:0:127.0.0.1]/', // IPv4 carried elsewhere
  'http://128.0.0.1/',
  'http://126.255.255.255/',
  'http://10.0.0.1/',
  'http://169.254.169.254/',
  'http://[fe80::1]/',
  'http://[::2]/',
  'http://example.com/',
];

const hostOf = (url: string): string => new URL(url).hostname;

describe('isLoopbackHost', () => {
  it.each(LOOPBACK)('%s is loopback', (url) => {
    expect(isLoopbackHost(hostOf(url))).toBe(true);
  });

  it.each(NOT_LOOPBACK)('%s is not', (url) => {
    expect(isLoopbackHost(hostOf(url))).toBe(false);
  });

  it('takes a resolved address as dns.lookup prints it, brackets or not', () => {
    for (const ip of ['127.0.0.1', '127.255.255.254', '::1', '[::1]', '::ffff:127.0.0.1', '::ffff:7f00:1', '::1%lo'])
      expect(isLoopbackHost(ip), ip).toBe(true);
    for (const ip of [
      '::127.0.0.1',
      '::7f00:1',
      '0.0.0.0',
      '::',
      '10.0.0.1',
      '169.254.169.254',
      '::ffff:169.254.169.254',
      '64:ff9b::7f00:1',
      '2002:7f00:1::',
      'fe80::1',
    ]) {
      expect(isLoopbackHost(ip), ip).toBe(false);
    }
  });

  it('fails closed on spellings no URL parser hands over', () => {
    for (const host of [
      '0177.0.0.1',
      '0x7f000001',
      '2130706433',
      '127.000.0.1',
      '127.0.0.1.',
      '',
      '.localhost',
      'a..localhost',
      ' localhost',
    ]) {
      expect(isLoopbackHost(host), JSON.stringify(host)).toBe(false);
    }
  });
});

describe('LOOPBACK_HOST_PATTERN (the rule where only a JSON Schema pattern can say it)', () => {
  const pattern = new RegExp(`^http://(?:${LOOPBACK_HOST_PATTERN})(?::[0-9]{1,5})?(?:/[^?#\\s]*)?$`);

  it('matches only URLs whose host isLoopbackHost accepts', () => {
    for (const url of [...LOOPBACK, ...NOT_LOOPBACK]) {
      if (pattern.test(url)) expect(isLoopbackHost(hostOf(url)), url).toBe(true);
    }
  });

  it("matches the plain spellings, and none of the attacker's", () => {
    for (const url of [
      'http://localhost/',
      'http://localhost:8080/v1',
      'http://api.localhost/',
      'http://127.0.0.1:9/',
      'http://[::1]:9000/',
    ]) {
      expect(pattern.test(url), url).toBe(true);
    }
    for (const url of NOT_LOOPBACK) expect(pattern.test(url), url).toBe(false);
  });
});
