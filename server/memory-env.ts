/**
 * Environment the server process is started with. glibc's malloc raises its mmap threshold to
 * the size of each large block it frees (up to 32 MiB), so after an import has taken and dropped
 * a few partition images (4-40 MB each) those sizes are carved from its heap and stay counted in
 * the process's memory once freed. A fixed threshold of 4 MiB hands every block that large back
 * to the system when freed. Measured on a 10M + 10M store, a 10,000-record import scattered over
 * 90 days: peak RSS 804-892 MiB with it, 996-1,058 MiB without. A lower threshold (1 MiB) gave
 * 739 on that import, but the whole 10M + 10M bench then peaked at 1,505 MiB (1,270 at 4 MiB)
 * and imported 6-11% slower, so it stays at 4 MiB. Other platforms ignore the variable.
 */
export const SERVER_MEMORY_ENV: Readonly<Record<string, string>> = { MALLOC_MMAP_THRESHOLD_: String(4 * 1024 * 1024) };
