/**
 * The desktop app keeps its server's port across launches and restarts: the page's origin
 * (http://127.0.0.1:PORT) is where Chromium keeps the page's storage, so a new port each time
 * would start the page afresh. The main process remembers the port (shell-state.ts) and hands
 * it to each server process it spawns in the environment (it is no secret, unlike the key);
 * the server process tries it first and takes any free port if it is taken.
 */

/** Set by the main process on the server process it spawns. */
export const PREFERRED_PORT_ENV = 'LOG_EXPLORER_PREFERRED_PORT';

/** A port worth trying: an unprivileged one (the server never asked for a privileged port). */
export function isRememberablePort(v: unknown): v is number {
  return typeof v === 'number' && Number.isInteger(v) && v >= 1024 && v <= 65535;
}

/** The environment of a server process that should try `port` first (nothing when there is none). */
export function preferredPortEnv(port: number | undefined): Record<string, string> {
  return isRememberablePort(port) ? { [PREFERRED_PORT_ENV]: String(port) } : {};
}

/** The port the server process should try first; 0 (any free port) when none or a bad one was given. */
export function preferredPort(env: NodeJS.ProcessEnv): number {
  const raw = env[PREFERRED_PORT_ENV];
  const n = raw !== undefined && /^\d+$/.test(raw) ? Number(raw) : 0;
  return isRememberablePort(n) ? n : 0;
}

/**
 * Listens on `preferred`, or on any free port (0) when it is taken (EADDRINUSE) or not allowed
 * (EACCES); other errors are thrown. `listen` must release what it opened when it fails, as
 * server/server.ts's startServer does.
 */
export async function listenPreferring<T>(preferred: number, listen: (port: number) => Promise<T>): Promise<T> {
  if (preferred === 0) return listen(0);
  try {
    return await listen(preferred);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'EADDRINUSE' && code !== 'EACCES') throw err;
    return listen(0);
  }
}
