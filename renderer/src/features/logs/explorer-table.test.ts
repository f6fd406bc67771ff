import { describe, expect, it } from 'vitest';
import { statusClass } from './explorer-table.tsx';

describe('statusClass', () => {
  it('colours by class', () => {
    expect([200, 304, 404, 503, 101, null].map(statusClass)).toEqual(['success', 'redirect', 'client', 'server', 'info', 'unknown']);
  });
});
