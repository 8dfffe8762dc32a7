import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach } from 'vitest';

/** Cleanup: everything a test opens is closed in afterEach, newest first. */
export class Closer {
  private readonly fns: Array<() => Promise<unknown> | unknown> = [];
  defer(fn: () => Promise<unknown> | unknown): void {
    this.fns.push(fn);
  }
  async closeAll(): Promise<void> {
    while (this.fns.length > 0) {
      const fn = this.fns.pop();
      try {
        await fn?.();
      } catch (err) {
        console.warn('cleanup failed:', err);
      }
    }
  }
}

/**
 * One Closer for every test of the enclosing describe: closeAll empties it, so the same object
 * serves the next test. Call at describe level (it registers the afterEach).
 */
export function closerPerTest(): Closer {
  const closer = new Closer();
  afterEach(() => closer.closeAll());
  return closer;
}

/** A temporary directory, removed when `closer` closes. */
export function tempDir(closer: Closer, prefix = 'mailroom-delivery-'): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  closer.defer(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}
