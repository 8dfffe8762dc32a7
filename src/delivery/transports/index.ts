import { PROVIDER_NAMES } from '../../providers/index.js';
import type { TransportFactory } from '../transport.js';

/**
 * Providers by name. Each provider of the registry (src/providers/index.ts) has its transport in
 * `./<name>.ts`, exporting `<name>Transport` (a TransportFactory), and is found here by that
 * name: a new provider adds no line to this file. A missing or misnamed file stops the process
 * at start, naming it (test/providers/registry.test.ts walks the registry).
 */
async function load(name: string): Promise<TransportFactory> {
  // Vite (the tests' loader) would warn that it cannot list a variable import; Node resolves it as written.
  const module: Readonly<Record<string, unknown>> = await import(/* @vite-ignore */ `./${name}.js`);
  const factory = module[`${name}Transport`];
  if (typeof factory !== 'function') throw new Error(`src/delivery/transports/${name}.ts exports no ${name}Transport`);
  return factory as TransportFactory;
}

export const TRANSPORTS: Readonly<Record<string, TransportFactory>> = Object.fromEntries(
  await Promise.all(PROVIDER_NAMES.map(async (name) => [name, await load(name)] as const)),
);
