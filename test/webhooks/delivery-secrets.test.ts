import { describe, expect, it } from 'vitest';
import { signingSecrets } from '../../src/webhooks/signing.js';
import { testSecret } from '../support/webhooks/receiver.js';

describe('signingSecrets: which secrets sign a request', () => {
  const current = testSecret(1);
  const previous = testSecret(2);

  it('the current one alone without a rotation', () => {
    expect(signingSecrets({ secret: current, previous_secret: null, previous_secret_expires_at: null }, 1000)).toEqual([current]);
  });

  it('the current one first, then the previous one until its expiry (exclusive)', () => {
    const e = { secret: current, previous_secret: previous, previous_secret_expires_at: 1000 };
    expect(signingSecrets(e, 999)).toEqual([current, previous]);
    expect(signingSecrets(e, 1000)).toEqual([current]);
  });

  it('a previous secret with no expiry does not sign', () => {
    expect(signingSecrets({ secret: current, previous_secret: previous, previous_secret_expires_at: null }, 0)).toEqual([
      current,
    ]);
  });
});
