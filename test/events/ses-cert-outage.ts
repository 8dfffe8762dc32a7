import http from 'node:http';

/**
 * A certificate host having a bad day, on loopback: `/500.pem` answers 500, `/garbled.pem`
 * answers 200 with text that is no PEM, `/flaky.pem` answers 503 until `recover()` and then
 * the certificate it was given. `closedHost` is a loopback port nothing listens on (connection
 * refused). Each is an allowed host in the tests, so what is checked is the outage, not the rule.
 */
export interface CertOutage {
  host: string;
  base: string;
  closedHost: string;
  requests: string[];
  recover(): void;
  close(): Promise<void>;
}

async function listen(server: http.Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

export async function certOutage(goodPem: string): Promise<CertOutage> {
  const requests: string[] = [];
  let recovered = false;
  const server = http.createServer((req, res) => {
    const url = req.url ?? '/';
    requests.push(url);
    if (url === '/500.pem') res.writeHead(500).end('internal error');
    else if (url === '/garbled.pem') res.end('-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydGlmaWNhdGU=\n-----END CERTIFICATE-----\n');
    else if (url === '/flaky.pem' && recovered) res.end(goodPem);
    else if (url === '/flaky.pem') res.writeHead(503).end();
    else res.writeHead(404).end();
  });
  const port = await listen(server);
  // A port that was free a moment ago: connecting to it is refused.
  const spare = http.createServer();
  const closedPort = await listen(spare);
  await new Promise<void>((resolve) => spare.close(() => resolve()));
  return {
    host: `127.0.0.1:${port}`,
    base: `http://127.0.0.1:${port}`,
    closedHost: `127.0.0.1:${closedPort}`,
    requests,
    recover: () => { recovered = true; },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
