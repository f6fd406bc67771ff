import { randomBytes } from 'node:crypto';
import { constants as zlibConstants, gunzipSync, gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { ContentTooLarge, FormatError, MAX_RECORD_BYTES, openRecordStream, type RawItem } from './formats.ts';

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

/** Reads with a per-record limit of `cap` bytes. */
async function readCapped(data: string | Buffer, cap: number, size?: number): Promise<RawItem[]> {
  const stream = await openRecordStream(chunked(data, size), { maxRecordBytes: cap });
  const items: RawItem[] = [];
  for await (const batch of stream.items) for (const { raw: _raw, ...item } of batch) items.push(item);
  return items;
}

/** An object whose compact JSON text is exactly `bytes` long (ASCII only). */
function objectOfSize(id: string, bytes: number): { id: string; m: string } {
  const base = JSON.stringify({ id, m: '' }).length;
  return { id, m: 'x'.repeat(bytes - base) };
}

describe('per-record limit', () => {
  const CAP = 300;

  it('NDJSON: a line of exactly the limit is kept, one byte more is skipped with its line; in one chunk or many', async () => {
    const lines = [JSON.stringify({ id: 'a' }), JSON.stringify(objectOfSize('at', CAP)), JSON.stringify(objectOfSize('over', CAP + 1)), JSON.stringify({ id: 'b' })];
    expect(Buffer.byteLength(lines[1]!)).toBe(CAP);
    expect(Buffer.byteLength(lines[2]!)).toBe(CAP + 1);
    const text = lines.join('\n') + '\n';
    for (const size of [1 << 16, 7]) {
      const items = await readCapped(text, CAP, size);
      expect(items.map((i) => [i.line, i.error ?? (i.value as { id: string }).id])).toEqual([
        [1, 'a'],
        [2, 'at'],
        [3, `line longer than ${CAP} bytes`],
        [4, 'b'],
      ]);
    }
  });

  it('JSON array: an element over the limit (as compact JSON) is skipped at its index; the one at the limit and the neighbours are kept', async () => {
    const elements: unknown[] = [
      { id: 'a' },
      objectOfSize('at', CAP),
      objectOfSize('over', CAP + 1),
      { id: 'nested', deep: [{ k: 'y'.repeat(CAP) }, 1, 2] },
      'z'.repeat(CAP),
      { id: 'b' },
    ];
    const tooLong = elements.map((e) => Buffer.byteLength(JSON.stringify(e)) > CAP);
    expect(tooLong).toEqual([false, false, true, true, true, false]);
    const expected = elements.map((e, index) => (tooLong[index] ? { index, error: `element longer than ${CAP} bytes` } : { index, value: e }));
    // Whitespace does not count: pretty-printed, the same elements are kept.
    for (const text of [JSON.stringify(elements), JSON.stringify(elements, null, 2)]) {
      expect(await readCapped(text, CAP)).toEqual(expected);
      expect(await readCapped(text, CAP, 5)).toEqual(expected);
    }
  });

  it('{"result": [...]}: the same, and members beside "result" (a long key or value among them) do not disturb it', async () => {
    const result = [{ id: 'a' }, objectOfSize('over', CAP + 1), objectOfSize('at', CAP), { id: 'b' }];
    const text = `{"${'k'.repeat(CAP * 2)}": "${'v'.repeat(CAP * 2)}", "meta": {"big": "${'w'.repeat(CAP * 2)}"}, "result": ${JSON.stringify(result)}, "after": 1}`;
    expect(await readCapped(text, CAP, 64)).toEqual([
      { index: 0, value: { id: 'a' } },
      { index: 1, error: `element longer than ${CAP} bytes` },
      { index: 2, value: result[2] },
      { index: 3, value: { id: 'b' } },
    ]);
  });

  it('CSV: a row over the limit is skipped at its first line, quoted line breaks included; the rows after keep their lines', async () => {
    const header = 'id,timestamp,event_message';
    const row = (id: string, msg: string) => `${id},1,${msg}`;
    const atCap = row('at', 'x'.repeat(CAP - row('at', '').length));
    const overCap = row('over', 'x'.repeat(CAP + 1 - row('over', '').length));
    // Quoted, with line breaks and escaped quotes inside: one row over four lines.
    const multi = `m,2,"${'a'.repeat(CAP / 2)}\n""q""\n${'b'.repeat(CAP / 2)}\nend"`;
    const rows = [header, row('a', 'first'), atCap, overCap, row('b', '"quoted, with comma"'), multi, row('c', 'last')];
    expect(Buffer.byteLength(atCap)).toBe(CAP);
    expect(Buffer.byteLength(overCap)).toBe(CAP + 1);
    const text = rows.join('\n') + '\n';
    // Lines counted in the generated text: the header is line 1, the multi-line row starts at 6 and ends at 9.
    const lineOf = (needle: string) => text.slice(0, text.indexOf(needle)).split('\n').length;
    const expected = [
      { line: 2, value: { id: 'a', timestamp: '1', event_message: 'first' }, fromCsv: true },
      { line: 3, value: { id: 'at', timestamp: '1', event_message: 'x'.repeat(CAP - row('at', '').length) }, fromCsv: true },
      { line: lineOf('over,'), error: `row longer than ${CAP} bytes` },
      { line: lineOf('b,1'), value: { id: 'b', timestamp: '1', event_message: 'quoted, with comma' }, fromCsv: true },
      { line: lineOf('m,2'), error: `row longer than ${CAP} bytes` },
      { line: lineOf('c,1'), value: { id: 'c', timestamp: '1', event_message: 'last' }, fromCsv: true },
    ];
    expect(expected.map((e) => e.line)).toEqual([2, 3, 4, 5, 6, 10]);
    for (const size of [1 << 16, 1, 17]) expect(await readCapped(text, CAP, size)).toEqual(expected);
  });

  it('CSV: after a skipped row, csv-parse errors name the line of the file, not of the rest', async () => {
    const text = `id,timestamp\na,1\nb,${'x'.repeat(CAP)}\nc,2\nd\ne,3\n`;
    expect(await readCapped(text, CAP)).toEqual([
      { line: 2, value: { id: 'a', timestamp: '1' }, fromCsv: true },
      { line: 3, error: `row longer than ${CAP} bytes` },
      { line: 4, value: { id: 'c', timestamp: '2' }, fromCsv: true },
      { line: 5, error: expect.stringMatching(/^invalid CSV: .* on line 5$/) },
      { line: 6, value: { id: 'e', timestamp: '3' }, fromCsv: true },
    ]);
  });

  it('CSV: a last row over the limit without a line end, and a header over the limit', async () => {
    const items = await readCapped(`id,timestamp\na,1\nb,${'9'.repeat(CAP)}`, CAP, 13);
    expect(items).toEqual([
      { line: 2, value: { id: 'a', timestamp: '1' }, fromCsv: true },
      { line: 3, error: `row longer than ${CAP} bytes` },
    ]);
    await expect(readCapped(`id,timestamp,${'h'.repeat(CAP)}\na,1,x\n`, CAP)).rejects.toThrow(`the CSV header row is longer than ${CAP} bytes`);
  });

  it(`at the real limit (${MAX_RECORD_BYTES} bytes): NDJSON and a JSON array keep the record at the limit and skip the one a byte over`, async () => {
    const at = JSON.stringify(objectOfSize('at', MAX_RECORD_BYTES));
    const over = JSON.stringify(objectOfSize('over', MAX_RECORD_BYTES + 1));
    const nd = await readCapped(Buffer.from(`{"id":"a"}\n${at}\n${over}\n{"id":"b"}\n`), MAX_RECORD_BYTES, 1 << 20);
    expect(nd.map((i) => i.error ?? (i.value as { id: string }).id)).toEqual(['a', 'at', `line longer than ${MAX_RECORD_BYTES} bytes`, 'b']);
    const arr = await readCapped(Buffer.from(`[{"id":"a"},${at},${over},{"id":"b"}]`), MAX_RECORD_BYTES, 1 << 20);
    expect(arr.map((i) => i.error ?? (i.value as { id: string }).id)).toEqual(['a', 'at', `element longer than ${MAX_RECORD_BYTES} bytes`, 'b']);
  }, 10_000);
});

describe('gzip', () => {
  const ND = '{"a":1}\n\n{"a":\n{"a":3}\n';
  const ARRAY = '[{"a":1},{"a":2},{"a":3}]';
  const CSV = 'id,timestamp\na,1\n\nb,2\nc\n';

  it('NDJSON, a JSON array and CSV read the same compressed as plain, line numbers those of the content', async () => {
    for (const text of [ND, ARRAY, CSV]) {
      const plain = await read(text);
      expect(plain.items.length).toBeGreaterThan(0);
      expect(await read(gzipSync(text))).toEqual(plain);
      expect(await read(gzipSync(text), 3)).toEqual(plain);
    }
    // The bad NDJSON line is line 3 of the content, whatever the compressed bytes look like.
    expect((await read(gzipSync(ND))).items[1]).toEqual({ line: 3, error: expect.stringMatching(/^invalid JSON/) });
  });

  it('several gzip members one after the other read as one file', async () => {
    const parts = ['{"a":1}\n', '{"a":2}\n{"a":3}\n', '{"a":4}\n'];
    const { format, items } = await read(Buffer.concat(parts.map((p) => gzipSync(p))), 10);
    expect(format).toBe('ndjson');
    expect(items).toEqual([1, 2, 3, 4].map((a, i) => ({ line: i + 1, value: { a } })));
  });

  it('a truncated archive keeps the records before the cut and ends with an error saying where it stopped', async () => {
    const lines = Array.from({ length: 2000 }, (_, i) => JSON.stringify({ i, pad: `record ${i} `.repeat(5) }));
    const full = gzipSync(lines.join('\n') + '\n');
    const cut = full.subarray(0, Math.floor(full.length / 2));
    const { items } = await read(cut, 1000);
    // Independently: what zlib can decompress of the cut archive, and the whole lines in it.
    const partial = gunzipSync(cut, { finishFlush: zlibConstants.Z_SYNC_FLUSH });
    const whole = partial.toString('utf8').split('\n').length - 1;
    expect(whole).toBeGreaterThan(100);
    expect(whole).toBeLessThan(2000);
    // Every whole line before the cut is kept, in order; the cut one is the damage, not a bad record.
    expect(items).toEqual([
      ...lines.slice(0, whole).map((l, n) => ({ line: n + 1, value: JSON.parse(l) })),
      {
        line: whole + 1,
        error: `the gzip archive is damaged after ${cut.length} bytes of compressed input (${partial.length} bytes decompressed): the compressed data is damaged at this line, so it and the rest of the file were not read (zlib: unexpected end of file)`,
        whole: true,
      },
    ]);
  });

  it('a damaged JSON array keeps the elements before the damage', async () => {
    const elements = Array.from({ length: 3000 }, (_, i) => ({ i, pad: `element ${i} `.repeat(5) }));
    const full = gzipSync(JSON.stringify(elements));
    const { format, items } = await read(full.subarray(0, Math.floor(full.length / 2)), 4096);
    expect(format).toBe('json-array');
    const kept = items.filter((i) => i.value !== undefined);
    expect(kept.length).toBeGreaterThan(100);
    expect(kept).toEqual(kept.map((_, index) => ({ index, value: elements[index] })));
    expect(items.at(-1)).toMatchObject({ whole: true, error: expect.stringMatching(/^the gzip archive is damaged after/) });
  });

  it('an archive damaged before any content is a FormatError; an empty one is "the file is empty"', async () => {
    // The 10-byte gzip header alone.
    await expect(read(gzipSync(ND).subarray(0, 10))).rejects.toThrow(/^the gzip archive is damaged after 10 bytes, before any content could be read/);
    await expect(read(gzipSync(''))).rejects.toThrow('the file is empty');
  });

  it('a read error inside compressed input is thrown, not reported as damage', async () => {
    // Random text compresses little: the error comes long after the format is told.
    const gz = gzipSync(Array.from({ length: 2000 }, (_, i) => JSON.stringify({ i, pad: randomBytes(300).toString('hex') })).join('\n'));
    async function* failing() {
      yield* chunked(gz, 1024);
      throw new Error('disk went away');
    }
    const stream = await openRecordStream(failing());
    const drain = async () => {
      for await (const batch of stream.items) void batch;
    };
    await expect(drain()).rejects.toThrow('disk went away');
  });

  describe('a later member damaged (multi-member archive: member 1 good, member 2 not)', () => {
    // Member 1 decompresses to more than one zlib output chunk (16 KiB), and both members arrive in one input chunk.
    const N = 400;
    const M = 50;
    const one = Array.from({ length: N }, (_, i) => JSON.stringify({ m: 1, i, pad: `first member ${i} `.repeat(3) }));
    const two = Array.from({ length: M }, (_, i) => JSON.stringify({ m: 2, i }));
    const text1 = one.join('\n') + '\n';
    const m1 = gzipSync(text1);
    const good = one.map((l, n) => ({ line: n + 1, value: JSON.parse(l) }));
    const damage = (at: number, content: number, reason: string) => ({
      line: N + 1,
      error: `the gzip archive is damaged after ${at} bytes of compressed input (${content} bytes decompressed): the compressed data is damaged at this line, so it and the rest of the file were not read (zlib: ${reason})`,
      whole: true,
    });

    it('bad deflate data from its first byte: exactly the N lines of member 1 are kept, the damage names line N + 1', async () => {
      const m2 = Buffer.from(gzipSync(two.join('\n') + '\n'));
      // The first byte after the 10-byte header starts a deflate block: BFINAL 1, BTYPE 11 is no block type.
      m2[10] = 0xff;
      expect(Buffer.byteLength(text1)).toBeGreaterThan(16 * 1024);
      for (const size of [1 << 20, 7]) {
        const { format, items } = await read(Buffer.concat([m1, m2]), size);
        expect(format).toBe('ndjson');
        expect(items).toEqual([...good, damage(m1.length + 10, Buffer.byteLength(text1), 'invalid block type')]);
      }
    });

    it('a broken member header is damage (not silently ignored as trailing bytes)', async () => {
      const m2 = Buffer.from(gzipSync(two.join('\n') + '\n'));
      m2[0] = 0x00;
      const { items } = await read(Buffer.concat([m1, m2]));
      expect(items).toEqual([...good, damage(m1.length, Buffer.byteLength(text1), 'incorrect header check')]);
    });

    it('a wrong CRC is only known at the member end: the lines of member 2 came out before it and are kept', async () => {
      const text2 = two.join('\n') + '\n';
      const m2 = Buffer.from(gzipSync(text2));
      m2.writeUInt8(m2[m2.length - 8]! ^ 0x01, m2.length - 8);
      const { items } = await read(Buffer.concat([m1, m2]));
      expect(items).toEqual([
        ...good,
        ...two.map((l, n) => ({ line: N + n + 1, value: JSON.parse(l) })),
        { ...damage(m1.length + m2.length - 8, Buffer.byteLength(text1) + Buffer.byteLength(text2), 'incorrect data check'), line: N + M + 1 },
      ]);
    });

    it('zero bytes after the last member are padding, not damage', async () => {
      const { items } = await read(Buffer.concat([m1, Buffer.alloc(512)]), 100);
      expect(items).toEqual(good);
    });
  });

  it('CSV cut inside a row: the rows before are kept, the cut row is not read with a truncated cell', async () => {
    const rows = Array.from({ length: 300 }, (_, i) => `r${i},${1000 + i},"message number ${i}, with a comma"`);
    const full = gzipSync(['id,timestamp,event_message', ...rows].join('\n') + '\n');
    // Cut where the content ends inside a row (the cut row would otherwise parse with a short last cell).
    let cut = full.length - 20;
    let partial = gunzipSync(full.subarray(0, cut), { finishFlush: zlibConstants.Z_SYNC_FLUSH });
    while (partial.at(-1) === 0x0a || partial.length === 0) partial = gunzipSync(full.subarray(0, --cut), { finishFlush: zlibConstants.Z_SYNC_FLUSH });
    const lines = partial.toString('utf8').split('\n');
    const wholeRows = lines.length - 2; // less the header and the cut row
    expect(wholeRows).toBeGreaterThan(10);
    const { format, items } = await read(full.subarray(0, cut), 64);
    expect(format).toBe('csv');
    expect(items.slice(0, -1).map((i) => i.line)).toEqual(Array.from({ length: wholeRows }, (_, n) => n + 2));
    expect(items.at(-2)).toMatchObject({ value: { id: `r${wholeRows - 1}`, event_message: `message number ${wholeRows - 1}, with a comma` } });
    expect(items.at(-1)).toMatchObject({ line: wholeRows + 2, whole: true, error: expect.stringMatching(/the compressed data is damaged at this line, so it and the rest of the file were not read \(zlib: unexpected end of file\)$/) });
  });

  it('the decompressed size is capped: ContentTooLarge once the content passes maxContentBytes, none at exactly it', async () => {
    const text = '{"a":1}\n'.repeat(10_000); // 80,000 bytes
    const drain = async (max: number) => {
      const stream = await openRecordStream(chunked(gzipSync(text)), { maxContentBytes: max });
      let n = 0;
      for await (const batch of stream.items) n += batch.length;
      return n;
    };
    expect(await drain(80_000)).toBe(10_000);
    await expect(drain(79_999)).rejects.toBeInstanceOf(ContentTooLarge);
    await expect(drain(79_999)).rejects.toThrow('the decompressed content passed the limit of 79999 bytes');
    // Also while the format is still being told (the first line alone is over the cap).
    await expect(drain(4)).rejects.toBeInstanceOf(ContentTooLarge);
  });

  it('an aborted signal stops decompression at the next piece: reading throws its reason', async () => {
    // ~64 MiB of lines from ~64 KiB of gzip: without the stop, this would take seconds to read.
    const gz = gzipSync(Buffer.alloc(64 * 1024 * 1024, '{"a":1}\n'), { level: 9 });
    const controller = new AbortController();
    const stream = await openRecordStream(chunked(gz), { signal: controller.signal });
    let items = 0;
    const reason = new Error('stop');
    const drain = async () => {
      for await (const batch of stream.items) {
        items += batch.length;
        if (items > 1000) controller.abort(reason);
      }
    };
    await expect(drain()).rejects.toBe(reason);
    // At most one piece (16 KiB of compressed input, ~16 MiB of content) after the abort.
    expect(items).toBeLessThan(3 * 1024 * 1024);
  });
});
