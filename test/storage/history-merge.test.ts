import { describe, expect, it } from 'vitest';
import { newestFirst, type HistoryRow } from '../../src/storage/history.js';

const row = (id: string, created_at: number, status: HistoryRow['status'] = 'queued'): HistoryRow => ({
  id,
  status,
  template_id: 't',
  service_id: 's',
  subject: null,
  created_at,
  sent_at: null,
  mode: 'live',
  simulated: false,
});

describe('newestFirst (history with several statuses: one query per status, merged)', () => {
  it('merges pages by created_at, then id, newest first, up to the limit', () => {
    const queued = [row('msg_d', 40), row('msg_b', 20, 'queued')];
    const failed = [row('msg_e', 40, 'failed'), row('msg_c', 30, 'failed'), row('msg_a', 10, 'failed')];
    expect(newestFirst([queued, failed], 10).map((r) => r.id)).toEqual(['msg_e', 'msg_d', 'msg_c', 'msg_b', 'msg_a']);
    expect(newestFirst([queued, failed], 3).map((r) => r.id)).toEqual(['msg_e', 'msg_d', 'msg_c']);
  });

  it('lists a message found in two pages once (its status moved between the two reads)', () => {
    const merged = newestFirst([[row('msg_x', 5, 'queued'), row('msg_w', 4)], [row('msg_x', 5, 'sent')]], 10);
    expect(merged.map((r) => r.id)).toEqual(['msg_x', 'msg_w']);
  });

  it('returns nothing from empty pages', () => {
    expect(newestFirst([[], []], 5)).toEqual([]);
  });
});
