import { SMTPServer } from 'smtp-server';

/**
 * A loopback SMTP sink in its own process (forked by the delivery benchmark), so the relay's
 * CPU is not charged to the sender, as with a real relay. It tells its parent its port, and
 * answers `count` messages with the number of messages received.
 */
let received = 0;
const server = new SMTPServer({
  authOptional: true,
  disabledCommands: ['STARTTLS'],
  logger: false,
  onData(stream, _session, callback) {
    stream.on('data', () => undefined);
    stream.on('end', () => {
      received += 1;
      callback();
    });
  },
});
server.listen(0, '127.0.0.1', () => {
  const { port } = server.server.address() as { port: number };
  process.send?.({ port });
});
process.on('message', (msg: unknown) => {
  if (msg === 'count') process.send?.({ count: received });
  if (msg === 'stop') server.close(() => process.exit(0));
});
