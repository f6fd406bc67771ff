/**
 * Environment the server process is started with. glibc's malloc raises its mmap threshold to
 * the size of each large block it frees (up to 32 MiB), so after an import has taken and dropped
 * a few partition images (4-40 MB each) those sizes are carved from its heap and stay counted in
 * the process's memory once freed; blocks under the threshold (decompressed record blocks,
 * columns, parse batches of 1 MiB) leave holes in its heap that it keeps too. A fixed threshold
 * of 1 MiB hands every block that large back to the system when freed. Measured on a 10M + 10M
 * store, a 10,000-record import scattered over 90 days: peak RSS 739 MiB at 1 MiB, 892 at 4 MiB,
 * 706 / 694 at 256 KiB, 996-1,058 MiB without a threshold; a 1M-record edge import through a
 * server took 32 s at 1 MiB, 30 s at 4 MiB, 34 s at 256 KiB. Other platforms ignore the variable.
 */
export const SERVER_MEMORY_ENV: Readonly<Record<string, string>> = { MALLOC_MMAP_THRESHOLD_: String(1024 * 1024) };
