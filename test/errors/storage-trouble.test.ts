import http from 'node:http';
import net from 'node:net';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { storageTrouble } from '../../src/errors/storage-trouble.js';
import { freePort } from '../support/smtp-sink.js';

/** storageTrouble on real errors: what the database reports, and what it must not be confused with. */
describe('storageTrouble', () => {
  it('a refused connection to the database is database_unavailable', async () => {
    const client = new pg.Client({ connectionString: `postgres://postgres@127.0.0.1:${await freePort()}/test`, connectionTimeoutMillis: 2000 });
    const err = await client.connect().then(() => undefined, (e: unknown) => e);
    expect(storageTrouble(err)).toBe('database_unavailable');
  });

  it('a client that hangs up in the middle of its upload (ECONNRESET "aborted") is not storage trouble', async () => {
    const seen = new Promise<unknown>((resolve) => {
      const server = http.createServer((req) => {
        req.on('error', (e) => { resolve(e); server.close(); });
        req.resume();
      });
      server.listen(0, '127.0.0.1', () => {
        const { port } = server.address() as net.AddressInfo;
        const socket = net.connect(port, '127.0.0.1', () => {
          socket.write('POST /v1/send HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{"a":');
          setTimeout(() => socket.destroy(), 50);
        });
      });
    });
    const err = await seen;
    expect(err).toMatchObject({ code: 'ECONNRESET' });
    expect(storageTrouble(err)).toBeUndefined();
  });
});
