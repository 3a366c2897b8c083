/* SPDX-License-Identifier: MIT */
/* The syscall seam: the calls into the kernel that can fail part-way, one retry policy for all.
 * The fault-injection build (-DDMAIO_FAULT_INJECTION, see fault.h) can make the Nth of them fail. */
#include <fcntl.h>
#include <linux/fs.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "sys.h"
#include "fault.h"

/* The one retry policy: a call that a signal or a busy resource interrupted (EINTR, EAGAIN) is
 * made again, up to SYS_RETRIES times; the result is returned as >= 0 or -errno. */
#define SEAM(type, call)                                                                          \
	({                                                                                        \
		type r_;                                                                          \
		int n_ = 0;                                                                       \
		while ((r_ = (call)) < 0 && (errno == EINTR || errno == EAGAIN) &&               \
		       ++n_ < SYS_RETRIES)                                                        \
			;                                                                         \
		r_ < 0 ? (type)neg_errno() : r_;                                                  \
	})

static ssize_t raw_pread(int fd, void *buf, size_t n, uint64_t off)
{
	FAULT_RW(n);
	return pread(fd, buf, n, (off_t)off);
}

ssize_t sys_pread(int fd, void *buf, size_t n, uint64_t off)
{
	return SEAM(ssize_t, raw_pread(fd, buf, n, off));
}

static ssize_t raw_pwrite(int fd, const void *buf, size_t n, uint64_t off)
{
	FAULT_RW(n);
	return pwrite(fd, buf, n, (off_t)off);
}

ssize_t sys_pwrite(int fd, const void *buf, size_t n, uint64_t off)
{
	return SEAM(ssize_t, raw_pwrite(fd, buf, n, off));
}

static int raw_ioctl(int fd, unsigned long req, void *arg)
{
	FAULT_CALL();
	return ioctl(fd, req, arg);
}

int sys_ioctl(int fd, unsigned long req, void *arg)
{
	return SEAM(int, raw_ioctl(fd, req, arg));
}

static int raw_open(const char *path, int flags, mode_t mode)
{
	FAULT_CALL();
	return open(path, flags | O_CLOEXEC, mode);
}

int sys_open(const char *path, int flags, mode_t mode)
{
	return SEAM(int, raw_open(path, flags, mode));
}

static int raw_dup(int fd)
{
	FAULT_CALL();
	return fcntl(fd, F_DUPFD_CLOEXEC, 3);
}

int sys_dup(int fd)
{
	return SEAM(int, raw_dup(fd));
}

static int raw_memfd_create(const char *name, unsigned flags)
{
	FAULT_CALL();
	return memfd_create(name, flags | MFD_CLOEXEC);
}

int sys_memfd_create(const char *name, unsigned flags)
{
	return SEAM(int, raw_memfd_create(name, flags));
}

static int raw_ftruncate(int fd, off_t len)
{
	FAULT_CALL();
	return ftruncate(fd, len);
}

int sys_ftruncate(int fd, off_t len)
{
	return SEAM(int, raw_ftruncate(fd, len));
}

static int raw_fallocate(int fd, int mode, off_t off, off_t len)
{
	FAULT_CALL();
	return fallocate(fd, mode, off, len);
}

int sys_fallocate(int fd, int mode, off_t off, off_t len)
{
	return SEAM(int, raw_fallocate(fd, mode, off, len));
}

static int raw_mmap(size_t len, int prot, int flags, int fd, off_t off, void **addr)
{
	void *p;

	if (FAULT_HIT()) {
		errno = fault_errno();
		return -1;
	}
	p = mmap(NULL, len, prot, flags, fd, off);
	if (p == MAP_FAILED)
		return -1;
	*addr = p;
	return 0;
}

int sys_mmap(size_t len, int prot, int flags, int fd, off_t off, void **addr)
{
	*addr = NULL;
	return SEAM(int, raw_mmap(len, prot, flags, fd, off, addr));
}

static ssize_t raw_copy_file_range(int in, uint64_t *in_off, int out, uint64_t *out_off, size_t n)
{
	loff_t io = (loff_t)*in_off, oo = (loff_t)*out_off;
	ssize_t r;

	FAULT_RW(n);
	r = copy_file_range(in, &io, out, &oo, n, 0);
	*in_off = (uint64_t)io;
	*out_off = (uint64_t)oo;
	return r;
}

ssize_t sys_copy_file_range(int in, uint64_t *in_off, int out, uint64_t *out_off, size_t n)
{
	return SEAM(ssize_t, raw_copy_file_range(in, in_off, out, out_off, n));
}

static ssize_t raw_splice(int in, uint64_t *in_off, int out, uint64_t *out_off, size_t n)
{
	loff_t io = in_off ? (loff_t)*in_off : 0, oo = out_off ? (loff_t)*out_off : 0;
	ssize_t r;

	FAULT_RW(n);
	r = splice(in, in_off ? &io : NULL, out, out_off ? &oo : NULL, n, SPLICE_F_MOVE);
	if (in_off)
		*in_off = (uint64_t)io;
	if (out_off)
		*out_off = (uint64_t)oo;
	return r;
}

ssize_t sys_splice(int in, uint64_t *in_off, int out, uint64_t *out_off, size_t n)
{
	return SEAM(ssize_t, raw_splice(in, in_off, out, out_off, n));
}

static int raw_pipe(int pfd[2])
{
	FAULT_CALL();
	return pipe2(pfd, O_CLOEXEC);
}

int sys_pipe(int pfd[2])
{
	return SEAM(int, raw_pipe(pfd));
}

static int raw_fsync(int fd, bool data_only)
{
	FAULT_CALL();
	return data_only ? fdatasync(fd) : fsync(fd);
}

int sys_fsync(int fd, bool data_only)
{
	return SEAM(int, raw_fsync(fd, data_only));
}

int sys_uring_result(int res)
{
	if (res > 0 && FAULT_HIT())
		return fault_short_or_errno(res);
	return res;
}

int sys_pread_full(int fd, char *buf, size_t n, uint64_t off, size_t *moved)
{
	size_t done = 0;

	while (done < n) {
		ssize_t r = sys_pread(fd, buf + done, MIN(n - done, DMAIO_MAX_RW_COUNT), off + done);

		if (r < 0) {
			*moved = done;
			return (int)r;
		}
		if (r == 0)
			break;
		done += (size_t)r;
	}
	*moved = done;
	return 0;
}

int sys_pwrite_full(int fd, const char *buf, size_t n, uint64_t off, size_t *moved)
{
	size_t done = 0;
	unsigned zero = 0;

	while (done < n) {
		ssize_t r = sys_pwrite(fd, buf + done, MIN(n - done, DMAIO_MAX_RW_COUNT), off + done);

		if (r < 0) {
			*moved = done;
			return (int)r;
		}
		if (r == 0 && ++zero > 8) {
			*moved = done;
			return -EIO;
		}
		done += (size_t)r;
	}
	*moved = done;
	return 0;
}

/* ---- utilities ---------------------------------------------------------------------------- */
/* Fork generation: bumped in every child, so objects tell that they were made by another
 * process without a getpid() syscall per call.
 *
 * The handler is registered when the library is loaded, before any object can record a
 * generation. Registered on first use instead, it could miss a fork: glibc (2.36) runs the
 * prepare handlers without its handler lock, a handler registered meanwhile is not called in
 * that fork, and the library's prepare handler (api/ctx.c) waits there for the library's
 * locks. A thread that made the process's first engine and worker pool in that
 * wait stamped them with the generation the child kept, so the child took them as its own and
 * waited forever on the pool's lock, which that thread held at the fork (CI, the 6.12 VM;
 * tests/test-fork.c, test_fork_in_first_use). */
static unsigned fork_gen;

static void fork_child(void)
{
	__atomic_add_fetch(&fork_gen, 1, __ATOMIC_RELAXED);
}

__attribute__((constructor)) static void fork_hook(void)
{
	pthread_atfork(NULL, NULL, fork_child);
}

unsigned dmaio_fork_generation(void)
{
	return __atomic_load_n(&fork_gen, __ATOMIC_RELAXED);
}

/* clock's time in nanoseconds; 0 when it cannot be read */
static uint64_t clock_ns(clockid_t clock)
{
	struct timespec ts;

	if (clock_gettime(clock, &ts))
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t dmaio_now_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

uint64_t dmaio_thread_cpu_ns(void)
{
	return clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

long dmaio_page_size(void)
{
	static long ps;
	long v = __atomic_load_n(&ps, __ATOMIC_RELAXED);

	if (!v) {
		v = sysconf(_SC_PAGESIZE);
		__atomic_store_n(&ps, v, __ATOMIC_RELAXED);
	}
	return v;
}

uint64_t dmaio_read_sysfs_u64(const char *path, uint64_t dflt)
{
	char line[64];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return dflt;
	n = read(fd, line, sizeof(line) - 1);
	close(fd);
	if (n <= 0)
		return dflt;
	line[n] = 0;
	return strtoull(line, NULL, 10);
}

uint32_t dmaio_huge_page_size(void)
{
	static uint32_t cached;
	uint32_t kb = 0, c = __atomic_load_n(&cached, __ATOMIC_RELAXED);
	char line[128];
	FILE *f;

	if (c)
		return c;
	f = fopen("/proc/meminfo", "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Hugepagesize: %u kB", &kb) == 1)
			break;
	fclose(f);
	__atomic_store_n(&cached, kb * 1024u, __ATOMIC_RELAXED);
	return kb * 1024u;
}

static void log_va(struct dmaio_ctx *ctx, int level, const char *fmt, va_list ap)
{
	char line[512];
	int n;

	if (!ctx || !DMAIO_LOG_WANTS(ctx, level))
		return;
	n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
	if (n < 0)
		return;
	if ((size_t)n > sizeof(line) - 2)
		n = sizeof(line) - 2;
	pthread_mutex_lock(&ctx->log_lock);
	if (ctx->log_fn) {
		line[n] = '\0';
		ctx->log_fn(ctx->log_data, level, line);
	} else {
		line[n++] = '\n';
		/* one write per line so lines of concurrent threads do not interleave */
		(void)!write(STDERR_FILENO, "dmaio: ", 7);
		(void)!write(STDERR_FILENO, line, (size_t)n);
	}
	pthread_mutex_unlock(&ctx->log_lock);
}

void dmaio_log(struct dmaio_ctx *ctx, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_va(ctx, DMAIO_LOG_ERROR, fmt, ap);
	va_end(ap);
}

void dmaio_log_at(struct dmaio_ctx *ctx, int level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_va(ctx, level, fmt, ap);
	va_end(ap);
}

/* ---- a registered file during I/O ---------------------------------------------------------- */
/* The facts of a file that change while it is in use, kept up to date by the queue as requests
 * run: its size (re-read by a read past it, grown by a write) and the page-cache residency of a
 * range. What is probed once at open is the probe layer's (probe/file.c). */
void dmaio_file_grow(struct dmaio_file *f, uint64_t end)
{
	uint64_t cur = dmaio_file_size_load(f);

	while (cur < end && !__atomic_compare_exchange_n(&f->size, &cur, end, false,
							 __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

/* The size is what the kernel says now. Other threads change it meanwhile (a write completes
 * and grows it, another read re-reads it): what one of them stored after this one looked (the
 * value changed since) is newer, so the size the kernel gave here then only raises it, never
 * lowers it. A file shrunk by someone else is still seen shrunk (the value is unchanged). */
void dmaio_file_refresh_size(struct dmaio_file *f)
{
	uint64_t before = dmaio_file_size_load(f), sz = 0;
	struct stat st;

	if (f->is_blk) {
		if (ioctl(f->fd, BLKGETSIZE64, &sz))
			return;
	} else {
		if (fstat(f->fd, &st))
			return;
		sz = (uint64_t)st.st_size;
	}
	if (!__atomic_compare_exchange_n(&f->size, &before, sz, false, __ATOMIC_RELAXED,
					 __ATOMIC_RELAXED))
		dmaio_file_grow(f, sz);
}

/* cachestat(2) (6.5+), absent from older headers: one number on every architecture. Not a call
 * of the seam: a refusal is an answer ("the kernel cannot tell"), never retried or injected. */
#ifndef __NR_cachestat
#define __NR_cachestat 451
#endif
struct k_cachestat_range {
	uint64_t off, len;
};
struct k_cachestat {
	uint64_t nr_cache, nr_dirty, nr_writeback, nr_evicted, nr_recently_evicted;
};

/* Whether the kernel has cachestat(2): asked once per process, with a descriptor that cannot be
 * open (-EBADF: the syscall exists; -ENOSYS: 6.4 and older, or denied). */
int dmaio_has_cachestat(void)
{
	static int known; /* 0 not asked, DMAIO_CAP_YES / DMAIO_CAP_NO */
	int k = __atomic_load_n(&known, __ATOMIC_RELAXED);

	if (!k) {
		struct k_cachestat_range rg = { 0, 0 };
		struct k_cachestat cs;

		k = syscall(__NR_cachestat, -1, &rg, &cs, 0) && errno == EBADF ? DMAIO_CAP_YES
									   : DMAIO_CAP_NO;
		__atomic_store_n(&known, k, __ATOMIC_RELAXED);
	}
	return k;
}

/* Percentage of the pages of [off, off + len) that sit in the page cache, -errno when the kernel
 * cannot tell (no cachestat, or a file type it refuses: remembered, never asked again). One
 * syscall at most. */
int dmaio_file_cached_pct(struct dmaio_file *f, uint64_t off, uint64_t len)
{
	uint64_t ps = (uint64_t)dmaio_page_size(), pages, size;
	struct k_cachestat_range rg;
	struct k_cachestat cs;
	int known = __atomic_load_n(&f->cachestat, __ATOMIC_RELAXED);

	if (known < 0)
		return known;
	if (dmaio_has_cachestat() != DMAIO_CAP_YES)
		return -ENOSYS; /* no syscall spent per range on kernels without it */
	size = dmaio_file_size_load(f);
	if (off >= size)
		return -ENODATA;
	if (len > size - off)
		len = size - off;
	rg.off = off / ps * ps;
	rg.len = round_up_u64(off + len, ps) - rg.off;
	pages = rg.len / ps;
	if (syscall(__NR_cachestat, f->bfd, &rg, &cs, 0)) {
		int err = neg_errno();

		if (err == -ENOSYS || err == -EOPNOTSUPP || err == -EBADF)
			__atomic_store_n(&f->cachestat, err, __ATOMIC_RELAXED);
		return err;
	}
	return (int)(pages ? MIN(cs.nr_cache, pages) * 100 / pages : 0);
}

/* Bytes of the file dirty or under writeback in the page cache (what a sync of it has to write
 * or wait for), -errno when the kernel cannot tell (as dmaio_file_cached_pct()). */
int64_t dmaio_file_dirty_bytes(struct dmaio_file *f)
{
	struct k_cachestat_range rg = { 0, 0 }; /* the whole file */
	struct k_cachestat cs;
	int known = __atomic_load_n(&f->cachestat, __ATOMIC_RELAXED);

	if (known < 0)
		return known;
	if (dmaio_has_cachestat() != DMAIO_CAP_YES)
		return -ENOSYS;
	if (syscall(__NR_cachestat, f->bfd >= 0 ? f->bfd : f->fd, &rg, &cs, 0)) {
		int err = neg_errno();

		if (err == -ENOSYS || err == -EOPNOTSUPP || err == -EBADF)
			__atomic_store_n(&f->cachestat, err, __ATOMIC_RELAXED);
		return err;
	}
	return (int64_t)((cs.nr_dirty + cs.nr_writeback) * (uint64_t)dmaio_page_size());
}
