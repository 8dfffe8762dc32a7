import { parentPort } from 'node:worker_threads';
import type { Service } from '../../domain/types.js';
import {
  brokenTransport,
  DeliveryError,
  type OutgoingEmail,
  type Transport,
  type TransportContext,
  type TransportFactory,
} from '../transport.js';
import { TRANSPORTS } from './index.js';
import { toThreadError, type FromThread, type ToThread } from './thread.js';

/**
 * The transport thread's side (see TransportThread): the real transports, one per handle, each
 * built from the service it was opened with. Every reply names the request it answers.
 */
const port = parentPort;
if (port === null) throw new Error('thread-host runs only as a worker thread (TransportThread starts it)');

const transports = new Map<number, Transport>();
const reply = (message: FromThread) => port.postMessage(message);

/** Kind, recipients, refusals and options (Retry-After, throttling): everything the worker reads. */
function failure(id: number, error: unknown): FromThread {
  return { id, ok: false, error: toThreadError(error) };
}

/** Structured clone turns a Buffer into a plain Uint8Array; the transports expect Buffers. */
function withBuffers(mail: OutgoingEmail): OutgoingEmail {
  const mime = mail.mime === undefined ? {} : { mime: Buffer.from(mail.mime.buffer, mail.mime.byteOffset, mail.mime.byteLength) };
  if (mail.attachments.length === 0) return { ...mail, ...mime };
  return {
    ...mail,
    ...mime,
    attachments: mail.attachments.map((a) => ({
      ...a,
      content: Buffer.from(a.content.buffer, a.content.byteOffset, a.content.byteLength),
    })),
  };
}

/**
 * A factory that throws (settings of the wrong shape) would otherwise end this thread, and with
 * it every service's sends, again after each restart. Its service alone is held instead.
 */
function openSafely(factory: TransportFactory, service: Service, context: TransportContext): Transport {
  try {
    return factory(service, context);
  } catch (error) {
    return brokenTransport(service, error);
  }
}

async function handle(message: ToThread): Promise<void> {
  switch (message.op) {
    case 'open': {
      const factory = TRANSPORTS[message.service.provider];
      // The main side opens only providers it knows of, so this is a version skew at most.
      if (factory !== undefined) transports.set(message.handle, openSafely(factory, message.service, message.context));
      return;
    }
    case 'send': {
      const transport = transports.get(message.handle);
      try {
        if (transport === undefined) throw new DeliveryError('temporary', `no transport is open under handle ${message.handle}`);
        reply({ id: message.id, ok: true, receipt: await transport.send(withBuffers(message.mail)) });
      } catch (error) {
        reply(failure(message.id, error));
      }
      return;
    }
    case 'close': {
      const transport = transports.get(message.handle);
      transports.delete(message.handle);
      await transport?.close().catch(() => undefined);
      reply({ id: message.id, ok: true });
      return;
    }
    case 'shutdown': {
      const all = [...transports.values()];
      transports.clear();
      await Promise.all(all.map((t) => t.close().catch(() => undefined)));
      reply({ id: message.id, ok: true });
      return;
    }
  }
}

port.on('message', (message: ToThread) => {
  // Nothing may end the thread: it serves every service. A request that fails anyway is answered.
  handle(message).catch((error: unknown) => {
    if ('id' in message) reply(failure(message.id, error));
  });
});
