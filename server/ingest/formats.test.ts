import { describe, expect, it } from 'vitest';
import { FormatError, openRecordStream, type RawItem } from './formats.ts';

/** Feeds bytes in chunks of `size` (small sizes split BOMs, CRLFs and lines across chunks). */
async function* chunked(data: string | Buffer, size = 1 << 16): AsyncGenerator<Buffer> {
  const buf = Buffer.isBuffer(data) ? data : Buffer.from(data, 'utf8');
  for (let i = 0; i < buf.length; i += size) yield buf.subarray(i, i + size);
}

async function read(data: string | Buffer, size?: number): Promise<{ format: string; items: RawItem[] }> {
  const stream = await openRecordStream(chunked(data, size));
  const items: RawItem[] = [];
  // `raw` (the NDJSON line's bytes) is checked on its own below; here it must equal the line text.
  for await (const batch of stream.items) {
    for (const { raw, ...item } of batch) {
      if (raw) expect(JSON.parse(raw.toString('utf8'))).toEqual(item.value);
      items.push(item);
    }
  }
  return { format: stream.format, items };
}

const BOM = '\uFEFF';

describe('format detection by content', () => {
  it('NDJSON whose first line is broken is still NDJSON: line 1 rejected, the rest read', async () => {
    const { format, items } = await read('{"timestamp": "x", "event_message": "broken"\n{"a":1}\n{"a":2}\n');
    expect(format).toBe('ndjson');
    expect(items.map((i) => (i.error ? `${i.line}:error` : `${i.line}:${JSON.stringify(i.value)}`))).toEqual(['1:error', '2:{"a":1}', '3:{"a":2}']);
  });

  it('one object per line is NDJSON', async () => {
    expect((await read('{"a":1}\n{"a":2}\n')).format).toBe('ndjson');
  });

  it('a single NDJSON line without a trailing newline is NDJSON', async () => {
    expect(await read('{"a":1}')).toEqual({ format: 'ndjson', items: [{ line: 1, value: { a: 1 } }] });
  });

  it('a leading [ is a JSON array, whatever whitespace precedes it', async () => {
    expect((await read('\n  [{"a":1}]')).format).toBe('json-array');
  });

  it('{"result": [...]} on one line is an endpoint response', async () => {
    expect(await read('{"result":[{"a":1},{"a":2}]}')).toEqual({
      format: 'result',
      items: [
        { index: 0, value: { a: 1 } },
        { index: 1, value: { a: 2 } },
      ],
    });
  });

  it('a pretty-printed {"result": [...]} is an endpoint response, not NDJSON', async () => {
    const text = '{\n  "result": [\n    {\n      "a": 1\n    },\n    {\n      "a": 2\n    }\n  ]\n}\n';
    expect(await read(text)).toEqual({
      format: 'result',
      items: [
        { index: 0, value: { a: 1 } },
        { index: 1, value: { a: 2 } },
      ],
    });
  });

  it('NDJSON whose first record is longer than the 64 KiB look-ahead is still NDJSON', async () => {
    const big = 'x'.repeat(100_000);
    const { format, items } = await read(`${JSON.stringify({ id: 'a', m: big })}\n{"id":"b"}\n`, 16_384);
    expect(format).toBe('ndjson');
    expect(items).toEqual([
      { line: 1, value: { id: 'a', m: big } },
      { line: 2, value: { id: 'b' } },
    ]);
  });

  it('a minified {"result": [...]} longer than the look-ahead is still an endpoint response', async () => {
    const big = 'x'.repeat(100_000);
    const { format, items } = await read(JSON.stringify({ result: [{ id: 'a', m: big }, { id: 'b' }] }), 16_384);
    expect(format).toBe('result');
    expect(items).toEqual([
      { index: 0, value: { id: 'a', m: big } },
      { index: 1, value: { id: 'b' } },
    ]);
  });

  it('a header row naming a timestamp column is CSV', async () => {
    expect((await read('id,timestamp\nx,1\n')).format).toBe('csv');
  });

  it('text that is none of the formats is a FormatError naming the accepted ones', async () => {
    await expect(read('hello world\nsecond line\n')).rejects.toThrow(FormatError);
    await expect(read('hello world\nsecond line\n')).rejects.toThrow(/unknown format: expected NDJSON, a JSON array/);
  });

  it('an empty file, a blank file and a BOM alone are "the file is empty"', async () => {
    await expect(read('')).rejects.toThrow('the file is empty');
    await expect(read(' \r\n\n\t\n')).rejects.toThrow('the file is empty');
    await expect(read(BOM)).rejects.toThrow('the file is empty');
  });

  it('an empty {"result": []}, compact or pretty-printed, is an empty export, not an error', async () => {
    expect(await read('{"result":[]}')).toEqual({ format: 'result', items: [] });
    expect(await read('{\n  "result": []\n}\n')).toEqual({ format: 'result', items: [] });
  });

  it('a JSON object without a result array is a FormatError', async () => {
    await expect(read('{\n  "rows": [1]\n}\n')).rejects.toThrow('a JSON object without a "result" array of records');
  });
});

describe('NDJSON', () => {
  it('numbers lines from 1, counting blank lines, and skips blank lines silently', async () => {
    expect((await read('{"a":1}\n\n   \n{"a":2}\n\n')).items).toEqual([
      { line: 1, value: { a: 1 } },
      { line: 4, value: { a: 2 } },
    ]);
  });

  it('a BOM and CRLF line ends are stripped, even when split across 1-byte chunks', async () => {
    const text = `${BOM}{"a":1}\r\n\r\n{"a":"x"}\r\n`;
    const expected = [
      { line: 1, value: { a: 1 } },
      { line: 3, value: { a: 'x' } },
    ];
    expect((await read(text)).items).toEqual(expected);
    expect((await read(text, 1)).items).toEqual(expected);
  });

  it('a line that is not JSON is an error at its line; the following lines still parse', async () => {
    const { items } = await read('{"a":1}\n{"a":\n{"a":3}\n');
    expect(items[0]).toEqual({ line: 1, value: { a: 1 } });
    expect(items[1]).toEqual({ line: 2, error: expect.stringMatching(/^invalid JSON: /) });
    expect(items[2]).toEqual({ line: 3, value: { a: 3 } });
    expect(items).toHaveLength(3);
  });

  it('a truncated last line (no newline) is rejected with its line number', async () => {
    const { items } = await read('{"a":1}\n{"a":2}\n{"a":3,"b":"cut o');
    expect(items.map((i) => i.line)).toEqual([1, 2, 3]);
    expect(items[2]).toEqual({ line: 3, error: expect.stringMatching(/^invalid JSON: /) });
  });

  it('invalid UTF-8 is an error at its line', async () => {
    const bytes = Buffer.concat([Buffer.from('{"a":1}\n{"a":"'), Buffer.from([0xff, 0xfe]), Buffer.from('"}\n')]);
    expect((await read(bytes)).items).toEqual([
      { line: 1, value: { a: 1 } },
      { line: 2, error: 'invalid UTF-8' },
    ]);
  });

  it('a multi-byte character split across chunks survives', async () => {
    expect((await read('{"m":"é€😀"}\n', 1)).items).toEqual([{ line: 1, value: { m: 'é€😀' } }]);
  });

  it('a read error from the input is thrown, not turned into a rejected line', async () => {
    async function* failing() {
      yield Buffer.from('{"a":1}\n{"a":2}\n');
      throw new Error('disk went away');
    }
    const stream = await openRecordStream(failing());
    const drain = async () => {
      for await (const batch of stream.items) void batch;
    };
    await expect(drain()).rejects.toThrow('disk went away');
  });
});

describe('JSON array and {"result": [...]}', () => {
  it('elements are located by 0-based index', async () => {
    expect(await read('[{"a":1},\n{"a":2},\n{"a":3}]')).toEqual({
      format: 'json-array',
      items: [
        { index: 0, value: { a: 1 } },
        { index: 1, value: { a: 2 } },
        { index: 2, value: { a: 3 } },
      ],
    });
  });

  it('a BOM before the array is accepted', async () => {
    expect((await read(`${BOM}[{"a":1}]`, 2)).items).toEqual([{ index: 0, value: { a: 1 } }]);
  });

  it('a truncated array keeps the complete elements and reports the cut at the next index', async () => {
    const { items } = await read('[{"a":1},{"a":2},{"a":');
    expect(items.slice(0, 2)).toEqual([
      { index: 0, value: { a: 1 } },
      { index: 1, value: { a: 2 } },
    ]);
    expect(items[2]).toEqual({ index: 2, error: expect.stringMatching(/^invalid JSON after element 2; the rest of the file was not read/) });
    expect(items).toHaveLength(3);
  });

  it('a truncated {"result": [...]} behaves the same', async () => {
    const { format, items } = await read('{"result":[{"a":1},{"a":');
    expect(format).toBe('result');
    expect(items[0]).toEqual({ index: 0, value: { a: 1 } });
    expect(items[1]).toEqual({ index: 1, error: expect.stringMatching(/^invalid JSON after element 1/) });
    expect(items).toHaveLength(2);
  });

  it('a read error from the input is thrown, not reported as invalid JSON', async () => {
    async function* failing() {
      yield Buffer.from('[{"a":1},\n');
      yield Buffer.from('{"a":2},\n');
      throw new Error('disk went away');
    }
    const stream = await openRecordStream(failing());
    const drain = async () => {
      for await (const batch of stream.items) void batch;
    };
    await expect(drain()).rejects.toThrow('disk went away');
  });
});

describe('CSV', () => {
  it('rows become string records located by line; the header is line 1', async () => {
    expect(await read('id,timestamp,event_message\na,1,hello\nb,2,world\n')).toEqual({
      format: 'csv',
      items: [
        { line: 2, value: { id: 'a', timestamp: '1', event_message: 'hello' }, fromCsv: true },
        { line: 3, value: { id: 'b', timestamp: '2', event_message: 'world' }, fromCsv: true },
      ],
    });
  });

  it('RFC 4180 quoting: doubled quotes, commas and a newline inside a quoted cell', async () => {
    const text = 'id,timestamp,event_message,metadata\n' + 'a,1,"say ""hi"", then\nleave","{""k"":""v,w""}"\n' + 'b,2,plain,\n';
    expect((await read(text)).items).toEqual([
      { line: 3, value: { id: 'a', timestamp: '1', event_message: 'say "hi", then\nleave', metadata: '{"k":"v,w"}' }, fromCsv: true },
      { line: 4, value: { id: 'b', timestamp: '2', event_message: 'plain', metadata: '' }, fromCsv: true },
    ]);
  });

  it('a BOM and CRLF are stripped; blank lines are skipped but counted', async () => {
    const text = `${BOM}"id","timestamp"\r\na,1\r\n\r\nb,2\r\n`;
    const expected = [
      { line: 2, value: { id: 'a', timestamp: '1' }, fromCsv: true },
      { line: 4, value: { id: 'b', timestamp: '2' }, fromCsv: true },
    ];
    expect((await read(text)).items).toEqual(expected);
    expect((await read(text, 1)).items).toEqual(expected);
  });

  it('a row with the wrong number of cells is an error at its line; errors come in line order', async () => {
    const { items } = await read('id,timestamp\na,1\nb\nc,3\nd,4,extra\ne,5\n');
    expect(items.map((i) => [i.line, i.error === undefined ? 'ok' : 'error'])).toEqual([
      [2, 'ok'],
      [3, 'error'],
      [4, 'ok'],
      [5, 'error'],
      [6, 'ok'],
    ]);
    expect(items[1]?.error).toMatch(/^invalid CSV: /);
  });

  it('a truncated last row is rejected with its line number', async () => {
    const { items } = await read('id,timestamp,event_message\na,1,x\nb,2');
    expect(items[1]).toEqual({ line: 3, error: expect.stringMatching(/^invalid CSV: /) });
    expect(items).toHaveLength(2);
  });

  it('a read error from the input is thrown (the parser does not wait forever)', async () => {
    async function* failing() {
      yield Buffer.from('id,timestamp\n');
      yield Buffer.from('a,1\n');
      throw new Error('disk went away');
    }
    const stream = await openRecordStream(failing());
    const drain = async () => {
      for await (const batch of stream.items) void batch;
    };
    await expect(drain()).rejects.toThrow('disk went away');
  }, 5_000);
});
