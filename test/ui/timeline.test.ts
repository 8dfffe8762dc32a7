import { describe, expect, it } from 'vitest';
import { detailText, isSettling, messageActions, timelineRow, timelineRows } from '../../ui/src/lib/timeline.js';
import { reasonBeyondSource, sourceLabel, suppressionSource } from '../../ui/src/lib/suppression-source.js';

describe('the message timeline as the detail page shows it', () => {
  it('lifts provider, recipient, bounce and reason, and keeps the other details', () => {
    const row = timelineRow({
      type: 'bounced',
      at: '2026-11-25T10:00:00.000Z',
      provider: 'ses',
      recipient: 'ada@example.com',
      bounce_type: 'hard',
      status: '5.1.1',
      reason: '550 5.1.1 unknown user',
      details: {
        provider: 'ses',
        recipient: 'ada@example.com',
        bounce_type: 'hard',
        status: '5.1.1',
        reason: '550 5.1.1 unknown user',
        extra: { bounce_sub_type: 'General' },
      },
    });
    expect(row).toMatchObject({
      type: 'bounced',
      summary: 'Bounced',
      provider: 'ses',
      recipient: 'ada@example.com',
      bounce: 'hard bounce (5.1.1)',
      reason: '550 5.1.1 unknown user',
    });
    expect(row.extra).toEqual([['extra.bounce_sub_type', 'General']]);
  });

  it("reads a hand-off bounce's `hard` flag and shows a status without a bounce among the details", () => {
    expect(timelineRow({ type: 'bounced', at: 'x', details: { hard: false } }).bounce).toBe('soft bounce');
    const sent = timelineRow({
      type: 'sent',
      at: 'x',
      status: '250',
      details: { response: '250 OK', recipients: ['a@b.c'], attempt: 1 },
    });
    expect(sent.bounce).toBeUndefined();
    expect(sent.extra).toEqual([
      ['status', '250'],
      ['response', '250 OK'],
      ['recipients', '["a@b.c"]'],
      ['attempt', '1'],
    ]);
  });

  it('names unknown types by themselves and sorts oldest first, keeping the order of equal times', () => {
    expect(timelineRow({ type: 'teleported', at: 'x' }).summary).toBe('teleported');
    const rows = timelineRows([
      { type: 'sent', at: '2026-11-25T10:00:02Z' },
      { type: 'queued', at: '2026-11-25T10:00:00Z' },
      { type: 'sending', at: '2026-11-25T10:00:00Z' },
    ]);
    expect(rows.map((r) => r.type)).toEqual(['queued', 'sending', 'sent']);
  });

  it('writes detail values as text', () => {
    expect(detailText('a')).toBe('a');
    expect(detailText(3)).toBe('3');
    expect(detailText(null)).toBe('—');
    expect(detailText({ a: 1 })).toBe('{"a":1}');
  });

  it('offers release only for a held message, cancel for one that has not left', () => {
    expect(messageActions('held')).toEqual({ release: true, cancel: true });
    expect(messageActions('held_service_error')).toEqual({ release: false, cancel: true });
    expect(messageActions('queued')).toEqual({ release: false, cancel: true });
    for (const s of ['sending', 'sent', 'delivered', 'bounced', 'failed', 'discarded'])
      expect(messageActions(s)).toEqual({ release: false, cancel: false });
    expect(isSettling('queued')).toBe(true);
    expect(isSettling('sending')).toBe(true);
    expect(isSettling('sent')).toBe(false);
    expect(isSettling('held')).toBe(false);
  });
});

describe('why an address is suppressed', () => {
  it("prefers the server's source, else the reason's first word", () => {
    expect(suppressionSource({ source: 'complaint', reason: 'complaint' })).toBe('complaint');
    expect(suppressionSource({ reason: 'hard_bounce' })).toBe('hard_bounce');
    expect(suppressionSource({ source: null, reason: 'Manual' })).toBe('manual');
    expect(suppressionSource({ reason: '' })).toBe('manual');
  });

  it('labels sources in words and shows a reason only when it says more', () => {
    expect(sourceLabel('hard_bounce')).toBe('Hard bounce');
    expect(sourceLabel('complaint')).toBe('Spam complaint');
    expect(sourceLabel('new_kind')).toBe('new kind');
    expect(reasonBeyondSource({ source: 'manual', reason: 'manual' })).toBeUndefined();
    expect(reasonBeyondSource({ source: 'hard_bounce', reason: '550 5.1.1 no such user' })).toBe('550 5.1.1 no such user');
  });
});
