/* SPDX-License-Identifier: MIT */
/* The syscall seam: the calls into the kernel that can fail part-way. The fault-injection build
 * (-DDMAIO_FAULT_INJECTION, see fault.h) can make the Nth of them fail. */
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "dmaio-private.h"
#include "fault.h"

ssize_t sys_pread(int fd, void *buf, size_t n, uint64_t off)
{
	FAULT_RW(n);
	return pread(fd, buf, n, (off_t)off);
}

ssize_t sys_pwrite(int fd, const void *buf, size_t n, uint64_t off)
{
	FAULT_RW(n);
	return pwrite(fd, buf, n, (off_t)off);
}

int sys_ioctl(int fd, unsigned long req, void *arg)
{
	FAULT_CALL();
	return ioctl(fd, req, arg);
}

/* Calls that a signal (or a busy resource) may interrupt are retried a bounded number of times. */
#define RETRY_TRANSIENT(call)                                                                     \
	({                                                                                        \
		int r_, n_ = 0;                                                                   \
		while ((r_ = (call)) < 0 && (errno == EINTR || errno == EAGAIN) && ++n_ < 100)    \
			;                                                                         \
		r_;                                                                               \
	})

static int raw_open(const char *path, int flags, mode_t mode)
{
	FAULT_CALL();
	return open(path, flags | O_CLOEXEC, mode);
}

int sys_open(const char *path, int flags, mode_t mode)
{
	return RETRY_TRANSIENT(raw_open(path, flags, mode));
}

static int raw_memfd_create(const char *name, unsigned flags)
{
	FAULT_CALL();
	return memfd_create(name, flags | MFD_CLOEXEC);
}

int sys_memfd_create(const char *name, unsigned flags)
{
	return RETRY_TRANSIENT(raw_memfd_create(name, flags));
}

static int raw_ftruncate(int fd, off_t len)
{
	FAULT_CALL();
	return ftruncate(fd, len);
}

int sys_ftruncate(int fd, off_t len)
{
	return RETRY_TRANSIENT(raw_ftruncate(fd, len));
}

static int raw_fallocate(int fd, int mode, off_t off, off_t len)
{
	FAULT_CALL();
	return fallocate(fd, mode, off, len);
}

int sys_fallocate(int fd, int mode, off_t off, off_t len)
{
	return RETRY_TRANSIENT(raw_fallocate(fd, mode, off, len));
}

static void *raw_mmap(size_t len, int prot, int flags, int fd, off_t off)
{
	if (FAULT_HIT()) {
		errno = fault_errno();
		return MAP_FAILED;
	}
	return mmap(NULL, len, prot, flags, fd, off);
}

void *sys_mmap(size_t len, int prot, int flags, int fd, off_t off, int *err)
{
	void *p;
	int n = 0;

	while ((p = raw_mmap(len, prot, flags, fd, off)) == MAP_FAILED &&
	       (errno == EINTR || errno == EAGAIN) && ++n < 100)
		;
	if (p == MAP_FAILED) {
		*err = neg_errno();
		return NULL;
	}
	*err = 0;
	return p;
}

ssize_t sys_copy_file_range(int in, uint64_t *in_off, int out, uint64_t *out_off, size_t n)
{
	loff_t io = (loff_t)*in_off, oo = (loff_t)*out_off;
	ssize_t r;

	FAULT_RW(n);
	r = copy_file_range(in, &io, out, &oo, n, 0);
	*in_off = (uint64_t)io;
	*out_off = (uint64_t)oo;
	return r;
}

ssize_t sys_splice(int in, uint64_t *in_off, int out, uint64_t *out_off, size_t n)
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

int sys_uring_result(int res)
{
	if (res > 0 && FAULT_HIT())
		return fault_short_or_errno(res);
	return res;
}

int dmaio_pread_full(int fd, char *buf, size_t n, uint64_t off, size_t *moved)
{
	size_t done = 0;

	while (done < n) {
		ssize_t r = sys_pread(fd, buf + done, MIN(n - done, DMAIO_MAX_RW_COUNT), off + done);

		if (r < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			*moved = done;
			return neg_errno();
		}
		if (r == 0)
			break;
		done += (size_t)r;
	}
	*moved = done;
	return 0;
}

int dmaio_pwrite_full(int fd, const char *buf, size_t n, uint64_t off, size_t *moved)
{
	size_t done = 0;
	unsigned zero = 0;

	while (done < n) {
		ssize_t r = sys_pwrite(fd, buf + done, MIN(n - done, DMAIO_MAX_RW_COUNT), off + done);

		if (r < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			*moved = done;
			return neg_errno();
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

uint64_t dmaio_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
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
