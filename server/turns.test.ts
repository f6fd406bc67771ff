import { afterEach, describe, expect, it, vi } from 'vitest';
import { answeringStarted, MAX_TURN_WAIT_MS, readsAnswering, turnForRequests } from './turns.ts';

const ends: Array<() => void> = [];
afterEach(() => {
  for (const e of ends.splice(0)) e();
  vi.useRealTimers();
});
/** Passes of the event loop (setImmediate is not faked). */
const passes = async (n: number) => {
  for (let i = 0; i < n; i++) await new Promise<void>((resolve) => setImmediate(resolve));
};

describe('turnForRequests', () => {
  it('with no read being answered, comes back without waiting on a timer', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    let turned = false;
    void turnForRequests().then(() => (turned = true));
    await passes(3);
    expect(turned).toBe(true);
  });

  it('waits until the reads being answered are done, and no longer', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const a = answeringStarted();
    const b = answeringStarted();
    ends.push(a, b);
    let turned = false;
    void turnForRequests().then(() => (turned = true));
    await passes(3);
    a();
    await passes(3);
    expect(turned).toBe(false);
    b();
    // Ending twice counts once.
    b();
    await passes(3);
    expect(turned).toBe(true);
    expect(readsAnswering()).toBe(0);
  });

  it('waits at most MAX_TURN_WAIT_MS for a read that goes on', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    ends.push(answeringStarted());
    let turned = false;
    void turnForRequests().then(() => (turned = true));
    await passes(3);
    vi.advanceTimersByTime(MAX_TURN_WAIT_MS - 1);
    await passes(3);
    expect(turned).toBe(false);
    vi.advanceTimersByTime(1);
    await passes(3);
    expect(turned).toBe(true);
  });
});
