/* SPDX-License-Identifier: MIT */
/*
 * Layer "sys", the bottom: the syscall seam, small utilities, and the facts of a registered file
 * that change during I/O (its size, the page-cache residency of a range). Every call into the
 * kernel that moves data or can fail part-way goes through the seam, so the fault-injection build
 * can fail the Nth one. Each returns a value >= 0 or -errno (never errno) and owns the one retry
 * policy: EINTR and EAGAIN are retried here, up to SYS_RETRIES times, and nowhere else.
 */
#ifndef DMAIO_SYS_H
#define DMAIO_SYS_H

#include <stdarg.h>

#include "../dmaio-types.h"

#define SYS_RETRIES 1000

ssize_t sys_pread(int fd, void *buf, size_t n, uint64_t off);
ssize_t sys_pwrite(int fd, const void *buf, size_t n, uint64_t off);
int sys_ioctl(int fd, unsigned long req, void *arg);
int sys_open(const char *path, int flags, mode_t mode);   /* O_CLOEXEC always added */
int sys_dup(int fd);                                       /* F_DUPFD_CLOEXEC */
int sys_memfd_create(const char *name, unsigned flags);    /* MFD_CLOEXEC always added */
int sys_ftruncate(int fd, off_t len);
int sys_fallocate(int fd, int mode, off_t off, off_t len);
int sys_mmap(size_t len, int prot, int flags, int fd, off_t off, void **addr);
ssize_t sys_copy_file_range(int in, uint64_t *in_off, int out, uint64_t *out_off, size_t n);
ssize_t sys_splice(int in, uint64_t *in_off, int out, uint64_t *out_off, size_t n);
int sys_pipe(int pfd[2]);                                  /* O_CLOEXEC */
int sys_fsync(int fd, bool data_only);
int sys_uring_result(int res); /* io_uring completion results pass through here */
/* full-length loops: bytes moved in *moved (short only at end of file for reads); 0 or -errno */
int sys_pread_full(int fd, char *buf, size_t n, uint64_t off, size_t *moved);
int sys_pwrite_full(int fd, const char *buf, size_t n, uint64_t off, size_t *moved);

/* utilities */
uint64_t dmaio_now_ns(void);
uint64_t dmaio_thread_cpu_ns(void); /* the calling thread's CPU time so far; 0: unknown */
long dmaio_page_size(void);
unsigned dmaio_fork_generation(void); /* changes in a child after fork() */
uint32_t dmaio_huge_page_size(void);
uint64_t dmaio_read_sysfs_u64(const char *path, uint64_t dflt);
/* a registered file during I/O (the queue): its size, re-read or grown, and the page-cache
 * residency of a range: a percentage, -errno when the kernel cannot tell */
void dmaio_file_refresh_size(struct dmaio_file *f); /* a read goes past the known size */
void dmaio_file_grow(struct dmaio_file *f, uint64_t end); /* a write ended at end */
int dmaio_file_cached_pct(struct dmaio_file *f, uint64_t off, uint64_t len);
/* bytes of the file dirty or under writeback, -errno when the kernel cannot tell */
int64_t dmaio_file_dirty_bytes(struct dmaio_file *f);
/* DMAIO_CAP_YES when the kernel has cachestat(2), DMAIO_CAP_NO when not (asked once) */
int dmaio_has_cachestat(void);
/* logging through the context's sink (dmaio_ctx_set_log; stderr by default): dmaio_log() at
 * DMAIO_LOG_ERROR, INFO() and DBG() only when the sink takes that level */
void dmaio_log(struct dmaio_ctx *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void dmaio_log_at(struct dmaio_ctx *ctx, int level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
#define DMAIO_LOG_WANTS(ctx, lvl) (__atomic_load_n(&(ctx)->log_level, __ATOMIC_RELAXED) >= (lvl))
#define INFO(ctx, ...) do { if (DMAIO_LOG_WANTS((ctx), DMAIO_LOG_INFO)) \
	dmaio_log_at((ctx), DMAIO_LOG_INFO, __VA_ARGS__); } while (0)
#define DBG(ctx, ...) do { if (DMAIO_LOG_WANTS((ctx), DMAIO_LOG_DEBUG)) \
	dmaio_log_at((ctx), DMAIO_LOG_DEBUG, __VA_ARGS__); } while (0)

#endif
