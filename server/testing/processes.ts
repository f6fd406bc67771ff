/** Child processes for tests: a command that prints `Listening on URL` once it serves. */
import { spawn, type ChildProcess } from 'node:child_process';

export interface Listening {
  child: ChildProcess;
  /** The URL it printed; rejects (with what it printed) if it exits first. */
  url: Promise<string>;
  exited: Promise<number | null>;
}

/** Spawns `node ...args` in `cwd` and watches its output for `Listening on URL`. */
export function spawnListening(args: string[], opts: { cwd: string; env?: NodeJS.ProcessEnv }): Listening {
  const child = spawn(process.execPath, args, { cwd: opts.cwd, env: opts.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /Listening on (http:\S+)/.exec(out);
      if (m) resolve(m[1]!);
    });
    child.once('exit', (code) => reject(new Error(`exited ${code}: ${out}`)));
  });
  return { child, url, exited };
}
