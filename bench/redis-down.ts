import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import { SEND_BODY } from './bench-orgs.js';
import { openBenchContext, pause, sendSettings } from './bench-context.js';
import { freePort, startMailroom } from './child-servers.js';
import { httpLoad, type LoadFigures } from './http-load.js';

/**
 * Issue 25 §4: private-key sends with Redis up, then with it down, against a real `mailroom
 * serve` (worker on, SQLite) whose MAILROOM_REDIS_URL is a private redis-server started here on
 * a free port (never a shared one) and killed between the two runs. A closed loop of
 * BENCH_CONNECTIONS (50) over the 300 bench organizations' private keys for BENCH_SECONDS (10)
 * each. `npx tsc -p tsconfig.build.json && node dist/bench/redis-down.js`
 */

async function startRedis(port: number): Promise<ChildProcess> {
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--daemonize', 'no'],
    { stdio: 'ignore' },
  );
  process.once('exit', () => child.kill('SIGKILL'));
  for (let i = 0; i < 100; i++) {
    const up = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1', () => {
        socket.end();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (up) return child;
    await pause(50);
  }
  throw new Error(`redis-server on ${port} did not start`);
}

const line = (name: string, f: LoadFigures) =>
  `${name.padEnd(11)} ${f.rps.toFixed(0).padStart(5)} sends/s   p50 ${String(f.p50).padStart(5)} ` +
  `ms   p99 ${String(f.p99).padStart(5)} ms   2xx ${f.ok}   non-2xx ${f.non2xx}   errors ${f.errors}`;

async function main(): Promise<void> {
  const settings = sendSettings();
  const ctx = await openBenchContext(settings);
  const port = await freePort();
  const redis = await startRedis(port);
  process.env.MAILROOM_REDIS_URL = `redis://127.0.0.1:${port}`;
  const server = await startMailroom({
    dataDir: ctx.freshDataDir('redis-down'),
    worker: 'on',
    logLevel: settings.logLevel,
    nodeArgs: settings.nodeArgs,
  });
  const load = () =>
    httpLoad({
      url: `${server.url}/v1/send`,
      body: SEND_BODY,
      headers: { 'content-type': 'application/json' },
      seconds: settings.seconds,
      connections: settings.connections,
      uniqueIdempotencyKey: true,
      keysFile: ctx.keysFile,
    });
  try {
    await pause(2000);
    const up = await load();
    const exited = new Promise((resolve) => redis.once('exit', resolve));
    redis.kill('SIGKILL');
    await exited;
    await pause(1000);
    const down = await load();
    console.log(`${settings.connections} connections, ${settings.seconds} s each, private keys`);
    console.log(line('Redis up', up));
    console.log(line('Redis down', down));
  } finally {
    await server.stop();
    redis.kill('SIGKILL');
    await ctx.close();
  }
}

await main();
