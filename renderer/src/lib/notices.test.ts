import { describe, expect, it } from 'vitest';
import { createNoticeStore, MAX_NOTICES } from './notices.ts';

describe('notice store', () => {
  it('shows notices oldest first, each with its own id and tone (info unless said)', () => {
    const s = createNoticeStore();
    const a = s.show('first');
    const b = s.show('second', 'warn');
    expect(a).not.toBe(b);
    expect(s.list()).toEqual([
      { id: a, tone: 'info', text: 'first' },
      { id: b, tone: 'warn', text: 'second' },
    ]);
  });

  it('dismisses by id; an unknown id changes nothing', () => {
    const s = createNoticeStore();
    const a = s.show('a');
    const b = s.show('b');
    s.dismiss(a);
    expect(s.list().map((n) => n.id)).toEqual([b]);
    const before = s.list();
    s.dismiss(12345);
    expect(s.list()).toBe(before);
  });

  it('keeps only the newest few', () => {
    const s = createNoticeStore();
    const texts = Array.from({ length: MAX_NOTICES + 2 }, (_, i) => `n${i}`);
    for (const t of texts) s.show(t);
    expect(s.list().map((n) => n.text)).toEqual(texts.slice(2));
  });

  it('tells subscribers of each change with a new list, until they unsubscribe', () => {
    const s = createNoticeStore();
    const seen: number[] = [];
    const off = s.subscribe(() => seen.push(s.list().length));
    const first = s.list();
    const id = s.show('x');
    expect(s.list()).not.toBe(first);
    s.dismiss(id);
    off();
    s.show('y');
    expect(seen).toEqual([1, 0]);
  });
});
