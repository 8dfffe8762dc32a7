import net from 'node:net';
import nodemailer from 'nodemailer';
import { afterEach, describe, expect, it } from 'vitest';
import { verpAddress } from '../../src/delivery/verp.js';
import { newSortableId } from '../../src/domain/ids.js';
import type { ProviderEvent } from '../../src/events/types.js';
import { MAX_INBOUND_BYTES, startInboundListener, type InboundListener, type ListenerDeps } from '../../src/inbound/listener.js';
import { boundedBody } from '../../src/smtp/server.js';
import { bounceReport } from '../support/bounce-reports.js';

const SECRET = 'listener-test-secret-0123456789abcdef';
const RCPT = 'ada@recipient.example';

let listener: InboundListener | undefined;
afterEach(async () => {
  await listener?.close();
  listener = undefined;
});

async function start(record: (events: ProviderEvent[]) => Promise<void>, onBytesKept?: (bytes: number) => void) {
  const id = newSortableId('msg', 1_764_000_000_000);
  const counts: string[] = [];
  const deps: ListenerDeps = {
    secret: SECRET,
    recipientsOf: async (m) => (m === id ? [RCPT] : undefined),
    record,
    now: () => 1_764_001_000_000,
    addresses: async () => ({ domains: new Set(['bounces.acme.test']), complaintAddresses: new Set(['fbl@acme.test']) }),
    counted: (o) => {
      counts.push(o);
    },
    log: { warn: () => undefined, error: () => undefined },
  };
  listener = await startInboundListener(deps, {
    port: 0,
    host: '127.0.0.1',
    ...(onBytesKept === undefined ? {} : { onBytesKept }),
  });
  const client = nodemailer.createTransport({ host: '127.0.0.1', port: listener.port, secure: false, ignoreTLS: true });
  const deliver = (to: string, raw: Buffer) => client.sendMail({ envelope: { from: '', to: [to] }, raw });
  return { id, counts, deliver, port: listener.port, verp: verpAddress(SECRET, 'bounces.acme.test', id, RCPT)! };
}

/** Connects and waits for the server's greeting: a round trip through the listener's event loop. */
function greeting(port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('data', () => {
      socket.destroy();
      resolve();
    });
    socket.once('error', reject);
  });
}

const smtpCode = (err: unknown) => (err instanceof Error && 'responseCode' in err ? err.responseCode : undefined);

describe('inbound SMTP listener', () => {
  it('a Postfix bounce to a VERP address: 250 only after record resolved, one hard bounce', async () => {
    const recorded: ProviderEvent[][] = [];
    let release: () => void = () => undefined;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    let entered: () => void = () => undefined;
    const recording = new Promise<void>((r) => {
      entered = r;
    });
    const s = await start(async (events) => {
      entered();
      await gate;
      recorded.push(events);
    });
    let answered = false;
    const sending = s.deliver(s.verp, bounceReport('postfix-user-unknown.eml', { VERP: s.verp, RCPT })).then((info) => {
      answered = true;
      return info;
    });
    // The listener is inside record, held at the gate. A reply it wrote before or while calling
    // record has reached this process once a later connection's greeting has (one loopback, in
    // order), and the client has read it by the next turn of the event loop.
    await recording;
    await greeting(s.port);
    await new Promise((r) => setImmediate(r));
    expect(answered).toBe(false);
    release();
    const info = await sending;
    expect(info.response).toMatch(/^250/);
    expect(recorded).toEqual([
      [
        expect.objectContaining({
          source: 'dsn',
          type: 'bounced',
          bounceType: 'hard',
          recipient: RCPT,
          match: { messageId: s.id },
        }),
      ],
    ]);
    expect(s.counts).toEqual(['recorded']);
  });

  it('a storage error while recording: 451, so the MTA retries', async () => {
    const s = await start(async () => {
      throw new Error('database is locked');
    });
    const err = await s.deliver(s.verp, bounceReport('exim-failed.eml', { VERP: s.verp, RCPT })).catch((e: unknown) => e);
    expect(smtpCode(err)).toBe(451);
    expect(s.counts).toEqual(['storage_error']);
  });

  it('attacker: RCPT to a foreign domain or a plain address of the bounce domain is refused (no relaying)', async () => {
    const s = await start(async () => undefined);
    for (const to of ['someone@elsewhere.example', 'postmaster@bounces.acme.test', `bounce+${'a'.repeat(55)}@other.example`]) {
      const err = await s.deliver(to, Buffer.from('Subject: x\r\n\r\nx\r\n')).catch((e: unknown) => e);
      expect(smtpCode(err), to).toBe(550);
    }
  });

  it('attacker: a forged token is answered 250 but dropped and counted, nothing recorded', async () => {
    const recorded: ProviderEvent[][] = [];
    const s = await start(async (events) => {
      recorded.push(events);
    });
    const forged = verpAddress('another-key-0123456789abcdef012345', 'bounces.acme.test', s.id, RCPT)!;
    const info = await s.deliver(forged, bounceReport('postfix-user-unknown.eml', { VERP: forged, RCPT }));
    expect(info.response).toMatch(/^250/);
    expect(recorded).toEqual([]);
    expect(s.counts).toEqual(['bad_token']);
  });

  it('an out-of-office reply is dropped and counted', async () => {
    const s = await start(async () => undefined);
    await s.deliver(s.verp, bounceReport('out-of-office.eml', { VERP: s.verp, RCPT }));
    expect(s.counts).toEqual(['auto_reply']);
  });

  it('a complaint address takes a feedback report', async () => {
    const recorded: ProviderEvent[][] = [];
    const s = await start(async (events) => {
      recorded.push(events);
    });
    await s.deliver('fbl@acme.test', bounceReport('yahoo-arf.eml', { VERP: s.verp, RCPT, COMPLAINT: 'fbl@acme.test' }));
    expect(recorded).toEqual([[expect.objectContaining({ source: 'arf', type: 'complained', recipient: RCPT })]]);
  });

  it('mail over 10 MB is refused with 552 and records nothing', async () => {
    const recorded: ProviderEvent[][] = [];
    const s = await start(async (events) => {
      recorded.push(events);
    });
    const big = Buffer.concat([
      bounceReport('postfix-user-unknown.eml', { VERP: s.verp, RCPT }),
      Buffer.alloc(10 * 1024 * 1024 + 10, 'a'),
    ]);
    const err = await s.deliver(s.verp, big).catch((e: unknown) => e);
    expect(smtpCode(err)).toBe(552);
    expect(recorded).toEqual([]);
  });

  it('attacker: 30 MB as one DATA: at most 10 MB held, the rest read and dropped, 552, and the session goes on', async () => {
    const recorded: ProviderEvent[][] = [];
    let most = 0;
    let chunks = 0;
    const s = await start(
      async (events) => {
        recorded.push(events);
      },
      (bytes) => {
        chunks += 1;
        most = Math.max(most, bytes);
      },
    );
    const smtp = await rawSmtp(s.port);
    expect(await smtp.say('EHLO attacker.example')).toMatch(/^250/);
    // No SIZE parameter: the sender does not announce what is coming, so only DATA can refuse it.
    expect(await smtp.say('MAIL FROM:<>')).toMatch(/^250/);
    expect(await smtp.say(`RCPT TO:<${s.verp}>`)).toMatch(/^250/);
    expect(await smtp.say('DATA')).toMatch(/^354/);
    const line = `${'a'.repeat(998)}\r\n`;
    const megabyte = Buffer.from(line.repeat(Math.ceil((1024 * 1024) / line.length)));
    for (let i = 0; i < 30; i += 1) await smtp.write(megabyte);
    expect(await smtp.say('.')).toMatch(/^552/);
    // The whole 30 MB went through the data stream (many chunks) and the hold never passed 10 MB.
    expect(chunks).toBeGreaterThan(30);
    expect(most).toBeGreaterThan(MAX_INBOUND_BYTES / 2);
    expect(most).toBeLessThanOrEqual(MAX_INBOUND_BYTES);
    expect(await smtp.say('QUIT')).toMatch(/^221/);
    smtp.end();
    expect(recorded).toEqual([]);
    expect(s.counts).toEqual(['refused']);
  });
});

describe('boundedBody', () => {
  it('keeps chunks up to the limit; one byte past it lets everything go and keeps nothing more', () => {
    const b = boundedBody(10);
    b.add(Buffer.from('12345'));
    b.add(Buffer.from('67890'));
    expect([b.kept, b.exceeded, b.body().toString()]).toEqual([10, false, '1234567890']);
    b.add(Buffer.from('x'));
    expect([b.kept, b.exceeded, b.body().length]).toEqual([0, true, 0]);
    b.add(Buffer.from('y'));
    expect([b.kept, b.exceeded]).toEqual([0, true]);
  });
});

/** A bare SMTP client: one command, one (possibly multi-line) reply; raw writes with backpressure. */
async function rawSmtp(port: number) {
  const socket = net.connect(port, '127.0.0.1');
  let buffered = '';
  let waiting: ((reply: string) => void) | undefined;
  const complete = () => {
    // A reply ends with a line "NNN text" (a space after the code, not a hyphen).
    const m = /(?:^|\r\n)(\d{3}) [^\r\n]*\r\n/.exec(buffered);
    if (m === null || waiting === undefined) return;
    const end = m.index + m[0].length;
    const reply = buffered.slice(0, end).replace(/^\r\n/, '');
    buffered = buffered.slice(end);
    const resolve = waiting;
    waiting = undefined;
    resolve(reply.split('\r\n').filter(Boolean).at(-1) ?? '');
  };
  socket.setEncoding('utf8');
  socket.on('data', (text: string) => {
    buffered += text;
    complete();
  });
  const next = () =>
    new Promise<string>((resolve) => {
      waiting = resolve;
      complete();
    });
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  expect(await next()).toMatch(/^220/);
  return {
    say: (command: string) => {
      const reply = next();
      socket.write(`${command}\r\n`);
      return reply;
    },
    write: (bytes: Buffer) =>
      new Promise<void>((resolve, reject) => {
        socket.write(bytes, (err) => (err ? reject(err) : resolve()));
      }),
    end: () => socket.end(),
  };
}
