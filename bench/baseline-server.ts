import Database from 'better-sqlite3';
import Fastify from 'fastify';

/**
 * The durable baseline of issue 16, in its own process (forked by the benchmark, like mailroom
 * itself): a bare Fastify route that stores each request's body as one row in SQLite, written
 * the plain way. The requests of one event-loop turn share one transaction, flushed by
 * `setImmediate`; WAL, `synchronous=FULL`, so the COMMIT waits for the disk before any of
 * them gets its 202. Nothing clever: this is the least a durable API does before answering.
 *
 * argv[2]: the database file. Tells its parent `{ port }`, answers 'stop'.
 */
const file = process.argv[2];
if (file === undefined) throw new Error('usage: baseline-server.js FILE');
const db = new Database(file);
db.pragma('journal_mode = WAL');
db.pragma('synchronous = FULL');
db.exec('create table if not exists bodies (id integer primary key, body text not null)');
const insert = db.prepare('insert into bodies (body) values (?)');
const batch = db.transaction((bodies: readonly string[]) => {
  for (const body of bodies) insert.run(body);
});

let pending: Array<{ body: string; done: () => void }> = [];
const flush = () => {
  const jobs = pending;
  pending = [];
  batch(jobs.map((j) => j.body));
  for (const j of jobs) j.done();
};

let counter = 0;
const app = Fastify();
app.post('/v1/send', async (req, reply) => {
  const body = JSON.stringify(req.body);
  await new Promise<void>((done) => {
    if (pending.length === 0) setImmediate(flush);
    pending.push({ body, done });
  });
  counter += 1;
  return reply.code(202).send({ message_id: `msg_${counter}`, status: 'queued', status_token: 'st_x' });
});

app.listen({ port: 0, host: '127.0.0.1' }).then(() => {
  const address = app.server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  process.send?.({ port });
});
process.on('message', (msg: unknown) => {
  if (msg === 'stop')
    void app.close().then(() => {
      db.close();
      process.exit(0);
    });
});
