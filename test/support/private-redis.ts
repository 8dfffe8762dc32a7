import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { Redis } from 'ioredis';
import { freePort } from './smtp-sink.js';

/**
 * A private redis-server for drills that stop Redis: its own port, no persistence, a child of
 * the test process. Never the shared server on 6379.
 */
export interface PrivateRedis {
  port: number;
  url: string;
  /** Kills it (SIGKILL: no goodbye to its clients) and waits for it to exit. */
  stop(): Promise<void>;
  /** Starts it again on the same port (empty: nothing is saved) and waits until it answers. */
  start(): Promise<void>;
}

export function redisServerPresent(): boolean {
  const found = spawnSync('redis-server', ['--version'], { stdio: 'ignore' }).status === 0;
  if (!found && process.env.CI === 'true') throw new Error('redis-server is required under CI for the Redis outage drills');
  return found;
}

async function answers(url: string): Promise<boolean> {
  const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, connectTimeout: 500, retryStrategy: () => null });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return (await client.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    client.disconnect();
  }
}

export async function startPrivateRedis(): Promise<PrivateRedis> {
  const port = await freePort();
  const url = `redis://127.0.0.1:${port}`;
  let child: ChildProcess | undefined;
  const start = async (): Promise<void> => {
    const proc = spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--daemonize', 'no'],
      { stdio: 'ignore' },
    );
    child = proc;
    // Bounded: 10 s for a server that starts in milliseconds on an idle machine.
    for (let i = 0; i < 200; i++) {
      if (proc.exitCode !== null) throw new Error(`redis-server on port ${port} exited with ${proc.exitCode}`);
      if (await answers(url)) return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`redis-server on port ${port} did not answer within 10 s`);
  };
  const stop = async (): Promise<void> => {
    const proc = child;
    child = undefined;
    if (proc === undefined || proc.exitCode !== null) return;
    const exited = once(proc, 'exit');
    proc.kill('SIGKILL');
    await exited;
  };
  await start();
  return { port, url, start, stop };
}
