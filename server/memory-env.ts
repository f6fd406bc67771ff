/**
 * Environment the server process is started with (glibc reads its malloc settings at start only).
 *
 * MALLOC_MMAP_THRESHOLD_: glibc raises its mmap threshold to the size of each large block it
 * frees (up to 32 MiB), so after an import has taken and dropped a few partition images (4-40 MB
 * each) those sizes are carved from its heap and stay counted in the process's memory once
 * freed. A fixed threshold of 4 MiB hands every block that large back to the system when freed.
 * Measured on a 10M + 10M store, a 10,000-record import scattered over 90 days: peak RSS 804-892
 * MiB with it, 996-1,058 MiB without. A lower threshold (1 MiB) gave 739 on that import, but the
 * whole 10M + 10M bench then peaked at 1,505 MiB (1,270 at 4 MiB) and imported 6-11% slower.
 *
 * MALLOC_ARENA_MAX: each thread that allocates (the parse and block workers, libuv's threads)
 * otherwise gets arenas of its own, up to 8 per core; during the 10M + 10M bench six or seven
 * 64 MiB arenas filled and stayed resident (about 450 MB beside a 315 MB main heap). With two,
 * the same phase held a 545 MB heap and 37 MB of arena, the whole run peaked at 1,171 MiB, and
 * the imports took as long (209 + 277 s alone, against 204 + 270).
 *
 * Other platforms ignore both.
 */
export const SERVER_MEMORY_ENV: Readonly<Record<string, string>> = { MALLOC_MMAP_THRESHOLD_: String(4 * 1024 * 1024), MALLOC_ARENA_MAX: '2' };
