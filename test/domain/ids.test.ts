import { describe, expect, it } from 'vitest';
import { newSortableId } from '../../src/domain/ids.js';

describe('newSortableId', () => {
  it('sorts by creation time, whatever the random part', () => {
    const times = [0, 1, 255, 256, 1_700_000_000_000, 1_700_000_000_001, 1_800_000_000_000];
    const ids = times.map((t) => newSortableId('msg', t));
    expect([...ids].sort()).toEqual(ids);
  });

  it('keeps 128 random bits after the time: ids of one millisecond differ', () => {
    const ids = new Set(Array.from({ length: 1000 }, () => newSortableId('msg', 1_700_000_000_000)));
    expect(ids.size).toBe(1000);
    for (const id of ids) expect(id).toMatch(/^msg_[0-9a-f]{12}[A-Za-z0-9_-]{22}$/);
  });
});
