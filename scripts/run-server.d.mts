/** Types of scripts/run-server.mjs (plain JavaScript so that starting needs no compiler). */
export declare const SERVER_OUT_DIR: string;
export declare function serverEntries(root?: string): Record<string, string>;
export declare function sourceStamp(root?: string, entries?: Record<string, string>): string;
export declare function bundleIsFresh(options?: { outDir?: string; root?: string; entries?: Record<string, string> }): boolean;
export declare function buildServer(options?: { outDir?: string; root?: string; entries?: Record<string, string> }): Promise<{ outDir: string; entries: Record<string, string> }>;
export declare function startAgainWith(env: Readonly<Record<string, string>>): boolean;
