import { describe, expect, it } from 'vitest';
import { endpointOf } from '../../src/delivery/transports/provider-mail.js';

// A stored endpoint is checked again when the transport is built: a row written before the
// input rule existed must not send its secret over plain http to a remote host either.
describe('a provider endpoint read from stored settings', () => {
  it.each([
    'https://api.postmarkapp.com',
    'https://proxy.internal.example:8443/postmark',
    'http://127.0.0.1:4010',
    'http://localhost:8080',
    'http://[::1]:9000',
    'http://api.localhost:8080/v1',
  ])('%s is used', (url) => {
    expect(endpointOf({ endpoint: url }, 'postmark', 'https://api.postmarkapp.com')).toBe(url.replace(/\/+$/, ''));
  });

  it.each([
    'http://api.postmarkapp.com',
    'http://10.0.0.5',
    'http://127.0.0.1@evil.example',
    'http://localhost.evil.example',
    'http://evillocalhost',
    'http://localhost:80@evil.example',
    'javascript:alert(1)',
    'file:///etc/passwd',
  ])('%s is refused (the service is held, its secret never sent)', (url) => {
    expect(() => endpointOf({ endpoint: url }, 'postmark', 'https://api.postmarkapp.com')).toThrow(/endpoint/);
  });
});
