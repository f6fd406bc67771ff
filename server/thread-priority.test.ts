import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { WORKER_NICE } from './thread-priority.ts';

const here = path.dirname(fileURLToPath(import.meta.url));

describe.runIf(process.platform === 'linux')('a worker yielding to the answering thread', () => {
  it('lowers the calling thread alone: the other threads of its process keep their priority', () => {
    // In a process of its own: the calling thread's nice value, then every other thread's, read from /proc.
    const code = `
      import fs from 'node:fs';
      import { yieldToAnsweringThread } from ${JSON.stringify(path.join(here, 'thread-priority.ts'))};
      const nice = (stat) => Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
      const before = nice(fs.readFileSync('/proc/thread-self/stat', 'utf8'));
      yieldToAnsweringThread();
      const self = fs.readlinkSync('/proc/thread-self').split('/').pop();
      const others = fs.readdirSync('/proc/self/task').filter((t) => t !== self).map((t) => nice(fs.readFileSync('/proc/self/task/' + t + '/stat', 'utf8')));
      console.log(JSON.stringify({ before, self: nice(fs.readFileSync('/proc/thread-self/stat', 'utf8')), others }));`;
    const out = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], { encoding: 'utf8' });
    expect(out.status, out.stderr).toBe(0);
    const { before, self, others } = JSON.parse(out.stdout) as { before: number; self: number; others: number[] };
    // A process already below WORKER_NICE (a CI runner under nice) cannot be raised back: it stays.
    expect(self).toBe(Math.max(before, WORKER_NICE));
    expect(others.length).toBeGreaterThan(0);
    expect(others.every((n) => n === before)).toBe(true);
  });
});
