import { describe, expect, it } from 'vitest';
import { messageText } from './message-text.ts';

describe('messageText', () => {
  // Regression: the auth message column showed raw JSON.
  it('an auth record’s JSON message reads as its msg', () => {
    expect(messageText('{"component":"api","duration":41000,"level":"info","method":"POST","msg":"request completed","path":"/token","status":200}')).toBe('request completed');
  });
  it('an error that says more follows the msg; one that repeats it does not', () => {
    expect(messageText('{"msg":"500: Database error querying schema","error":"failed to connect to `host=localhost`"}')).toBe('500: Database error querying schema — failed to connect to `host=localhost`');
    expect(messageText('{"msg":"422: Signups not allowed","error":"422: Signups not allowed"}')).toBe('422: Signups not allowed');
    expect(messageText('{"message":"plain message key"}')).toBe('plain message key');
  });
  it('anything else is left as it is', () => {
    expect(messageText('GET | 200 | https://x.supabase.co/rest/v1/todos')).toBe('GET | 200 | https://x.supabase.co/rest/v1/todos');
    expect(messageText('{not json')).toBe('{not json');
    expect(messageText('{"component":"api","level":"info"}')).toBe('{"component":"api","level":"info"}');
    expect(messageText('["a"]')).toBe('["a"]');
  });
});
