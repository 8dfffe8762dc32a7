import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { fromDatabase, storageTrouble } from '../../src/errors/storage-trouble.js';
import { namingPool } from '../../src/storage/prepared-pool.js';
import { freePort } from '../support/smtp-sink.js';

/** storageTrouble on real errors: what the database reports, and what it must not be confused with. */
describe('storageTrouble', () => {
  it('a refused connection to the database, through the pool, is database_unavailable', async () => {
    const pool = namingPool(
      new pg.Pool({ connectionString: `postgres://postgres@127.0.0.1:${await freePort()}/test`, connectionTimeoutMillis: 2000 }),
    );
    const err = await pool.connect().then(
      () => undefined,
      (e: unknown) => e,
    );
    await pool.end();
    expect(err).toMatchObject({ code: 'ECONNREFUSED' });
    expect(storageTrouble(err)).toBe('database_unavailable');
  });

  it("a refused connection elsewhere (the S3 blob store), itself or as the cause of the client's error, is not", async () => {
    const port = await freePort();
    const refused = await new Promise<unknown>((resolve) => net.connect(port, '127.0.0.1').on('error', resolve));
    expect(refused).toMatchObject({ code: 'ECONNREFUSED', syscall: 'connect' });
    expect(storageTrouble(refused)).toBeUndefined();
    // What fetch (and so an S3 client over it) throws: TypeError('fetch failed') with that cause.
    const fetched = await fetch(`http://127.0.0.1:${port}/bucket/key`, { method: 'PUT', body: 'x' }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect((fetched as { cause?: unknown }).cause).toMatchObject({ code: 'ECONNREFUSED' });
    expect(storageTrouble(fetched)).toBeUndefined();
    // The same error, had it come from the database's connection, is.
    expect(storageTrouble(fromDatabase(refused))).toBe('database_unavailable');
  });

  it("ENOSPC is storage_full only from the database's own files (the WAL keeper), not from the blob directory", async () => {
    const full = await fs.promises.writeFile('/dev/full', 'x').then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(full).toMatchObject({ code: 'ENOSPC' });
    expect(storageTrouble(full)).toBeUndefined();
    expect(storageTrouble(fromDatabase(full))).toBe('storage_full');
  });

  it('a client that hangs up in the middle of its upload (ECONNRESET "aborted") is not storage trouble', async () => {
    const seen = new Promise<unknown>((resolve) => {
      let client: net.Socket | undefined;
      const server = http.createServer((req) => {
        req.on('error', (e) => {
          resolve(e);
          server.close();
        });
        // The client hangs up once the server is reading its body: mid-upload.
        req.once('data', () => client?.destroy());
      });
      server.listen(0, '127.0.0.1', () => {
        const { port } = server.address() as net.AddressInfo;
        const socket = net.connect(port, '127.0.0.1', () => {
          socket.write('POST /v1/send HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{"a":');
        });
        client = socket;
      });
    });
    const err = await seen;
    expect(err).toMatchObject({ code: 'ECONNRESET' });
    expect(storageTrouble(err)).toBeUndefined();
  });
});
