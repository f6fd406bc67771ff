import { describe, expect, it } from 'vitest';
import { DEFAULT_VIEW, type AppView } from './url-state.ts';
import { usagePattern, usageRequest } from './view-request.ts';

describe('usage.api-counts request', () => {
  const view = (regex: string | null): AppView => ({ ...DEFAULT_VIEW, page: 'usage', project: 'abc.def', usage: { interval: 'daily', regex } });
  it('follows the project (its ref, escaped) until a pattern is typed', () => {
    expect(usagePattern(view(null))).toBe('abc\\.def');
    expect(usageRequest(view('rest'))).toEqual({ name: 'usage.api-counts', params: { project: 'rest', interval: 'daily' } });
  });
  // Regression: clearing the field asked the endpoint with project= and showed its 400.
  it('a cleared pattern falls back to the project, for the request and for copy-as-curl alike', () => {
    expect(usageRequest(view(''))).toEqual({ name: 'usage.api-counts', params: { project: 'abc\\.def', interval: 'daily' } });
    expect(usagePattern(view('   '))).toBe('abc\\.def');
  });
});
