/**
 * Messages between the supervisor (main process) and the server process. The same shapes
 * travel over Electron's utilityProcess port and over Node's fork IPC (in tests), so they
 * stay plain JSON.
 *
 * Handshake: the child says `hello` once it listens, the parent answers `start` (the key
 * travels in a message, never in argv or the environment), the child answers `ready`.
 */
import type { ImportFileOutcome } from './bridge.ts';

/** The server process's serviceName in Electron's app.getAppMetrics(). */
export const SERVER_SERVICE_NAME = 'log-explorer-server';

export interface StartConfig {
  dataDir: string;
  apiKey: string;
  /** Built renderer to serve at `/`. */
  rendererDir?: string;
  /** Offer the embedded demo data (`POST /api/demo`) when the server has a loader. */
  demo: boolean;
  /** The token key (base64, 32 bytes; token-key.ts): connection tokens are stored sealed with it. */
  tokenKey?: string;
}

export type ToServer =
  | { type: 'start'; config: StartConfig }
  /** source and project as the upload route and `npm run import` take them; the server checks the source. */
  | { type: 'import'; id: number; files: string[]; source?: string; project?: string }
  | { type: 'shutdown' };

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

export type FromServer =
  | { type: 'hello'; pid: number }
  | { type: 'ready'; url: string; port: number }
  | { type: 'log'; level: LogLevel; text: string }
  /** The server could not start; the process exits right after. */
  | { type: 'fatal'; message: string }
  | { type: 'import-progress'; id: number; file: string; index: number; count: number; bytes: number; totalBytes: number }
  | { type: 'import-done'; id: number; results: ImportFileOutcome[] };

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isStr = (v: unknown): v is string => typeof v === 'string';
const isNum = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

/** Narrows a message from the server process; anything malformed is undefined (and ignored). */
export function parseFromServer(m: unknown): FromServer | undefined {
  if (!isObj(m)) return undefined;
  switch (m.type) {
    case 'hello':
      return isNum(m.pid) ? { type: 'hello', pid: m.pid } : undefined;
    case 'ready':
      return isStr(m.url) && isNum(m.port) ? { type: 'ready', url: m.url, port: m.port } : undefined;
    case 'log':
      return isStr(m.text) && (m.level === 'debug' || m.level === 'info' || m.level === 'warn' || m.level === 'error') ? { type: 'log', level: m.level, text: m.text } : undefined;
    case 'fatal':
      return isStr(m.message) ? { type: 'fatal', message: m.message } : undefined;
    case 'import-progress':
      return isNum(m.id) && isStr(m.file) && isNum(m.index) && isNum(m.count) && isNum(m.bytes) && isNum(m.totalBytes) ? (m as FromServer) : undefined;
    case 'import-done':
      return isNum(m.id) && Array.isArray(m.results) ? (m as FromServer) : undefined;
    default:
      return undefined;
  }
}

/** Narrows a message from the parent. */
export function parseToServer(m: unknown): ToServer | undefined {
  if (!isObj(m)) return undefined;
  switch (m.type) {
    case 'start': {
      const c = m.config;
      if (!isObj(c) || !isStr(c.dataDir) || !isStr(c.apiKey) || c.apiKey === '' || typeof c.demo !== 'boolean') return undefined;
      if (c.rendererDir !== undefined && !isStr(c.rendererDir)) return undefined;
      if (c.tokenKey !== undefined && !isStr(c.tokenKey)) return undefined;
      return {
        type: 'start',
        config: { dataDir: c.dataDir, apiKey: c.apiKey, demo: c.demo, ...(c.rendererDir !== undefined ? { rendererDir: c.rendererDir } : {}), ...(c.tokenKey !== undefined ? { tokenKey: c.tokenKey } : {}) },
      };
    }
    case 'import':
      if (!isNum(m.id) || !Array.isArray(m.files) || !m.files.every(isStr)) return undefined;
      if (m.source !== undefined && !isStr(m.source)) return undefined;
      if (m.project !== undefined && !isStr(m.project)) return undefined;
      return { type: 'import', id: m.id, files: m.files, ...(m.source !== undefined ? { source: m.source } : {}), ...(m.project !== undefined ? { project: m.project } : {}) };
    case 'shutdown':
      return { type: 'shutdown' };
    default:
      return undefined;
  }
}
