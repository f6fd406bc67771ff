/**
 * Environment the server process is started with. glibc's malloc raises its mmap threshold to
 * the size of each large block it frees (up to 32 MiB), so after an import has taken and dropped
 * a few partition images (4-40 MB each) those sizes are carved from its heap and stay counted in
 * the process's memory once freed. A fixed threshold of 4 MiB hands every block that large back
 * to the system when freed. Measured on a 10M + 10M store, a 10,000-record import scattered over
 * 90 days: peak RSS 804 MiB with it, 996-1,058 MiB in three runs without it, the import as fast
 * (72 s); at 128 KiB (with two malloc arenas, which alone changed nothing) it was 684 MiB but
 * the import took four times as long. Other platforms ignore the variable.
 */
export const SERVER_MEMORY_ENV: Readonly<Record<string, string>> = { MALLOC_MMAP_THRESHOLD_: String(4 * 1024 * 1024) };
