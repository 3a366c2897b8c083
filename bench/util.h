/* SPDX-License-Identifier: MIT */
/*
 * The helpers every bench program shares (dmaio-bench, dmaio-bench-model): time, CPU, sizes, the
 * position-encoded file pattern, whole-range pread/pwrite, library buffers from a --heap name,
 * errors, and the registry of test files removed at exit and on a signal.
 */
#ifndef DMAIO_BENCH_UTIL_H
#define DMAIO_BENCH_UTIL_H

#include <dmaio.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define KIB ((uint64_t)1 << 10)
#define MIB ((uint64_t)1 << 20)
#define GIB ((uint64_t)1 << 30)
#define URING_PIECE GIB /* io_uring refuses registered buffers over 1 GiB */

enum { DIR_READ, DIR_WRITE, NDIRS };
enum { MODE_COLD, MODE_WARM, NMODES };

/* CLOCK_MONOTONIC in ns */
uint64_t now_ns(void);
/* user + system CPU seconds of the process (all threads, io_uring workers included) */
double cpu_now(void);
/* a kB field of /proc/self/status (VmRSS, VmHWM...), -1 if absent */
long proc_status_kib(const char *key);
/* MemAvailable of /proc/meminfo in bytes, 0 if unknown */
uint64_t mem_available(void);
/* a progress line only on an interactive terminal (not a serial or system console: a log) */
bool interactive(int fd);
/* "ENOENT" for -ENOENT or ENOENT; strerror() where the C library has no names */
const char *errname(int err);
/* 1G, 64M, 4K or the number of bytes */
void size_str(char *out, size_t len, uint64_t v);
/* "64M", "1GiB", "4096": 0, or -EINVAL (also for 0) */
int parse_size(const char *s, uint64_t *out);
/* "a/b" with two decimals, "-" when either is unknown */
void fmt_ratio(char *out, size_t len, double a, double b);

/* the position-encoded pattern: the word at file offset off (a multiple of 8) */
static inline uint64_t pattern_word(uint64_t off)
{
	return off | (0xD3A1ull << 48);
}
void fill_pattern(void *p, uint64_t file_off, size_t len);
/* -1 when p holds the pattern of [file_off, file_off + len), else the first bad offset */
int64_t check_pattern(const void *p, uint64_t file_off, size_t len);

/* all of len (EINTR and short transfers retried); the bytes moved or -errno; pread stops at EOF */
ssize_t full_pread(int fd, void *p, size_t len, uint64_t off);
ssize_t full_pwrite(int fd, const void *p, size_t len, uint64_t off);

/* calloc that dies when out of memory (n 0 allowed) */
void *xcalloc(size_t n, size_t size);

/* program: message, then exit(1) (the registered test files are removed at exit) */
__attribute__((format(printf, 1, 2), noreturn))
void die(const char *fmt, ...);

/* dmaio_buf_alloc() from one provider by name (NULL: the library's order) with the
 * DMAIO_ALLOC_* flags: 0 or -errno */
int bench_alloc(struct dmaio_ctx *ctx, const char *heap, uint64_t size, uint32_t flags,
		struct dmaio_buf **buf);
/* "the default provider" for a NULL --heap */
const char *heap_desc(const char *heap);
/*
 * A library buffer of len bytes from heap (NULL: the default provider, memfd allowed), mapped
 * and touched once when it can be mapped (*map NULL when not). 0 or -errno.
 */
int alloc_dbuf(const char *heap, size_t len, struct dmaio_buf **b, void **map);

/*
 * Test files to remove at exit, after die() and on SIGINT/SIGTERM/SIGHUP, unless keep. The
 * registry is the process's one file-scope state: a signal handler can reach nothing else.
 * cleanup_add() copies the path; call it before creating the file.
 */
void cleanup_init(bool keep);
void cleanup_add(const char *path);
/* remove the registered files now (unless keep); async-signal-safe */
void cleanup_files(void);

#endif /* DMAIO_BENCH_UTIL_H */
