import { describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { generateSecret, isValidSecret, signatureHeader, webhookHeaders } from '../../src/webhooks/signing.js';

const body = JSON.stringify({ type: 'message.delivered', timestamp: '2026-01-01T00:00:00.000Z', data: { sequence: 3 } });
const now = (): number => Math.floor(Date.now() / 1000);

function verify(secret: string, headers: Record<string, string>, payload = body): unknown {
  return new Webhook(secret).verify(payload, headers);
}

describe('webhook secrets', () => {
  it('generates whsec_ + padded base64 of 32 random bytes, each different', () => {
    const a = generateSecret();
    const b = generateSecret();
    expect(a).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(a.slice(6), 'base64')).toHaveLength(32);
    expect(a).not.toBe(b);
    expect(isValidSecret(a)).toBe(true);
  });

  it('accepts a user-given secret of at least 24 bytes and refuses anything else', () => {
    expect(isValidSecret(`whsec_${Buffer.alloc(24, 7).toString('base64')}`)).toBe(true);
    expect(isValidSecret(`whsec_${Buffer.alloc(25, 7).toString('base64')}`)).toBe(true); // padded with =
    expect(isValidSecret(`whsec_${Buffer.alloc(23, 7).toString('base64')}`)).toBe(false); // too short
    expect(isValidSecret(Buffer.alloc(32, 7).toString('base64'))).toBe(false); // no prefix
    expect(isValidSecret(`WHSEC_${Buffer.alloc(32, 7).toString('base64')}`)).toBe(false);
    expect(isValidSecret(`whsec_${Buffer.alloc(32, 7).toString('base64url')}`.replace(/=+$/, ''))).toBe(false);
    expect(isValidSecret(`whsec_${Buffer.alloc(25, 7).toString('base64').replace(/=+$/, '')}`)).toBe(false); // unpadded
    expect(isValidSecret(`whsec_ ${Buffer.alloc(32, 7).toString('base64')}`)).toBe(false);
    expect(isValidSecret(`whsec_${Buffer.alloc(32, 7).toString('base64')}\n`)).toBe(false);
    expect(isValidSecret(`whsec_${'!'.repeat(44)}`)).toBe(false);
    expect(isValidSecret('whsec_')).toBe(false);
    expect(isValidSecret('')).toBe(false);
    // Non-canonical trailing bits: "AB==" and "AA==" decode alike; only the canonical text is a secret.
    const canonical = Buffer.alloc(25, 7).toString('base64');
    expect(isValidSecret(`whsec_${canonical.slice(0, -3)}x==`)).toBe(false);
  });
});

describe('webhook signatures', () => {
  it('is verified by the standardwebhooks package', () => {
    const secret = generateSecret();
    const headers = webhookHeaders([secret], 'msg_1', now(), body);
    expect(headers['content-type']).toBe('application/json');
    expect(headers['user-agent']).toBe('mailroom-webhooks/1');
    expect(headers['webhook-id']).toBe('msg_1');
    expect(headers['webhook-timestamp']).toMatch(/^\d+$/);
    expect(headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    expect(verify(secret, headers)).toEqual(JSON.parse(body));
  });

  it('signs with both secrets during a rotation, current first; each one alone verifies', () => {
    const previous = generateSecret();
    const current = generateSecret();
    const headers = webhookHeaders([current, previous], 'msg_2', now(), body);
    const [first, second, ...rest] = (headers['webhook-signature'] ?? '').split(' ');
    expect(rest).toEqual([]);
    expect(first).toBe(signatureHeader([current], 'msg_2', Number(headers['webhook-timestamp']), body));
    expect(second).toBe(signatureHeader([previous], 'msg_2', Number(headers['webhook-timestamp']), body));
    expect(verify(current, headers)).toEqual(JSON.parse(body));
    expect(verify(previous, headers)).toEqual(JSON.parse(body));
    expect(() => verify(generateSecret(), headers)).toThrow();
  });

  it("matches the package's own signature for the same id, time and body", () => {
    const secret = generateSecret();
    const ts = now();
    expect(signatureHeader([secret], 'msg_3', ts, body)).toBe(new Webhook(secret).sign('msg_3', new Date(ts * 1000), body));
  });

  it('fails verification when the body, timestamp, id or signature is tampered with', () => {
    const secret = generateSecret();
    const headers = webhookHeaders([secret], 'msg_4', now(), body);
    expect(() => verify(secret, headers, body.replace('3', '4'))).toThrow();
    expect(() => verify(secret, { ...headers, 'webhook-timestamp': String(Number(headers['webhook-timestamp']) - 1) })).toThrow();
    expect(() => verify(secret, { ...headers, 'webhook-id': 'msg_5' })).toThrow();
    const forged = signatureHeader([generateSecret()], 'msg_4', Number(headers['webhook-timestamp']), body);
    expect(() => verify(secret, { ...headers, 'webhook-signature': forged })).toThrow();
    // A timestamp far from now is refused by receivers (replay protection), even when correctly signed.
    const old = now() - 3600;
    expect(() => verify(secret, webhookHeaders([secret], 'msg_4', old, body))).toThrow();
  });

  it('signs with a user-given 24-byte secret the way receivers decode it', () => {
    const secret = `whsec_${Buffer.from('a user picked these bytes').subarray(0, 25).toString('base64')}`;
    expect(isValidSecret(secret)).toBe(true);
    expect(verify(secret, webhookHeaders([secret], 'msg_8', now(), body))).toEqual(JSON.parse(body));
  });

  it('signs non-ASCII bodies as UTF-8 bytes', () => {
    const secret = generateSecret();
    const text = JSON.stringify({ reason: 'boîte pleine — 受信拒否 📭' });
    expect(verify(secret, webhookHeaders([secret], 'msg_6', now(), text), text)).toEqual(JSON.parse(text));
  });

  it('refuses to sign with no secret or an invalid one', () => {
    expect(() => signatureHeader([], 'msg_7', now(), body)).toThrow();
    expect(() => signatureHeader(['whsec_short'], 'msg_7', now(), body)).toThrow();
  });
});
