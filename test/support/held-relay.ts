import { SMTPServer } from 'smtp-server';
import type { Closer } from './cleanup.js';

/**
 * A real SMTP relay on loopback (smtp-server) that answers DATA with `250 <reply>` as a
 * provider's relay does, and, when `held`, only once the test releases it: between the two the
 * worker has claimed and sent the message and waits for the reply, so the test can post a
 * provider event about it while it is `sending`, every time.
 */
export interface HeldRelay {
  port: number;
  /** Resolves when the n-th DATA (1 = first) has been received and its reply is held. */
  received(n?: number): Promise<void>;
  /** Lets every held reply go. */
  release(): void;
}

export interface HeldRelayOptions {
  /** Hold each DATA reply until release() (default true). */
  held?: boolean;
  /** Answers RCPT TO of an address with this error instead (`n` counts that address's RCPTs, 1 = first). */
  rcpt?: (address: string, n: number) => Error | undefined;
}

/** `reply` may differ per DATA (`n` = 1 the first). */
export async function heldRelay(
  closer: Closer,
  reply: string | ((n: number) => string),
  options: HeldRelayOptions = {},
): Promise<HeldRelay> {
  const held = options.held ?? true;
  const rcpts = new Map<string, number>();
  let releaseAll: () => void = () => undefined;
  const gate = new Promise<void>((resolve) => {
    releaseAll = resolve;
  });
  const arrivals: Array<() => void> = [];
  const arrived: Array<Promise<void>> = [];
  const slot = (n: number): Promise<void> => {
    while (arrived.length < n)
      arrived.push(
        new Promise<void>((resolve) => {
          arrivals.push(resolve);
        }),
      );
    return arrived[n - 1]!;
  };
  let data = 0;
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onRcptTo(address, _session, callback) {
      const n = (rcpts.get(address.address) ?? 0) + 1;
      rcpts.set(address.address, n);
      callback(options.rcpt?.(address.address, n) ?? undefined);
    },
    onData(stream, _session, callback) {
      data += 1;
      const n = data;
      stream.on('data', () => undefined);
      stream.on('end', () => {
        void slot(n);
        arrivals[n - 1]?.();
        // smtp-server sends `250 <message>` for a string passed here.
        void (held ? gate : Promise.resolve()).then(() => callback(null, typeof reply === 'string' ? reply : reply(n)));
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closer.defer(() => {
    releaseAll();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  const address = server.server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return { port: address.port, received: (n = 1) => slot(n), release: () => releaseAll() };
}
