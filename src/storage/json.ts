/**
 * A stored row that cannot be read back: not a passing failure of the database, so callers
 * that would otherwise retry (the delivery worker) can tell it apart and stop retrying.
 */
export class CorruptRowError extends Error {
  constructor(what: string) {
    super(`corrupted JSON in ${what}`);
    this.name = 'CorruptRowError';
  }
}

/** A read whose row cannot be read back counts as no row: for writers about to replace it. */
export async function unlessCorrupt<T>(read: Promise<T>): Promise<T | undefined> {
  try {
    return await read;
  } catch (err) {
    if (err instanceof CorruptRowError) return undefined;
    throw err;
  }
}

/** JSON columns hold data this process wrote; a parse failure means a corrupted row. */
export function parseJson<T>(text: string, what: string): T {
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new CorruptRowError(what);
  }
}

export const bool = (v: number): boolean => v === 1;
export const int = (v: boolean): number => (v ? 1 : 0);
