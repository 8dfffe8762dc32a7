/** JSON columns hold data this process wrote; a parse failure means a corrupted row. */
export function parseJson<T>(text: string, what: string): T {
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new Error(`corrupted JSON in ${what}`);
  }
}

export const bool = (v: number): boolean => v === 1;
export const int = (v: boolean): number => (v ? 1 : 0);
