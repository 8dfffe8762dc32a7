import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import type { Closer } from '../cleanup.js';

/**
 * Outbound webhooks' tests: a loopback receiver that records every request and verifies it with
 * the `standardwebhooks` package (the issue asks that every request a test receives be checked
 * that way). Endpoint rows and dispatchers are in ./dispatch.ts.
 */

/** What the receiver answers: a status, `hang` (never answers), or `down` (refuses connections). */
export type Answer = 200 | 204 | 400 | 410 | 500 | 503 | 'hang';

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: string;
  /** `webhook-id` */
  webhookId: string;
  /** The secrets (of `secrets`) whose `Webhook.verify` accepted the request; empty: forged. */
  verifiedWith: string[];
  /** The parsed body as `Webhook.verify` returned it (null when no secret verified it). */
  payload: unknown;
  /** What the receiver answered (`hang`: nothing). */
  answered: Answer;
}

export interface Receiver {
  readonly url: string;
  readonly port: number;
  readonly received: ReceivedRequest[];
  /** Secrets the requests are verified with; a rotation test sets both. */
  secrets: string[];
  /** The next answers, in order; `fallback` once they are used up. */
  script(answers: readonly Answer[]): void;
  fallback: Answer;
  /** Each answer waits this long (a slower receiver). */
  delayMs: number;
  /** Stops listening (connections are refused) until `up()`, on the same port. */
  down(): Promise<void>;
  up(): Promise<void>;
  /** Requests carrying this `webhook-id`. */
  withId(id: string): ReceivedRequest[];
  close(): Promise<void>;
}

function verify(
  secrets: readonly string[],
  body: string,
  headers: Record<string, string>,
): { verifiedWith: string[]; payload: unknown } {
  const verifiedWith: string[] = [];
  let payload: unknown = null;
  for (const secret of secrets) {
    try {
      payload = new Webhook(secret).verify(body, headers);
      verifiedWith.push(secret);
    } catch {
      // Not signed with this one.
    }
  }
  return { verifiedWith, payload };
}

/** A receiver on 127.0.0.1 (a free port), closed by `closer`. */
export async function startReceiver(secrets: string[], closer?: Closer): Promise<Receiver> {
  const received: ReceivedRequest[] = [];
  const queue: Answer[] = [];
  const hanging = new Set<http.ServerResponse>();
  const handler: http.RequestListener = (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers[k] = v;
      const answered = queue.shift() ?? receiver.fallback;
      received.push({
        method: req.method ?? '',
        path: req.url ?? '',
        headers,
        body,
        webhookId: headers['webhook-id'] ?? '',
        ...verify(receiver.secrets, body, headers),
        answered,
      });
      if (answered === 'hang') {
        hanging.add(res);
        return;
      }
      const answer = () => res.writeHead(answered, { 'content-type': 'text/plain' }).end(`answer ${answered}`);
      if (receiver.delayMs > 0) setTimeout(answer, receiver.delayMs);
      else answer();
    });
  };
  let server = http.createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  let listening = true;
  const stop = async () => {
    if (!listening) return;
    listening = false;
    for (const res of hanging) res.destroy();
    hanging.clear();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  const receiver: Receiver = {
    url: `http://127.0.0.1:${port}/hook`,
    port,
    received,
    secrets,
    fallback: 200,
    delayMs: 0,
    script: (answers) => {
      queue.push(...answers);
    },
    down: stop,
    up: async () => {
      if (listening) return;
      server = http.createServer(handler);
      await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
      listening = true;
    },
    withId: (id) => received.filter((r) => r.webhookId === id),
    close: stop,
  };
  closer?.defer(() => receiver.close());
  return receiver;
}

/** A valid secret for tests (`whsec_` + base64 of 32 bytes). */
export function testSecret(fill: number): string {
  return `whsec_${Buffer.alloc(32, fill).toString('base64')}`;
}
