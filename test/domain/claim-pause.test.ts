import { describe, expect, it } from 'vitest';
import { CLAIM_PAUSE_MAX_MS, ClaimPause } from '../../src/domain/claim-pause.js';

function logger() {
  const lines: Array<{ level: string; obj: object; msg: string }> = [];
  return {
    lines,
    warn: (obj: object, msg: string) => {
      lines.push({ level: 'warn', obj, msg });
    },
    info: (obj: object, msg: string) => {
      lines.push({ level: 'info', obj, msg });
    },
  };
}

const full = Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' });
const down = Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' });

describe('ClaimPause', () => {
  it('backs off from the poll interval to its cap, with one line when it pauses and one when it resumes', () => {
    const log = logger();
    let now = 0;
    const pause = new ClaimPause(log, 100, () => now);
    const waits = Array.from({ length: 8 }, () => pause.failed(down));
    expect(waits).toEqual([100, 200, 400, 800, 1600, CLAIM_PAUSE_MAX_MS, CLAIM_PAUSE_MAX_MS, CLAIM_PAUSE_MAX_MS]);
    now = 5_000;
    pause.succeeded();
    pause.succeeded();
    expect(log.lines.map((l) => [l.level, l.msg.split(';')[0]])).toEqual([
      ['warn', 'claiming paused: the database is unavailable'],
      ['info', 'claiming resumed: the database is back'],
    ]);
    expect(log.lines[1]?.obj).toMatchObject({ reason: 'database_unavailable', paused_ms: 5_000 });
  });

  it('says a full disk is full, not that the database is away', () => {
    const log = logger();
    const pause = new ClaimPause(log, 100);
    pause.failed(full);
    pause.succeeded();
    expect(log.lines.map((l) => l.msg)).toEqual([
      expect.stringMatching(/^claiming paused: the storage is full;/),
      'claiming resumed: writes work again',
    ]);
  });

  it('is no pause for an error that is no storage trouble', () => {
    const log = logger();
    const pause = new ClaimPause(log, 100);
    expect(pause.failed(new Error('a bug'))).toBeUndefined();
    expect(pause.paused).toBe(false);
    expect(log.lines).toEqual([]);
  });
});
