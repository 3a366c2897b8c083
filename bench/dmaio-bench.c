// SPDX-License-Identifier: MIT
/*
 * dmaio-bench: bandwidth and CPU cost of every libdmaio data path against baselines written here
 * (O_DIRECT io_uring into plain memory, buffered read() into plain memory, and the naive buffered
 * read() into the dma-buf mapping), allocation time per provider against the raw kernel loops, and
 * the time to map and touch a large buffer. Cases are interleaved round-robin over the runs and
 * medians reported, so drift on a noisy machine cancels. The workloads of the asynchronous API
 * (--tests ranges,files,frames) are in workloads-queue.c; bench.h is what the two share.
 */
#include "bench.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <liburing.h>
#include <limits.h>
#include <linux/dma-heap.h>
#include <linux/udmabuf.h>
#include <math.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define MAX_METHODS 32
#define MAX_PROVS 24

/* DRM uAPI (drm.h, drm_mode.h): the few ioctls of the raw DRM allocation loop */
struct bench_drm_create_dumb {
	uint32_t height, width, bpp, flags;
	uint32_t handle, pitch;
	uint64_t size;
};
struct bench_drm_prime_handle {
	uint32_t handle, flags;
	int32_t fd;
};
struct bench_drm_gem_close {
	uint32_t handle, pad;
};
#define BENCH_DRM_IOCTL_GEM_CLOSE _IOW('d', 0x09, struct bench_drm_gem_close)
#define BENCH_DRM_IOCTL_PRIME_HANDLE_TO_FD _IOWR('d', 0x2d, struct bench_drm_prime_handle)
#define BENCH_DRM_IOCTL_MODE_CREATE_DUMB _IOWR('d', 0xB2, struct bench_drm_create_dumb)

/* ------------------------------------------------------------------------------------------- */
/* options and state */

static const char *dir_name[NDIRS] = { "read", "write" };
static const char *mode_name[NMODES] = { "cold", "warm" };

enum mkind { M_LIB, M_URING, M_URING_SHM, M_BUFFERED, M_NAIVE };

struct method {
	char name[64];
	enum mkind kind;
	int path;               /* M_LIB: the forced path, DMAIO_PATH_AUTO for the library's choice */
	int buf;                /* M_LIB: index into lbufs[] */
	bool ok[NDIRS];         /* can run in this direction */
	char note[NDIRS][256];  /* why not, or what it chose */
};

struct result {
	int n;
	double mbps[MAX_RUNS];
	double cpu[MAX_RUNS];   /* CPU seconds per GiB */
	uint64_t path_bytes[DMAIO_PATH_COUNT];
	uint64_t fallbacks;
	uint64_t unaligned;
	int err;
};

struct opts o = {
	.runs = 5,
	.chunk = 4 * MIB,
	.qd = 8,
	.drop_caches = true,
	.verify = true,
	.fresh = true,
	.alloc_count = 32,
	.alloc_size = 32 * MIB,
	.mmap_size = 512 * MIB,
};

static char test_path[PATH_MAX];
static bool test_created;

/* I/O state */
static int fd_buf = -1;      /* O_RDWR, page cache: library, buffered and naive cases */
static int fd_dir = -1;      /* O_RDWR | O_DIRECT: io_uring baseline */
static char *plain;          /* posix_memalign'd memory of the baselines */
static char *shm;            /* a shared memfd mapping: the second O_DIRECT baseline */
static uint64_t plain_size;  /* size of both */
/* the library's buffers, one per --heap; all dbuf_size bytes. lbufs[0] also serves base:naive */
struct lbuf {
	struct dmaio_buf *b;
	void *map;           /* dmaio_map() of b, NULL if it cannot be mapped */
};
static struct lbuf lbufs[MAX_LBUFS];
static int nlbufs;
static size_t dbuf_size;
static struct io_uring ring;
static bool ring_ok, ring_fixed;
static char ring_note[256];
static uint64_t file_size;
bool is_root;
static bool drop_caches_failed;
static int cold_warned;

static struct method methods[MAX_METHODS];
static int nmethods;
static struct result *results; /* [size][dir][mode][method] */

static struct result *res_at(int s, int d, int m, int k)
{
	return &results[((s * NDIRS + d) * NMODES + m) * MAX_METHODS + k];
}

/* notes printed with the results */
static char *notes[128];
static int nnotes;

void note(const char *fmt, ...)
{
	va_list ap;
	char *s;
	int i;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	if (!s)
		return;
	for (i = 0; i < nnotes; i++) {
		if (!strcmp(notes[i], s)) {
			free(s);
			return;
		}
	}
	if (nnotes < (int)(sizeof(notes) / sizeof(notes[0])))
		notes[nnotes++] = s;
	else
		free(s);
}

void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, PROG ": ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	if (test_created && !o.keep)
		unlink(test_path);
	wl_unlink_files();
	exit(1);
}

static void on_signal(int sig)
{
	if (test_created && !o.keep)
		unlink(test_path);
	wl_unlink_files();
	signal(sig, SIG_DFL);
	raise(sig);
}

/* ------------------------------------------------------------------------------------------- */
/* helpers */

uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

double cpu_now(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
	       ru.ru_stime.tv_usec / 1e6;
}

/* A progress line only on an interactive terminal: not on a serial or system console, which is
 * usually a log (a VM's output captured by its host). */
bool interactive(int fd)
{
	const char *t;

	if (!isatty(fd))
		return false;
	t = ttyname(fd);
	return !t || (strcmp(t, "/dev/console") && strncmp(t, "/dev/ttyS", 9));
}

const char *errname(int err)
{
	static char buf[4][24];
	static int slot;

	if (err < 0)
		err = -err;
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 32))
	if (strerrorname_np(err))
		return strerrorname_np(err);
#endif
	slot = (slot + 1) % 4;
	snprintf(buf[slot], sizeof(buf[slot]), "errno %d", err);
	return buf[slot];
}

void size_str(char *out, size_t len, uint64_t v)
{
	if (v >= GIB && v % GIB == 0)
		snprintf(out, len, "%" PRIu64 "G", v / GIB);
	else if (v >= MIB && v % MIB == 0)
		snprintf(out, len, "%" PRIu64 "M", v / MIB);
	else if (v >= KIB && v % KIB == 0)
		snprintf(out, len, "%" PRIu64 "K", v / KIB);
	else
		snprintf(out, len, "%" PRIu64, v);
}

int parse_size(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;
	uint64_t mul = 1;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		return -EINVAL;
	switch (*end) {
	case 'k': case 'K': mul = KIB; end++; break;
	case 'm': case 'M': mul = MIB; end++; break;
	case 'g': case 'G': mul = GIB; end++; break;
	case '\0': break;
	default: return -EINVAL;
	}
	if (*end == 'i' && end[1] == 'B')
		end += 2;
	else if (*end == 'B')
		end++;
	if (*end || v == 0 || v > UINT64_MAX / mul)
		return -EINVAL;
	*out = v * mul;
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

double median(const double *v, int n)
{
	double tmp[MAX_RUNS];

	if (n <= 0)
		return NAN;
	memcpy(tmp, v, sizeof(double) * (size_t)n);
	qsort(tmp, (size_t)n, sizeof(double), cmp_double);
	return n % 2 ? tmp[n / 2] : (tmp[n / 2 - 1] + tmp[n / 2]) / 2;
}

double vmin(const double *v, int n)
{
	double m = INFINITY;
	int i;

	for (i = 0; i < n; i++)
		if (v[i] < m)
			m = v[i];
	return n ? m : NAN;
}

double vmax(const double *v, int n)
{
	double m = -INFINITY;
	int i;

	for (i = 0; i < n; i++)
		if (v[i] > m)
			m = v[i];
	return n ? m : NAN;
}

uint64_t mem_available(void)
{
	FILE *f = fopen("/proc/meminfo", "re");
	char line[256];
	unsigned long long kb = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1)
			break;
	fclose(f);
	return (uint64_t)kb * KIB;
}

void fill_pattern(void *p, uint64_t file_off, size_t len)
{
	uint64_t *w = p;
	size_t i;

	for (i = 0; i < len / 8; i++)
		w[i] = pattern_word(file_off + i * 8);
}

/* -1 when p holds the pattern of [file_off, file_off + len), else the first bad offset */
int64_t check_pattern(const void *p, uint64_t file_off, size_t len)
{
	const uint64_t *w = p;
	size_t i;

	for (i = 0; i < len / 8; i++)
		if (w[i] != pattern_word(file_off + i * 8))
			return (int64_t)(file_off + i * 8);
	return -1;
}

ssize_t full_pread(int fd, void *p, size_t len, uint64_t off)
{
	size_t done = 0;

	while (done < len) {
		ssize_t r = pread(fd, (char *)p + done, len - done, (off_t)(off + done));

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			break;
		done += (size_t)r;
	}
	return (ssize_t)done;
}

ssize_t full_pwrite(int fd, const void *p, size_t len, uint64_t off)
{
	size_t done = 0;

	while (done < len) {
		ssize_t r = pwrite(fd, (const char *)p + done, len - done, (off_t)(off + done));

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		done += (size_t)r;
	}
	return (ssize_t)done;
}

/* ------------------------------------------------------------------------------------------- */
/* cache state */

static double resident_fraction(int fd, uint64_t len)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), n = (len + page - 1) / page, i, res = 0;
	unsigned char *vec;
	void *m;

	m = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED)
		return -1;
	vec = malloc(n);
	if (!vec || mincore(m, len, vec) < 0) {
		free(vec);
		munmap(m, len);
		return -1;
	}
	for (i = 0; i < n; i++)
		res += vec[i] & 1;
	free(vec);
	munmap(m, len);
	return (double)res / (double)n;
}

void make_cold_fds(const int *fds, const uint64_t *lens, int n)
{
	double frac;
	int i;

	for (i = 0; i < n; i++) {
		fsync(fds[i]);
		posix_fadvise(fds[i], 0, 0, POSIX_FADV_DONTNEED);
	}
	if (o.drop_caches && is_root && !drop_caches_failed) {
		int fd = open("/proc/sys/vm/drop_caches", O_WRONLY | O_CLOEXEC);

		if (fd < 0 || write(fd, "1", 1) != 1) {
			drop_caches_failed = true;
			note("cold: writing /proc/sys/vm/drop_caches failed (%s); only posix_fadvise(DONTNEED) used",
			     strerror(errno));
		}
		if (fd >= 0)
			close(fd);
	}
	for (i = 0; i < n; i++) {
		frac = resident_fraction(fds[i], lens[i]);
		if (frac > 0.02 && cold_warned++ < 3)
			note("cold: %.0f%% of the range stayed in the page cache after dropping it", frac * 100);
	}
}

static void make_cold(uint64_t len)
{
	make_cold_fds(&fd_buf, &len, 1);
}

static void make_warm(uint64_t len)
{
	/* read the range through the page cache; plain memory is scratch here */
	uint64_t off;

	for (off = 0; off < len; off += plain_size) {
		size_t n = (size_t)(len - off < plain_size ? len - off : plain_size);

		full_pread(fd_buf, plain, n, off);
	}
}

/* ------------------------------------------------------------------------------------------- */
/* the cases */

struct uring_req {
	uint64_t off;
	size_t len;
};

/* O_DIRECT io_uring into registered memory: o.chunk requests, o.qd in flight */
static int run_uring(int dir, uint64_t size, char *mem, int base_index)
{
	struct uring_req *req = calloc(o.qd, sizeof(*req));
	unsigned *free_slots = calloc(o.qd, sizeof(*free_slots));
	unsigned nfree = o.qd, inflight = 0, i;
	uint64_t next = 0, done = 0;
	int ret = 0;

	if (!req || !free_slots) {
		free(req);
		free(free_slots);
		return -ENOMEM;
	}
	for (i = 0; i < o.qd; i++)
		free_slots[i] = i;
	while (done < size) {
		struct io_uring_cqe *cqe;
		bool queued = false;

		while (nfree && next < size) {
			struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
			unsigned slot;
			uint64_t piece_end;
			size_t len;

			if (!sqe)
				break;
			slot = free_slots[--nfree];
			len = (size_t)(size - next < o.chunk ? size - next : o.chunk);
			piece_end = (next / URING_PIECE + 1) * URING_PIECE;
			if (next + len > piece_end)
				len = (size_t)(piece_end - next);
			req[slot].off = next;
			req[slot].len = len;
			if (ring_fixed && dir == DIR_READ)
				io_uring_prep_read_fixed(sqe, fd_dir, mem + next, (unsigned)len, next,
							 base_index + (int)(next / URING_PIECE));
			else if (ring_fixed)
				io_uring_prep_write_fixed(sqe, fd_dir, mem + next, (unsigned)len, next,
							  base_index + (int)(next / URING_PIECE));
			else if (dir == DIR_READ)
				io_uring_prep_read(sqe, fd_dir, mem + next, (unsigned)len, next);
			else
				io_uring_prep_write(sqe, fd_dir, mem + next, (unsigned)len, next);
			io_uring_sqe_set_data64(sqe, slot);
			next += len;
			inflight++;
			queued = true;
		}
		if (queued) {
			ret = io_uring_submit(&ring);
			if (ret < 0)
				break;
		}
		ret = io_uring_wait_cqe(&ring, &cqe);
		if (ret < 0)
			break;
		do {
			unsigned slot = (unsigned)io_uring_cqe_get_data64(cqe);
			int res = cqe->res;

			io_uring_cqe_seen(&ring, cqe);
			inflight--;
			if (res == -EAGAIN || res == -EINTR || (res > 0 && (size_t)res < req[slot].len)) {
				/* reissue the rest */
				struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
				uint64_t off = req[slot].off + (uint64_t)(res > 0 ? res : 0);
				size_t len = req[slot].len - (size_t)(res > 0 ? res : 0);

				if (res > 0)
					done += (uint64_t)res;
				if (!sqe) {
					ret = -EBUSY;
					goto out;
				}
				req[slot].off = off;
				req[slot].len = len;
				if (dir == DIR_READ)
					io_uring_prep_read(sqe, fd_dir, mem + off, (unsigned)len, off);
				else
					io_uring_prep_write(sqe, fd_dir, mem + off, (unsigned)len, off);
				io_uring_sqe_set_data64(sqe, slot);
				inflight++;
				ret = io_uring_submit(&ring);
				if (ret < 0)
					goto out;
			} else if (res < 0) {
				ret = res;
				goto out;
			} else if (res == 0) {
				ret = -ENODATA;
				goto out;
			} else {
				done += (uint64_t)res;
				free_slots[nfree++] = slot;
			}
		} while (io_uring_peek_cqe(&ring, &cqe) == 0);
		ret = 0;
	}
out:
	/* drain what is still in flight after an error */
	while (inflight) {
		struct io_uring_cqe *cqe;

		if (io_uring_wait_cqe(&ring, &cqe) < 0)
			break;
		io_uring_cqe_seen(&ring, cqe);
		inflight--;
	}
	free(req);
	free(free_slots);
	if (ret < 0)
		return ret;
	if (dir == DIR_WRITE && fdatasync(fd_dir) < 0)
		return -errno;
	return 0;
}

static int run_buffered(int dir, uint64_t size)
{
	ssize_t r;

	if (dir == DIR_READ)
		r = full_pread(fd_buf, plain, (size_t)size, 0);
	else
		r = full_pwrite(fd_buf, plain, (size_t)size, 0);
	if (r < 0)
		return (int)r;
	if ((uint64_t)r != size)
		return -ENODATA;
	if (dir == DIR_WRITE && fdatasync(fd_buf) < 0)
		return -errno;
	return 0;
}

static int run_naive(int dir, uint64_t size)
{
	uint64_t off;
	int ret;

	for (off = 0; off < size; off += dbuf_size) {
		size_t n = (size_t)(size - off < dbuf_size ? size - off : dbuf_size);
		ssize_t r;

		ret = dmaio_sync_begin(lbufs[0].b, dir == DIR_READ ? DMAIO_SYNC_WRITE : DMAIO_SYNC_READ);
		if (ret < 0)
			return ret;
		if (dir == DIR_READ)
			r = full_pread(fd_buf, lbufs[0].map, n, off);
		else
			r = full_pwrite(fd_buf, lbufs[0].map, n, off);
		ret = dmaio_sync_end(lbufs[0].b, dir == DIR_READ ? DMAIO_SYNC_WRITE : DMAIO_SYNC_READ);
		if (r < 0)
			return (int)r;
		if (ret < 0)
			return ret;
		if ((size_t)r != n)
			return -ENODATA;
	}
	if (dir == DIR_WRITE && fdatasync(fd_buf) < 0)
		return -errno;
	return 0;
}

static int run_lib(const struct method *m, int dir, uint64_t size, struct result *res)
{
	unsigned flags = m->path == DMAIO_PATH_AUTO ? 0 : DMAIO_RW_PATH(m->path) | DMAIO_RW_NO_FALLBACK;
	struct dmaio_buf *dbuf = lbufs[m->buf].b;
	uint64_t off;

	for (off = 0; off < size; off += dbuf_size) {
		size_t n = (size_t)(size - off < dbuf_size ? size - off : dbuf_size);
		struct dmaio_xfer x = { 0 };
		ssize_t r;

		if (dir == DIR_READ)
			r = dmaio_read_file_ex(dbuf, 0, fd_buf, (off_t)off, n, flags, &x);
		else
			r = dmaio_write_file_ex(dbuf, 0, fd_buf, (off_t)off, n, flags, &x);
		if (res) {
			if (x.path >= 0 && x.path < DMAIO_PATH_COUNT)
				res->path_bytes[x.path] += x.done;
			res->fallbacks += x.fallbacks;
			res->unaligned += x.unaligned;
		}
		if (r < 0)
			return (int)r;
		if ((size_t)r != n)
			return -ENODATA;
	}
	if (dir == DIR_WRITE && fdatasync(fd_buf) < 0)
		return -errno;
	return 0;
}

static int run_case(const struct method *m, int dir, uint64_t size, struct result *res)
{
	switch (m->kind) {
	case M_LIB:
		return run_lib(m, dir, size, res);
	case M_URING:
		return run_uring(dir, size, plain, 0);
	case M_URING_SHM:
		return run_uring(dir, size, shm, (int)((plain_size + URING_PIECE - 1) / URING_PIECE));
	case M_BUFFERED:
		return run_buffered(dir, size);
	case M_NAIVE:
		return run_naive(dir, size);
	}
	return -EINVAL;
}

/* where the bytes of a method land (reads) or come from (writes) */
static void *method_mem(const struct method *m)
{
	switch (m->kind) {
	case M_URING:
	case M_BUFFERED:
		return plain;
	case M_URING_SHM:
		return shm;
	case M_LIB:
		return lbufs[m->buf].map;
	case M_NAIVE:
		break;
	}
	return lbufs[0].map;
}

/* the library buffer whose mapping mem is (sync_begin/end around CPU access), or NULL */
static struct dmaio_buf *map_owner(const void *mem)
{
	for (int i = 0; i < nlbufs; i++)
		if (mem && mem == lbufs[i].map)
			return lbufs[i].b;
	return NULL;
}

/* Before timing: move a small range with each method and check the bytes, both directions. */
static void verify_methods(void)
{
	size_t len = (size_t)(4 * MIB < dbuf_size ? 4 * MIB : dbuf_size);
	char *tmp;
	int k, d;

	if (len > file_size)
		len = (size_t)file_size;
	tmp = malloc(len);
	if (!tmp)
		die("out of memory");
	for (k = 0; k < nmethods; k++) {
		struct method *m = &methods[k];
		void *mem = method_mem(m);
		struct dmaio_buf *owner = map_owner(mem);

		for (d = 0; d < NDIRS; d++) {
			int64_t bad;
			int ret;

			if (!m->ok[d] || !o.dirs[d])
				continue;
			if (d == DIR_READ) {
				/* poison the destination, read, check */
				if (mem) {
					if (owner)
						dmaio_sync_begin(owner, DMAIO_SYNC_WRITE);
					memset(mem, 0xa5, len);
					if (owner)
						dmaio_sync_end(owner, DMAIO_SYNC_WRITE);
				}
				ret = run_case(m, DIR_READ, len, NULL);
				if (ret < 0)
					goto fail;
				if (!mem)
					continue;
				if (owner)
					dmaio_sync_begin(owner, DMAIO_SYNC_READ);
				bad = check_pattern(mem, 0, len);
				if (owner)
					dmaio_sync_end(owner, DMAIO_SYNC_READ);
				if (bad >= 0) {
					snprintf(m->note[d], sizeof(m->note[d]),
						 "verification failed: wrong bytes at offset %" PRId64 " after a read",
						 bad);
					m->ok[d] = false;
					fprintf(stderr, PROG ": %s read: %s\n", m->name, m->note[d]);
				}
			} else {
				/* the source holds the pattern of [0, len) (from the file); write it, re-read */
				if (mem) {
					if (owner)
						dmaio_sync_begin(owner, DMAIO_SYNC_WRITE);
					fill_pattern(mem, 0, len);
					if (owner)
						dmaio_sync_end(owner, DMAIO_SYNC_WRITE);
				} else {
					/* no mapping: load the source through the library itself */
					struct method load = { .kind = M_LIB, .path = DMAIO_PATH_AUTO,
							       .buf = m->kind == M_LIB ? m->buf : 0 };

					ret = run_lib(&load, DIR_READ, len, NULL);
					if (ret < 0)
						goto fail;
				}
				/* scramble the file range first so a write that does nothing is caught */
				memset(tmp, 0x5a, len);
				if (full_pwrite(fd_buf, tmp, len, 0) != (ssize_t)len || fdatasync(fd_buf) < 0)
					die("scramble the test file: %s", strerror(errno));
				posix_fadvise(fd_buf, 0, len, POSIX_FADV_DONTNEED);
				ret = run_case(m, DIR_WRITE, len, NULL);
				if (ret < 0) {
					/* restore the pattern for the next methods */
					fill_pattern(tmp, 0, len);
					full_pwrite(fd_buf, tmp, len, 0);
					goto fail;
				}
				posix_fadvise(fd_buf, 0, len, POSIX_FADV_DONTNEED);
				if (full_pread(fd_buf, tmp, len, 0) != (ssize_t)len)
					die("re-read the test file: %s", strerror(errno));
				bad = check_pattern(tmp, 0, len);
				if (bad >= 0) {
					snprintf(m->note[d], sizeof(m->note[d]),
						 "verification failed: wrong bytes at offset %" PRId64 " after a write",
						 bad);
					m->ok[d] = false;
					fprintf(stderr, PROG ": %s write: %s\n", m->name, m->note[d]);
					fill_pattern(tmp, 0, len);
					full_pwrite(fd_buf, tmp, len, 0);
					fdatasync(fd_buf);
				}
			}
			continue;
fail:
			snprintf(m->note[d], sizeof(m->note[d]), "failed: %s (%s)", strerror(-ret), errname(ret));
			m->ok[d] = false;
			fprintf(stderr, PROG ": %s %s: %s\n", m->name, dir_name[d], m->note[d]);
		}
	}
	free(tmp);
}

/* ------------------------------------------------------------------------------------------- */
/* set-up of the I/O tests */

static void add_method(const char *name, enum mkind kind, int path, int buf)
{
	struct method *m;

	if (nmethods >= MAX_METHODS)
		return;
	m = &methods[nmethods++];
	snprintf(m->name, sizeof(m->name), "%s", name);
	m->kind = kind;
	m->path = path;
	m->buf = buf;
	m->ok[DIR_READ] = m->ok[DIR_WRITE] = true;
}

/* Register the plain memory and the shm mapping with the ring, in pieces of at most 1 GiB. */
static int register_plain(void)
{
	unsigned n = (unsigned)((plain_size + URING_PIECE - 1) / URING_PIECE), j;
	struct iovec *iov = calloc(2 * n, sizeof(*iov));
	int ret;

	if (!iov)
		return -ENOMEM;
	for (j = 0; j < n; j++) {
		uint64_t off = (uint64_t)j * URING_PIECE;
		size_t len = (size_t)(plain_size - off < URING_PIECE ? plain_size - off : URING_PIECE);

		iov[j].iov_base = plain + off;
		iov[j].iov_len = len;
		iov[n + j].iov_base = shm + off;
		iov[n + j].iov_len = len;
	}
	ret = io_uring_register_buffers(&ring, iov, 2 * n);
	free(iov);
	return ret;
}

static char *alloc_shm(uint64_t size)
{
	int fd = memfd_create("dmaio-bench-baseline", MFD_CLOEXEC);
	void *p;

	if (fd < 0)
		die("memfd_create: %s", strerror(errno));
	if (ftruncate(fd, (off_t)size) < 0)
		die("ftruncate a %" PRIu64 " MiB memfd: %s", size / MIB, strerror(errno));
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		die("mmap a %" PRIu64 " MiB memfd: %s", size / MIB, strerror(errno));
	memset(p, 0, size);
	return p;
}

const char *heap_desc(int i)
{
	return o.heaps[i] ? o.heaps[i] : "the default provider";
}

int alloc_dbuf(int i, size_t len, struct dmaio_buf **b, void **map)
{
	int ret = dmaio_alloc(NULL, o.heaps[i], len, o.heaps[i] ? 0 : DMAIO_ALLOC_ALLOW_NON_DMABUF, b);

	if (ret < 0)
		return ret;
	*map = NULL;
	if (dmaio_map(*b, map) < 0) {
		*map = NULL;
	} else {
		/* touch the mapping once, as a user would have before the transfer */
		dmaio_sync_begin(*b, DMAIO_SYNC_WRITE);
		memset(*map, 0, len);
		dmaio_sync_end(*b, DMAIO_SYNC_WRITE);
	}
	return 0;
}

/*
 * One kernel copy (pread of the test file) into all of every buffer that has a CPU mapping. On
 * this host the first copy_to_user() into memory costs about 2 ms per MiB even when user space
 * has already written every page (plain, memfd and dma-buf memory alike, measured with a bare
 * pread loop); later copies run at memory speed. Unprimed, that cost lands on whichever
 * CPU-copy method happens to run first after new buffers, a different one each run.
 */
static void prime_buffers(void)
{
	size_t n = (size_t)(file_size < dbuf_size ? file_size : dbuf_size);

	if (plain)
		full_pread(fd_buf, plain, (size_t)file_size, 0);
	if (shm)
		full_pread(fd_buf, shm, (size_t)file_size, 0);
	for (int i = 0; i < nlbufs; i++) {
		if (!lbufs[i].map)
			continue;
		dmaio_sync_begin(lbufs[i].b, DMAIO_SYNC_WRITE);
		full_pread(fd_buf, lbufs[i].map, n, 0);
		dmaio_sync_end(lbufs[i].b, DMAIO_SYNC_WRITE);
	}
}

/*
 * New memory for both the baselines and the library before a run: where the pages land in
 * physical memory changes the bandwidth of this (virtual) machine by up to 2x, a fixed bias for a
 * whole run otherwise. The new buffers are allocated before the old ones are freed, so they get
 * other pages; which one is allocated first alternates.
 */
static void fresh_buffers(int run)
{
	struct lbuf nb[MAX_LBUFS] = { { 0 } };
	char *np = NULL, *ns = NULL;
	int i, k, d, step;
	uint64_t avail = mem_available();

	/* short of memory for both sets at once: free first (the pages still get reshuffled) */
	if (avail && avail < 4 * plain_size + (uint64_t)nlbufs * dbuf_size) {
		if (ring_fixed)
			io_uring_unregister_buffers(&ring);
		free(plain);
		plain = NULL;
		munmap(shm, plain_size);
		shm = NULL;
		for (i = 0; i < nlbufs; i++) {
			dmaio_free(lbufs[i].b);
			lbufs[i].b = NULL;
			lbufs[i].map = NULL;
		}
	}

	for (step = 0; step < 3; step++) {
		int which = (step + run) % 3;

		if (which == 0) {
			if (posix_memalign((void **)&np, 2 * MIB, plain_size))
				die("cannot allocate %" PRIu64 " MiB of plain memory", plain_size / MIB);
			memset(np, 0, plain_size);
		} else if (which == 1) {
			ns = alloc_shm(plain_size);
		} else {
			for (i = 0; i < nlbufs; i++) {
				int ret = alloc_dbuf(i, dbuf_size, &nb[i].b, &nb[i].map);

				if (ret < 0)
					die("allocate %" PRIu64 " MiB from %s again: %s", (uint64_t)dbuf_size / MIB,
					    heap_desc(i), strerror(-ret));
			}
		}
	}
	if (ring_fixed && plain)
		io_uring_unregister_buffers(&ring);
	free(plain);
	plain = np;
	if (shm)
		munmap(shm, plain_size);
	shm = ns;
	if (ring_fixed && register_plain() < 0)
		die("registering the plain memory again failed");
	for (i = 0; i < nlbufs; i++) {
		dmaio_free(lbufs[i].b);
		lbufs[i] = nb[i];
	}
	/* first-use costs of the new buffers (first kernel copy, registration) stay out of the
	 * timing */
	prime_buffers();
	for (k = 0; k < nmethods; k++) {
		for (d = 0; d < NDIRS; d++)
			if (methods[k].ok[d] && o.dirs[d] && methods[k].kind != M_BUFFERED)
				break;
		if (d < NDIRS)
			run_case(&methods[k], d, 4 * MIB < dbuf_size ? 4 * MIB : dbuf_size, NULL);
	}
}

static void setup_io(void)
{
	struct dmaio_file_info fi;
	struct statfs sfs;
	uint64_t max = 0, avail;
	int i, k, d, ret, p;
	char sz[32];
	size_t len;

	for (i = 0; i < o.nsizes; i++) {
		if (o.sizes[i] % 4096) {
			size_str(sz, sizeof(sz), o.sizes[i]);
			die("size %s is not a multiple of 4 KiB (needed by O_DIRECT)", sz);
		}
		if (o.sizes[i] > max)
			max = o.sizes[i];
	}
	/* memory: plain memory + shm + the buffer + the file's page cache (+ the next run's buffers) */
	avail = mem_available();
	while (avail && max > 4 * MIB && 4 * max > avail * 9 / 10) {
		int j = 0;

		size_str(sz, sizeof(sz), max);
		note("size %s skipped: needs about %" PRIu64 " MiB of memory, %" PRIu64 " MiB available", sz,
		     4 * max / MIB, avail / MIB);
		for (i = 0; i < o.nsizes; i++)
			if (o.sizes[i] != max)
				o.sizes[j++] = o.sizes[i];
		o.nsizes = j;
		max = 0;
		for (i = 0; i < o.nsizes; i++)
			if (o.sizes[i] > max)
				max = o.sizes[i];
	}
	if (!o.nsizes)
		die("no size left to run");
	file_size = max;

	/* the test file, filled with a position-encoded pattern */
	snprintf(test_path, sizeof(test_path), "%s/dmaio-bench.%d.tmp", o.dir, (int)getpid());
	fd_buf = open(test_path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd_buf < 0)
		die("create %s: %s", test_path, strerror(errno));
	test_created = true;
	if (fstatfs(fd_buf, &sfs) == 0 && (uint64_t)sfs.f_bavail * (uint64_t)sfs.f_bsize < max + 64 * MIB)
		die("%s: not enough free space for a %" PRIu64 " MiB test file", o.dir, max / MIB);

	plain_size = max;
	if (posix_memalign((void **)&plain, 2 * MIB, plain_size))
		die("cannot allocate %" PRIu64 " MiB of plain memory", plain_size / MIB);
	fill_pattern(plain, 0, plain_size);
	shm = alloc_shm(plain_size);
	if (full_pwrite(fd_buf, plain, plain_size, 0) != (ssize_t)plain_size || fsync(fd_buf) < 0)
		die("write %s: %s", test_path, strerror(errno));

	/* the O_DIRECT io_uring baseline */
	fd_dir = open(test_path, O_RDWR | O_DIRECT | O_CLOEXEC);
	if (fd_dir < 0) {
		snprintf(ring_note, sizeof(ring_note), "O_DIRECT open of %.120s failed (%s): use --dir on a "
			 "block filesystem", test_path, strerror(errno));
	} else {
		ret = io_uring_queue_init(o.qd < 4 ? 4 : o.qd, &ring, 0);
		if (ret < 0) {
			snprintf(ring_note, sizeof(ring_note), "io_uring unavailable (%s)", strerror(-ret));
		} else {
			ring_ok = true;
			ret = register_plain();
			ring_fixed = ret == 0;
			if (!ring_fixed)
				note("baseline uring-direct: registering the buffer failed (%s, RLIMIT_MEMLOCK?): "
				     "unregistered buffers used", strerror(-ret));
		}
	}

	/* the library's buffers, all of one size; chunked when a provider refuses the whole size */
	len = (size_t)max;
	if (!o.nheaps)
		o.nheaps = 1; /* heaps[0] NULL: the default provider */
	for (i = 0; i < o.nheaps; i++) {
		for (;;) {
			ret = alloc_dbuf(i, len, &lbufs[i].b, &lbufs[i].map);
			if ((ret == -EFBIG || ret == -ENOMEM) && len / 2 >= MIB) {
				len /= 2;
				/* the buffers before this one are too large now: all get the same size */
				for (k = 0; k < i; k++) {
					dmaio_free(lbufs[k].b);
					lbufs[k].b = NULL;
					if (alloc_dbuf(k, len, &lbufs[k].b, &lbufs[k].map) < 0)
						die("allocate %" PRIu64 " MiB from %s again", (uint64_t)len / MIB,
						    heap_desc(k));
				}
				continue;
			}
			break;
		}
		if (ret < 0)
			die("allocate %" PRIu64 " MiB from %s: %s", (uint64_t)len / MIB, heap_desc(i),
			    strerror(-ret));
		nlbufs = i + 1;
		if (!o.heaps[i] && dmaio_buf_kind(lbufs[i].b) == DMAIO_BUF_MEMFD)
			fprintf(stderr, PROG ": no dma-buf provider on this machine; using a memfd\n");
	}
	dbuf_size = len;
	for (i = 0; i < nlbufs; i++) {
		if (dbuf_size < max) {
			size_str(sz, sizeof(sz), dbuf_size);
			note("%s: no buffer of the largest size: the library cases and naive move bigger sizes "
			     "in %s chunks", dmaio_buf_provider(lbufs[i].b), sz);
		}
		if (!lbufs[i].map)
			note("the %s buffer cannot be mapped: %slibrary reads not verified",
			     dmaio_buf_provider(lbufs[i].b), i ? "" : "no naive baseline, ");
	}

	/* the methods: per buffer the library's choice and each path that can serve; the baselines */
	for (i = 0; i < nlbufs; i++) {
		char sfx[48] = "";

		if (nlbufs > 1)
			snprintf(sfx, sizeof(sfx), "@%.40s", dmaio_buf_provider(lbufs[i].b));
		for (p = 0; p < DMAIO_PATH_COUNT; p++) {
			char name[64];

			if (o.paths_given ? !o.paths[p] : false)
				continue;
			snprintf(name, sizeof(name), "lib:%s%s", p ? dmaio_path_name(p) : "auto", sfx);
			add_method(name, M_LIB, p, i);
		}
	}
	add_method("base:uring-direct", M_URING, 0, 0);
	add_method("base:uring-shm", M_URING_SHM, 0, 0);
	add_method("base:buffered", M_BUFFERED, 0, 0);
	add_method("base:naive", M_NAIVE, 0, 0);

	len = (size_t)(dbuf_size < max ? dbuf_size : max);
	for (k = 0; k < nmethods; k++) {
		struct method *m = &methods[k];

		for (d = 0; d < NDIRS; d++) {
			char why[256] = "";

			if ((m->kind == M_URING || m->kind == M_URING_SHM) && !ring_ok) {
				m->ok[d] = false;
				snprintf(m->note[d], sizeof(m->note[d]), "%s", ring_note);
			} else if (m->kind == M_NAIVE && !lbufs[0].map) {
				m->ok[d] = false;
				snprintf(m->note[d], sizeof(m->note[d]), "the buffer cannot be mapped");
			} else if (m->kind == M_LIB) {
				unsigned flags = m->path ? DMAIO_RW_PATH(m->path) | DMAIO_RW_NO_FALLBACK : 0;

				ret = dmaio_choose_path(lbufs[m->buf].b, 0, fd_buf, 0, len, d, flags, why, sizeof(why));
				if (ret < 0 || (m->path && ret != m->path)) {
					m->ok[d] = false;
					snprintf(m->note[d], sizeof(m->note[d]), "cannot serve: %s%s%s",
						 ret < 0 ? errname(ret) : dmaio_path_name(ret), why[0] ? ": " : "", why);
				} else {
					snprintf(m->note[d], sizeof(m->note[d]), "%s%s%s", dmaio_path_name(ret),
						 why[0] ? ": " : "", why);
				}
			}
		}
	}
	if (dmaio_probe_file(NULL, fd_buf, &fi) == 0 && fi.direct != DMAIO_CAP_YES)
		note("O_DIRECT is not supported in %s (%s): the direct paths cannot be measured there",
		     o.dir, errname(fi.direct_err));

	results = calloc((size_t)o.nsizes * NDIRS * NMODES * MAX_METHODS, sizeof(*results));
	if (!results)
		die("out of memory");
	prime_buffers();
	if (o.verify)
		verify_methods();
	/* warm-up: one pass of every method (first-use costs: ring set-up, registration) */
	for (k = 0; k < nmethods; k++)
		for (d = 0; d < NDIRS; d++)
			if (methods[k].ok[d] && o.dirs[d] && run_case(&methods[k], d, len < 4 * MIB ? len : 4 * MIB, NULL) < 0)
				methods[k].ok[d] = false;
	/* the warm-up writes left the file's head with the buffer's bytes: restore the pattern */
	fill_pattern(plain, 0, plain_size);
	full_pwrite(fd_buf, plain, (size_t)(4 * MIB < plain_size ? 4 * MIB : plain_size), 0);
	fsync(fd_buf);
}

static void run_io(void)
{
	int r, s, d, md, k;
	bool tty = interactive(STDERR_FILENO);

	for (r = 0; r < o.runs; r++) {
		if (tty)
			fprintf(stderr, "\r\033[K" PROG ": I/O run %d/%d", r + 1, o.runs);
		if (r > 0 && o.fresh)
			fresh_buffers(r);
		for (s = 0; s < o.nsizes; s++) {
			uint64_t size = o.sizes[s];

			for (d = 0; d < NDIRS; d++) {
				if (!o.dirs[d])
					continue;
				for (md = 0; md < NMODES; md++) {
					if (!o.modes[md])
						continue;
					/* alternate the order of the methods between runs */
					for (int kk = 0; kk < nmethods; kk++) {
						struct result *res;
						double c0, c1;
						uint64_t t0, t1;
						int ret;

						k = r % 2 ? nmethods - 1 - kk : kk;
						if (!methods[k].ok[d])
							continue;
						res = res_at(s, d, md, k);
						if (res->err)
							continue;
						if (md == MODE_COLD)
							make_cold(size);
						else
							make_warm(size);
						c0 = cpu_now();
						t0 = now_ns();
						ret = run_case(&methods[k], d, size, res);
						t1 = now_ns();
						c1 = cpu_now();
						if (ret < 0) {
							res->err = ret;
							note("%s %s %s: %s", methods[k].name, dir_name[d], mode_name[md],
							     strerror(-ret));
							continue;
						}
						res->mbps[res->n] = (double)size * 1000.0 / (double)(t1 - t0);
						res->cpu[res->n] = (c1 - c0) / ((double)size / (double)GIB);
						res->n++;
					}
				}
			}
		}
	}
	if (tty)
		fprintf(stderr, "\r\033[K");
}

/* ------------------------------------------------------------------------------------------- */
/* allocation and mapping */

struct prov {
	char name[64];
	enum { P_HEAP, P_UDMABUF, P_UDMABUF_HUGE, P_DRM, P_MEMFD } type;
	bool dmabuf;
	bool raw_ok;
	char raw_note[128];
	/* alloc test: [0] library, [1] raw */
	int n[2];
	double ms[2][MAX_RUNS];
	int err[2];
	int err_at[2];
	/* mmap test */
	int mn;
	double alloc_ms[MAX_RUNS];
	double touch_ms[MAX_RUNS];
	int merr;
	char mnote[160];
};

static struct prov provs[MAX_PROVS];
static int nprovs;
static struct dmaio_sys_info sys;
static int anon_n;
static double anon_ms[MAX_RUNS];

static void list_providers(void)
{
	struct dmaio_heap_info hi[MAX_PROVS];
	int n, i;

	dmaio_probe_system(NULL, &sys);
	n = dmaio_probe_heaps(NULL, hi, MAX_PROVS - 4);
	for (i = 0; i < n && i < MAX_PROVS - 4; i++) {
		if (hi[i].alloc != DMAIO_CAP_YES) {
			note("heap %s: skipped, a one-page allocation fails (%s)", hi[i].name, errname(hi[i].alloc_err));
			continue;
		}
		snprintf(provs[nprovs].name, sizeof(provs[nprovs].name), "%.63s", hi[i].name);
		provs[nprovs].type = P_HEAP;
		provs[nprovs].dmabuf = true;
		nprovs++;
	}
	if (n <= 0)
		note("dma-heaps: none here (%s): heap rows skipped", n < 0 ? errname(n) : "empty /dev/dma_heap");
	if (sys.udmabuf == DMAIO_CAP_YES) {
		snprintf(provs[nprovs].name, sizeof(provs[nprovs].name), "udmabuf");
		provs[nprovs].type = P_UDMABUF;
		provs[nprovs].dmabuf = true;
		nprovs++;
	} else {
		note("udmabuf: skipped, /dev/udmabuf %s", sys.udmabuf_err == -ENOENT ? "absent" : errname(sys.udmabuf_err));
	}
	if (sys.udmabuf_huge == DMAIO_CAP_YES) {
		snprintf(provs[nprovs].name, sizeof(provs[nprovs].name), "udmabuf-huge");
		provs[nprovs].type = P_UDMABUF_HUGE;
		provs[nprovs].dmabuf = true;
		nprovs++;
	}
	if (sys.drm == DMAIO_CAP_YES) {
		snprintf(provs[nprovs].name, sizeof(provs[nprovs].name), "drm");
		provs[nprovs].type = P_DRM;
		provs[nprovs].dmabuf = true;
		nprovs++;
	} else {
		note("drm: skipped, no DRM node with dumb buffers and PRIME");
	}
	snprintf(provs[nprovs].name, sizeof(provs[nprovs].name), "memfd");
	provs[nprovs].type = P_MEMFD;
	provs[nprovs].dmabuf = false;
	nprovs++;
}

/* The raw kernel loops: allocate count buffers of size, keep them, then the caller frees. */
struct raw_set {
	int fd[2 * 128];
	int n;
};

static void raw_free(struct raw_set *rs)
{
	int i;

	for (i = 0; i < rs->n; i++)
		close(rs->fd[i]);
	rs->n = 0;
}

static int raw_alloc(struct prov *p, int devfd, uint64_t size, int count, struct raw_set *rs)
{
	int i;

	for (i = 0; i < count; i++) {
		switch (p->type) {
		case P_HEAP: {
			struct dma_heap_allocation_data d = {
				.len = size,
				.fd_flags = O_RDWR | O_CLOEXEC,
			};

			if (ioctl(devfd, DMA_HEAP_IOCTL_ALLOC, &d) < 0)
				return -errno;
			rs->fd[rs->n++] = (int)d.fd;
			break;
		}
		case P_UDMABUF:
		case P_UDMABUF_HUGE:
		case P_MEMFD: {
			unsigned mflags = MFD_CLOEXEC | MFD_ALLOW_SEALING;
			struct udmabuf_create c = { 0 };
			int mfd, ufd;

			if (p->type == P_UDMABUF_HUGE)
				mflags |= MFD_HUGETLB;
			mfd = memfd_create("dmaio-bench", mflags);
			if (mfd < 0)
				return -errno;
			rs->fd[rs->n++] = mfd;
			if (ftruncate(mfd, (off_t)size) < 0)
				return -errno;
			/* a plain memfd: give it its memory now, as udmabuf creation does by pinning */
			if (p->type == P_MEMFD && fallocate(mfd, 0, 0, (off_t)size) < 0)
				return -errno;
			if (fcntl(mfd, F_ADD_SEALS, F_SEAL_SHRINK | (p->type == P_MEMFD ? F_SEAL_GROW : 0)) < 0)
				return -errno;
			if (p->type == P_MEMFD)
				break;
			c.memfd = (uint32_t)mfd;
			c.flags = UDMABUF_FLAGS_CLOEXEC;
			c.size = size;
			ufd = ioctl(devfd, UDMABUF_CREATE, &c);
			if (ufd < 0)
				return -errno;
			rs->fd[rs->n++] = ufd;
			break;
		}
		case P_DRM: {
			struct bench_drm_create_dumb cd = { 0 };
			struct bench_drm_prime_handle ph = { 0 };
			struct bench_drm_gem_close gc = { 0 };

			cd.width = 4096;
			cd.bpp = 32;
			cd.height = (uint32_t)((size + 4096 * 4 - 1) / (4096 * 4));
			if (ioctl(devfd, BENCH_DRM_IOCTL_MODE_CREATE_DUMB, &cd) < 0)
				return -errno;
			ph.handle = cd.handle;
			ph.flags = O_CLOEXEC | O_RDWR;
			ph.fd = -1;
			if (ioctl(devfd, BENCH_DRM_IOCTL_PRIME_HANDLE_TO_FD, &ph) < 0) {
				int e = -errno;

				gc.handle = cd.handle;
				ioctl(devfd, BENCH_DRM_IOCTL_GEM_CLOSE, &gc);
				return e;
			}
			gc.handle = cd.handle;
			ioctl(devfd, BENCH_DRM_IOCTL_GEM_CLOSE, &gc);
			rs->fd[rs->n++] = ph.fd;
			break;
		}
		}
	}
	return 0;
}

static int raw_open(struct prov *p)
{
	char path[128];
	int fd;

	switch (p->type) {
	case P_HEAP:
		snprintf(path, sizeof(path), "/dev/dma_heap/%.63s", p->name);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		break;
	case P_UDMABUF:
	case P_UDMABUF_HUGE:
		fd = open("/dev/udmabuf", O_RDWR | O_CLOEXEC);
		break;
	case P_DRM:
		fd = sys.drm_node[0] ? open(sys.drm_node, O_RDWR | O_CLOEXEC) : -1;
		if (!sys.drm_node[0])
			errno = ENOENT;
		break;
	default:
		return INT_MAX; /* memfd: no device */
	}
	return fd < 0 ? -errno : fd;
}

static int lib_alloc(struct prov *p, uint64_t size, int count, struct dmaio_buf **bufs, int *nb)
{
	int i, ret;

	for (i = 0; i < count; i++) {
		ret = dmaio_alloc(NULL, p->name, (size_t)size, p->dmabuf ? DMAIO_ALLOC_DMABUF_ONLY : 0, &bufs[i]);
		if (ret < 0)
			return ret;
		(*nb)++;
	}
	return 0;
}

static void run_alloc(void)
{
	struct dmaio_buf *bufs[128];
	struct raw_set *rs = calloc(1, sizeof(*rs));
	int devfd[MAX_PROVS];
	uint64_t avail = mem_available();
	int count = o.alloc_count, r, i, w, j;

	if (!rs)
		die("out of memory");
	if (count > 128)
		count = 128;
	if (avail && (uint64_t)count * o.alloc_size > avail / 2) {
		int c = (int)(avail / 2 / o.alloc_size);

		note("alloc: %d x %" PRIu64 " MiB reduced to %d x %" PRIu64 " MiB (%" PRIu64 " MiB available)", count,
		     o.alloc_size / MIB, c, o.alloc_size / MIB, avail / MIB);
		count = c < 1 ? 1 : c;
	}
	o.alloc_count = count;
	for (i = 0; i < nprovs; i++) {
		struct prov *p = &provs[i];
		int nb = 0, ret;

		devfd[i] = raw_open(p);
		p->raw_ok = devfd[i] >= 0;
		if (!p->raw_ok)
			snprintf(p->raw_note, sizeof(p->raw_note), "raw loop: open failed (%s)", errname(devfd[i]));
		if (p->type == P_UDMABUF && sys.udmabuf_size_limit && o.alloc_size > sys.udmabuf_size_limit) {
			p->err[0] = p->err[1] = -EFBIG;
			continue;
		}
		/* warm-up, also for the library's cached device fds */
		ret = lib_alloc(p, o.alloc_size, 1, bufs, &nb);
		while (nb)
			dmaio_free(bufs[--nb]);
		if (ret < 0)
			p->err[0] = ret;
		if (p->raw_ok) {
			ret = raw_alloc(p, devfd[i], o.alloc_size, 1, rs);
			raw_free(rs);
			if (ret < 0)
				p->err[1] = ret;
		}
	}
	for (r = 0; r < o.runs; r++) {
		for (i = 0; i < nprovs; i++) {
			struct prov *p = &provs[i];

			for (w = 0; w < 2; w++) {
				int which = (r % 2) ^ w; /* alternate library/raw first */
				uint64_t t0, t1;
				int ret, nb = 0;

				if (p->err[which] || (which == 1 && !p->raw_ok))
					continue;
				t0 = now_ns();
				if (which == 0)
					ret = lib_alloc(p, o.alloc_size, count, bufs, &nb);
				else
					ret = raw_alloc(p, devfd[i], o.alloc_size, count, rs);
				t1 = now_ns();
				if (which == 0) {
					p->err_at[0] = nb;
					for (j = 0; j < nb; j++)
						dmaio_free(bufs[j]);
				} else {
					p->err_at[1] = rs->n;
					raw_free(rs);
				}
				if (ret < 0) {
					p->err[which] = ret;
					continue;
				}
				p->ms[which][p->n[which]++] = (double)(t1 - t0) / 1e6;
			}
		}
	}
	for (i = 0; i < nprovs; i++)
		if (devfd[i] >= 0 && devfd[i] != INT_MAX)
			close(devfd[i]);
	free(rs);
}

static double touch_pages(volatile char *p, uint64_t len)
{
	uint64_t t0 = now_ns(), off;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	for (off = 0; off < len; off += page)
		p[off] = 1;
	return (double)(now_ns() - t0) / 1e6;
}

static void run_mmap(void)
{
	uint64_t avail = mem_available(), size = o.mmap_size;
	int r, i;

	if (avail && size > avail / 2) {
		note("mmap: %" PRIu64 " MiB is more than half the available memory (%" PRIu64 " MiB): skipped",
		     size / MIB, avail / MIB);
		return;
	}
	for (r = 0; r < o.runs; r++) {
		for (i = 0; i < nprovs; i++) {
			struct prov *p = &provs[i];
			struct dmaio_buf *b;
			void *addr;
			uint64_t t0, t1, t2;
			int ret;

			if (p->merr)
				continue;
			if ((p->type == P_UDMABUF || p->type == P_UDMABUF_HUGE) && sys.udmabuf_size_limit &&
			    size > sys.udmabuf_size_limit) {
				p->merr = -EFBIG;
				snprintf(p->mnote, sizeof(p->mnote), "above udmabuf size_limit_mb=%" PRIu64
					 " (raise /sys/module/udmabuf/parameters/size_limit_mb)",
					 sys.udmabuf_size_limit / MIB);
				continue;
			}
			t0 = now_ns();
			ret = dmaio_alloc(NULL, p->name, (size_t)size, p->dmabuf ? DMAIO_ALLOC_DMABUF_ONLY : 0, &b);
			t1 = now_ns();
			if (ret < 0) {
				p->merr = ret;
				snprintf(p->mnote, sizeof(p->mnote), "alloc: %s", strerror(-ret));
				continue;
			}
			ret = dmaio_map(b, &addr);
			if (ret == 0)
				ret = dmaio_sync_begin(b, DMAIO_SYNC_WRITE);
			if (ret == 0) {
				touch_pages(addr, size);
				ret = dmaio_sync_end(b, DMAIO_SYNC_WRITE);
			}
			t2 = now_ns();
			dmaio_free(b);
			if (ret < 0) {
				p->merr = ret;
				snprintf(p->mnote, sizeof(p->mnote), "map: %s", strerror(-ret));
				continue;
			}
			p->alloc_ms[p->mn] = (double)(t1 - t0) / 1e6;
			p->touch_ms[p->mn] = (double)(t2 - t1) / 1e6;
			p->mn++;
		}
		/* reference: anonymous memory */
		{
			uint64_t t0 = now_ns();
			void *a = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

			if (a != MAP_FAILED) {
				touch_pages(a, size);
				anon_ms[anon_n++] = (double)(now_ns() - t0) / 1e6;
				munmap(a, size);
			}
		}
	}
}

/* ------------------------------------------------------------------------------------------- */
/* output */

static double med_mbps(int s, int d, int md, enum mkind kind)
{
	int k;

	for (k = 0; k < nmethods; k++)
		if (methods[k].kind == kind) {
			struct result *r = res_at(s, d, md, k);

			return r->n ? median(r->mbps, r->n) : NAN;
		}
	return NAN;
}

/* the device-limit proxy: the better of the two O_DIRECT io_uring baselines */
static double best_direct(int s, int d, int md)
{
	double a = med_mbps(s, d, md, M_URING), b = med_mbps(s, d, md, M_URING_SHM);

	if (isnan(a))
		return b;
	if (isnan(b))
		return a;
	return a > b ? a : b;
}

static int main_path(const struct result *r)
{
	uint64_t best = 0;
	int p, bp = -1;

	for (p = 0; p < DMAIO_PATH_COUNT; p++)
		if (r->path_bytes[p] > best) {
			best = r->path_bytes[p];
			bp = p;
		}
	return bp;
}

static const char *used_path(const struct method *m, const struct result *r)
{
	int p;

	if (m->kind != M_LIB)
		return m->kind == M_URING ? "uring O_DIRECT" : m->kind == M_URING_SHM ? "uring O_DIRECT" :
		       m->kind == M_BUFFERED ? "read/write" : "read/write map";
	p = main_path(r);
	return p >= 0 ? dmaio_path_name(p) : "-";
}

/* width of the method column */
static int name_width(void)
{
	int w = 20;

	for (int k = 0; k < nmethods; k++)
		if ((int)strlen(methods[k].name) > w)
			w = (int)strlen(methods[k].name);
	return w;
}

/* the providers of the library buffers, comma-separated */
static const char *providers_str(void)
{
	static char buf[256];
	size_t l = 0;

	buf[0] = 0;
	for (int i = 0; i < nlbufs && l < sizeof(buf) - 1; i++)
		l += (size_t)snprintf(buf + l, sizeof(buf) - l, "%s%s", i ? "," : "",
				      dmaio_buf_provider(lbufs[i].b));
	return buf;
}

void fmt_ratio(char *out, size_t len, double a, double b)
{
	if (isnan(a) || isnan(b) || b <= 0)
		snprintf(out, len, "-");
	else
		snprintf(out, len, "%.2f", a / b);
}

static void print_io(FILE *csv)
{
	int s, d, md, k, w = name_width();

	printf("\n%-6s %-5s %-4s %-*s %-16s %8s %8s %8s %9s %8s %8s %8s\n", "size", "dir", "mode", w, "method",
	       "path", "MB/s", "min", "max", "CPU s/GiB", "x direct", "x buffrd", "x naive");
	for (s = 0; s < o.nsizes; s++) {
		char sz[32];

		size_str(sz, sizeof(sz), o.sizes[s]);
		for (d = 0; d < NDIRS; d++) {
			if (!o.dirs[d])
				continue;
			for (md = 0; md < NMODES; md++) {
				double bd, bb, bn;

				if (!o.modes[md])
					continue;
				bd = best_direct(s, d, md);
				bb = med_mbps(s, d, md, M_BUFFERED);
				bn = med_mbps(s, d, md, M_NAIVE);
				for (k = 0; k < nmethods; k++) {
					const struct method *m = &methods[k];
					const struct result *r = res_at(s, d, md, k);
					char rd[16], rb[16], rn[16];
					double mb, cpu;

					if (!m->ok[d])
						continue;
					if (!r->n) {
						printf("%-6s %-5s %-4s %-*s %s\n", sz, dir_name[d], mode_name[md], w, m->name,
						       r->err ? strerror(-r->err) : "no result");
						continue;
					}
					mb = median(r->mbps, r->n);
					cpu = median(r->cpu, r->n);
					fmt_ratio(rd, sizeof(rd), mb, bd);
					fmt_ratio(rb, sizeof(rb), mb, bb);
					fmt_ratio(rn, sizeof(rn), mb, bn);
					printf("%-6s %-5s %-4s %-*s %-16s %8.0f %8.0f %8.0f %9.3f %8s %8s %8s%s\n", sz,
					       dir_name[d], mode_name[md], w, m->name, used_path(m, r), mb,
					       vmin(r->mbps, r->n), vmax(r->mbps, r->n), cpu, rd, rb, rn,
					       r->fallbacks ? " (fallbacks)" : "");
					if (csv)
						fprintf(csv, "io,%s,%" PRIu64 ",%s,%s,%s,%s,%d,%.1f,%.1f,%.1f,%.4f,%s,%s,%s,,,,\n",
							dmaio_buf_provider(lbufs[m->buf].b), o.sizes[s], dir_name[d], mode_name[md],
							m->name, used_path(m, r), r->n, mb, vmin(r->mbps, r->n),
							vmax(r->mbps, r->n), cpu, rd, rb, rn);
				}
			}
		}
	}
}

static void print_alloc(FILE *csv)
{
	int i, w;

	printf("\nallocation of %d x %" PRIu64 " MiB (all kept, then freed; ms, median [min-max] of %d runs)\n",
	       o.alloc_count, o.alloc_size / MIB, o.runs);
	printf("%-16s %-8s %10s %10s %10s %9s  %s\n", "provider", "loop", "ms", "min", "max", "lib/raw",
	       "raw loop");
	for (i = 0; i < nprovs; i++) {
		struct prov *p = &provs[i];
		static const char *raw_desc[] = {
			[P_HEAP] = "DMA_HEAP_IOCTL_ALLOC",
			[P_UDMABUF] = "memfd+seal+UDMABUF_CREATE",
			[P_UDMABUF_HUGE] = "hugetlb memfd+seal+UDMABUF_CREATE",
			[P_DRM] = "CREATE_DUMB+PRIME_HANDLE_TO_FD",
			[P_MEMFD] = "memfd_create+ftruncate+fallocate+seal",
		};

		for (w = 0; w < 2; w++) {
			char ratio[16] = "";

			if (p->err[w] || !p->n[w]) {
				if (w == 1 && !p->raw_ok)
					printf("%-16s %-8s %s\n", p->name, "raw", p->raw_note);
				else if (p->err[w] == -EFBIG && p->type == P_UDMABUF)
					printf("%-16s %-8s skipped: %" PRIu64 " MiB above size_limit_mb=%" PRIu64 "\n",
					       p->name, w ? "raw" : "library", o.alloc_size / MIB,
					       sys.udmabuf_size_limit / MIB);
				else
					printf("%-16s %-8s failed at buffer %d: %s\n", p->name, w ? "raw" : "library",
					       p->err_at[w] + 1, strerror(-p->err[w]));
				continue;
			}
			if (w == 0 && p->n[1] && !p->err[1])
				fmt_ratio(ratio, sizeof(ratio), median(p->ms[0], p->n[0]), median(p->ms[1], p->n[1]));
			printf("%-16s %-8s %10.1f %10.1f %10.1f %9s  %s\n", p->name, w ? "raw" : "library",
			       median(p->ms[w], p->n[w]), vmin(p->ms[w], p->n[w]), vmax(p->ms[w], p->n[w]), ratio,
			       w ? raw_desc[p->type] : "dmaio_alloc");
			if (csv)
				fprintf(csv, "alloc,%s,%" PRIu64 ",,,%s,,%d,,,,,,,,%.3f,%.3f,%.3f,%d\n", p->name,
					o.alloc_size, w ? "raw" : "library", p->n[w], median(p->ms[w], p->n[w]),
					vmin(p->ms[w], p->n[w]), vmax(p->ms[w], p->n[w]), o.alloc_count);
		}
	}
}

static void print_mmap(FILE *csv)
{
	int i;

	printf("\nmap and touch one byte per page of a %" PRIu64 " MiB buffer (ms, median [min-max] of %d runs)\n",
	       o.mmap_size / MIB, o.runs);
	printf("%-16s %10s %10s %10s %10s\n", "provider", "alloc ms", "map+touch", "min", "max");
	for (i = 0; i < nprovs; i++) {
		struct prov *p = &provs[i];

		if (p->merr || !p->mn) {
			printf("%-16s skipped: %s\n", p->name, p->mnote[0] ? p->mnote : "no result");
			continue;
		}
		printf("%-16s %10.1f %10.1f %10.1f %10.1f\n", p->name, median(p->alloc_ms, p->mn),
		       median(p->touch_ms, p->mn), vmin(p->touch_ms, p->mn), vmax(p->touch_ms, p->mn));
		if (csv)
			fprintf(csv, "mmap,%s,%" PRIu64 ",,,map+touch,,%d,,,,,,,,%.3f,%.3f,%.3f,\n", p->name,
				o.mmap_size, p->mn, median(p->touch_ms, p->mn), vmin(p->touch_ms, p->mn),
				vmax(p->touch_ms, p->mn));
	}
	if (anon_n) {
		printf("%-16s %10s %10.1f %10.1f %10.1f  (reference: anonymous mmap + touch)\n", "anonymous", "-",
		       median(anon_ms, anon_n), vmin(anon_ms, anon_n), vmax(anon_ms, anon_n));
		if (csv)
			fprintf(csv, "mmap,anonymous,%" PRIu64 ",,,map+touch,,%d,,,,,,,,%.3f,%.3f,%.3f,\n",
				o.mmap_size, anon_n, median(anon_ms, anon_n), vmin(anon_ms, anon_n),
				vmax(anon_ms, anon_n));
	}
}

static const struct result *find_res(int s, int d, int md, enum mkind kind, int path)
{
	int k;

	for (k = 0; k < nmethods; k++)
		if (methods[k].kind == kind && (kind != M_LIB || methods[k].path == path))
			return methods[k].ok[d] && res_at(s, d, md, k)->n ? res_at(s, d, md, k) : NULL;
	return NULL;
}

static const struct result *best_direct_res(int s, int d, int md)
{
	const struct result *a = find_res(s, d, md, M_URING, 0), *b = find_res(s, d, md, M_URING_SHM, 0);

	if (!a || !b)
		return a ? a : b;
	return median(a->mbps, a->n) >= median(b->mbps, b->n) ? a : b;
}

static void verdict(const char *target, bool measurable, bool met, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void verdict(const char *target, bool measurable, bool met, const char *fmt, ...)
{
	va_list ap;

	printf("  [%s] %s: ", !measurable ? "n/a" : met ? "MET" : "MISSED", target);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

/* Ratios run by run (the cases of a run ran next to each other): " (per run: median x, min-max)". */
static const char *paired(const struct result *a, const struct result *b)
{
	static char out[96];
	double r[MAX_RUNS];
	int i;

	out[0] = '\0';
	if (!a || !b || a->n != b->n || a->n < 2)
		return out;
	for (i = 0; i < a->n; i++)
		r[i] = a->mbps[i] / b->mbps[i];
	snprintf(out, sizeof(out), " (run by run: median %.2fx, %.2f-%.2f)", median(r, a->n), vmin(r, a->n),
		 vmax(r, a->n));
	return out;
}

static void print_targets(void)
{
	int s = -1, i;
	char sz[32];

	printf("\ntargets (lib:auto is the library's best path; medians of this run; MET/MISSED by the ratio of medians)\n");
	if (o.test_io && o.nsizes) {
		const struct result *lib, *dir, *naive, *buf;

		for (i = 0; i < o.nsizes; i++)
			if (s < 0 || o.sizes[i] > o.sizes[s])
				s = i;
		size_str(sz, sizeof(sz), o.sizes[s]);
		if (o.sizes[s] < GIB)
			printf("  (the targets are for >= 1 GiB; the largest size here is %s)\n", sz);
		lib = find_res(s, DIR_READ, MODE_COLD, M_LIB, DMAIO_PATH_AUTO);
		dir = best_direct_res(s, DIR_READ, MODE_COLD);
		naive = find_res(s, DIR_READ, MODE_COLD, M_NAIVE, 0);
		buf = find_res(s, DIR_READ, MODE_COLD, M_BUFFERED, 0);
		if (lib && dir) {
			double a = median(lib->mbps, lib->n), b = median(dir->mbps, dir->n);
			double c = naive ? median(naive->mbps, naive->n) : NAN;

			verdict("cold read >= 0.95x O_DIRECT io_uring", true, a >= 0.95 * b,
				"%s %s: %.0f MB/s vs %.0f MB/s (%s) = %.2fx%s", sz, used_path(&methods[0], lib), a, b,
				dir == find_res(s, DIR_READ, MODE_COLD, M_URING, 0) ? "posix_memalign'd" : "memfd",
				a / b, paired(lib, dir));
			verdict("cold read never below naive", naive != NULL, naive && a >= c,
				"%.0f MB/s vs naive %.0f MB/s = %.2fx%s", a, c, a / c, paired(lib, naive));
		} else {
			verdict("cold read >= 0.95x O_DIRECT io_uring", false, false, "not measured (%s)",
				!lib ? "lib:auto read cold missing" : "baseline missing");
		}
		if (lib && buf) {
			double a = median(lib->cpu, lib->n), b = median(buf->cpu, buf->n);

			verdict("CPU s/GiB <= 0.3x buffered", true, a <= 0.3 * b,
				"%s cold read: %.3f vs buffered %.3f s/GiB = %.2fx", sz, a, b, a / b);
		} else {
			verdict("CPU s/GiB <= 0.3x buffered", false, false, "not measured");
		}
		lib = find_res(s, DIR_WRITE, MODE_COLD, M_LIB, DMAIO_PATH_AUTO);
		dir = best_direct_res(s, DIR_WRITE, MODE_COLD);
		if (lib && dir) {
			double a = median(lib->mbps, lib->n), b = median(dir->mbps, dir->n);

			verdict("write >= 0.95x O_DIRECT write", true, a >= 0.95 * b,
				"%s cold %s: %.0f MB/s vs %.0f MB/s (%s) = %.2fx%s", sz, used_path(&methods[0], lib), a, b,
				dir == find_res(s, DIR_WRITE, MODE_COLD, M_URING, 0) ? "posix_memalign'd" : "memfd",
				a / b, paired(lib, dir));
		} else {
			verdict("write >= 0.95x O_DIRECT write", false, false, "not measured");
		}
	}
	if (o.test_alloc) {
		struct prov *sysh = NULL, *udma = NULL;

		for (i = 0; i < nprovs; i++) {
			if (provs[i].type == P_HEAP && !strcmp(provs[i].name, "system"))
				sysh = &provs[i];
			if (provs[i].type == P_UDMABUF)
				udma = &provs[i];
		}
		if (sysh && udma && sysh->n[0] && udma->n[0]) {
			double a = median(udma->ms[0], udma->n[0]), b = median(sysh->ms[0], sysh->n[0]);

			verdict("udmabuf alloc <= 2x system heap", true, a <= 2 * b,
				"%d x %" PRIu64 " MiB: %.1f ms vs %.1f ms = %.2fx", o.alloc_count, o.alloc_size / MIB,
				a, b, a / b);
		} else {
			verdict("udmabuf alloc <= 2x system heap", false, false, "needs both the system heap and udmabuf");
		}
		for (i = 0; i < nprovs; i++) {
			struct prov *p = &provs[i];
			char t[160];

			if (p->type != P_HEAP)
				continue;
			snprintf(t, sizeof(t), "library alloc <= 1.05x raw DMA_HEAP_IOCTL_ALLOC (%.63s)", p->name);
			if (p->n[0] && p->n[1]) {
				double a = median(p->ms[0], p->n[0]), b = median(p->ms[1], p->n[1]);

				verdict(t, true, a <= 1.05 * b, "%.1f ms vs %.1f ms = %.3fx", a, b, a / b);
			} else {
				verdict(t, false, false, "not measured");
			}
		}
		if (!sysh)
			verdict("library alloc <= 1.05x raw DMA_HEAP_IOCTL_ALLOC", false, false, "no dma-heap here");
	}
}

/* The gnuplot terminal for the plot file's extension (.png, .svg, .pdf), NULL for another. */
static const char *plot_terminal(const char *file, int height)
{
	static char t[96];
	const char *dot = strrchr(file, '.');

	if (!dot || strchr(dot, '/'))
		return NULL;
	if (!strcasecmp(dot, ".png"))
		snprintf(t, sizeof(t), "pngcairo size 1400,%d noenhanced font ',10'", height);
	else if (!strcasecmp(dot, ".svg"))
		snprintf(t, sizeof(t), "svg size 1400,%d noenhanced font ',10'", height);
	else if (!strcasecmp(dot, ".pdf"))
		snprintf(t, sizeof(t), "pdfcairo size 14in,%.1fin noenhanced font ',10'", height / 100.0);
	else
		return NULL;
	return t;
}

/* gnuplot: one panel per direction and mode, bandwidth against size, one line per method */
static void write_plot(void)
{
	char gp[PATH_MAX];
	FILE *f;
	int d, md, k, s, np = 0, ret, status;
	pid_t pid;
	char *argv_gp[3];

	snprintf(gp, sizeof(gp), "%s.gp", o.plot);
	f = fopen(gp, "we");
	if (!f) {
		fprintf(stderr, PROG ": cannot write %s: %s\n", gp, strerror(errno));
		return;
	}
	for (d = 0; d < NDIRS; d++)
		for (md = 0; md < NMODES; md++)
			np += o.dirs[d] && o.modes[md];
	for (d = 0; d < NDIRS; d++)
		for (md = 0; md < NMODES; md++)
			for (k = 0; k < nmethods; k++) {
				if (!o.dirs[d] || !o.modes[md] || !methods[k].ok[d])
					continue;
				fprintf(f, "$d%d_%d_%d << EOD\n", d, md, k);
				for (s = 0; s < o.nsizes; s++) {
					const struct result *r = res_at(s, d, md, k);

					if (r->n)
						fprintf(f, "%.6f %.1f\n", (double)o.sizes[s] / MIB, median(r->mbps, r->n));
				}
				fprintf(f, "EOD\n");
			}
	fprintf(f, "set terminal %s\n", plot_terminal(o.plot, np > 2 ? 1000 : 520));
	fprintf(f, "set output '%s'\n", o.plot);
	fprintf(f, "set multiplot layout %d,%d title 'dmaio-bench: %s buffer, %s'\n", np > 2 ? 2 : 1,
		np > 1 ? 2 : 1, providers_str(), o.dir);
	fprintf(f, "set logscale x 2\nset xlabel 'size (MiB)'\nset ylabel 'MB/s (median)'\nset grid\n"
		   "set key outside right\nset yrange [0:*]\n");
	for (d = 0; d < NDIRS; d++)
		for (md = 0; md < NMODES; md++) {
			bool first = true;

			if (!o.dirs[d] || !o.modes[md])
				continue;
			fprintf(f, "set title '%s %s'\nplot ", dir_name[d], mode_name[md]);
			for (k = 0; k < nmethods; k++) {
				if (!methods[k].ok[d])
					continue;
				fprintf(f, "%s$d%d_%d_%d with linespoints%s title '%s'", first ? "" : ", \\\n     ", d,
					md, k, methods[k].kind == M_LIB ? "" : " dt 2", methods[k].name);
				first = false;
			}
			if (first)
				fprintf(f, "NaN notitle");
			fprintf(f, "\n");
		}
	fprintf(f, "unset multiplot\n");
	if (fclose(f)) {
		fprintf(stderr, PROG ": cannot write %s: %s\n", gp, strerror(errno));
		return;
	}
	argv_gp[0] = (char *)"gnuplot";
	argv_gp[1] = gp;
	argv_gp[2] = NULL;
	ret = posix_spawnp(&pid, "gnuplot", NULL, NULL, argv_gp, environ);
	if (ret == ENOENT) {
		printf("\nplot: gnuplot not found; wrote %s (run `gnuplot %s` to draw %s)\n", gp, gp, o.plot);
		return;
	}
	if (ret) {
		fprintf(stderr, PROG ": cannot run gnuplot: %s\n", strerror(ret));
		return;
	}
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status)) {
		if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
			printf("\nplot: gnuplot not found; wrote %s\n", gp);
		else
			fprintf(stderr, PROG ": gnuplot failed on %s\n", gp);
		return;
	}
	printf("\nplot: %s (script %s)\n", o.plot, gp);
}

/* ------------------------------------------------------------------------------------------- */

static void usage(FILE *out)
{
	int p;

	fprintf(out,
		"Usage: " PROG " [options]\n"
		"Measure libdmaio's data paths against baselines, allocation per provider and mapping.\n"
		"\n"
		"  --dir DIR         directory of the test file (default: .); a block filesystem for O_DIRECT\n"
		"  --heap H[,H...]   provider(s) of the I/O buffers (default: the best dma-buf provider, else\n"
		"                    memfd); several: one buffer each, measured side by side on one file\n"
		"  --path P[,P...]   library paths to measure (default: auto and every path that can serve):\n"
		"                   ");
	for (p = 0; p < DMAIO_PATH_COUNT; p++)
		fprintf(out, " %s", dmaio_path_name(p));
	fprintf(out,
		"\n"
		"  --sizes LIST      transfer sizes (default 1M,4M,16M,64M,256M,1G)\n"
		"  --dirs LIST       read,write (default both)\n"
		"  --modes LIST      cold,warm (default both); cold = fsync + POSIX_FADV_DONTNEED, and\n"
		"                    `echo 1 > /proc/sys/vm/drop_caches` when root\n"
		"  --runs N          interleaved repetitions, medians reported (default 5)\n"
		"  --tests LIST      io,alloc,mmap,ranges,files,frames (default io,alloc,mmap)\n"
		"  --alloc N[xSIZE]  allocation test: N buffers of SIZE (default 32x32M)\n"
		"  --mmap-size SIZE  map+touch test size (default 512M)\n"
		"  --chunk SIZE      request size of the O_DIRECT io_uring baseline (default 4M)\n"
		"  --qd N            its queue depth (default 8)\n"
		"                    libdmaio exposes neither chunk size nor queue depth: they do not\n"
		"                    apply to the library paths\n"
		"  --no-drop-caches  cold runs use posix_fadvise(DONTNEED) only\n"
		"  --no-verify       skip the data check of each method before timing\n"
		"  --same-buffers    keep the buffers of the first run (default: new memory for every run,\n"
		"                    as physical placement alone moves bandwidth by up to 2x here)\n"
		"  --csv FILE        write the results as CSV\n"
		"  --plot FILE       plot bandwidth per method and size, PNG, SVG or PDF by FILE's\n"
		"                    extension (.png/.svg/.pdf; writes FILE.gp too, runs gnuplot)\n"
		"  --quick           a short subset: sizes 16M,256M, 3 runs\n"
		"  --keep            keep the test file\n"
		"  --version         print the version of dmaio-bench and of the libdmaio it runs with\n"
		"  -h, --help        this help\n"
		"\n"
		"MB/s are 10^6 bytes/s. CPU is user+sys of the process (getrusage RUSAGE_SELF, io_uring\n"
		"workers included) per GiB moved. Write times include a final fdatasync().\n");
	wl_usage(out);
}

static bool parse_list(char *arg, const char *const *names, int n, bool *out)
{
	char *tok, *save = NULL;
	int i;

	for (i = 0; i < n; i++)
		out[i] = false;
	for (tok = strtok_r(arg, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		for (i = 0; i < n; i++)
			if (!strcmp(tok, names[i]))
				break;
		if (i == n)
			return false;
		out[i] = true;
	}
	return true;
}

int main(int argc, char **argv)
{
	enum { OPT_SIZES = 256, OPT_DIRS, OPT_MODES, OPT_RUNS, OPT_TESTS, OPT_ALLOC, OPT_MMAPSZ, OPT_CHUNK, OPT_QD, OPT_NODROP,
	       OPT_NOVERIFY, OPT_CSV, OPT_PLOT, OPT_QUICK, OPT_KEEP, OPT_SAME, OPT_DIR, OPT_HEAP, OPT_PATH };
	static const struct option lopts[] = {
		{ "dir", required_argument, NULL, OPT_DIR },
		{ "heap", required_argument, NULL, OPT_HEAP },
		{ "path", required_argument, NULL, OPT_PATH },
		{ "sizes", required_argument, NULL, OPT_SIZES },
		{ "dirs", required_argument, NULL, OPT_DIRS },
		{ "modes", required_argument, NULL, OPT_MODES },
		{ "runs", required_argument, NULL, OPT_RUNS },
		{ "tests", required_argument, NULL, OPT_TESTS },
		{ "alloc", required_argument, NULL, OPT_ALLOC },
		{ "mmap-size", required_argument, NULL, OPT_MMAPSZ },
		{ "chunk", required_argument, NULL, OPT_CHUNK },
		{ "qd", required_argument, NULL, OPT_QD },
		{ "no-drop-caches", no_argument, NULL, OPT_NODROP },
		{ "no-verify", no_argument, NULL, OPT_NOVERIFY },
		{ "csv", required_argument, NULL, OPT_CSV },
		{ "plot", required_argument, NULL, OPT_PLOT },
		{ "quick", no_argument, NULL, OPT_QUICK },
		{ "keep", no_argument, NULL, OPT_KEEP },
		{ "same-buffers", no_argument, NULL, OPT_SAME },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'R' },
		WL_LONG_OPTIONS,
		{ NULL, 0, NULL, 0 },
	};
	static const char *const test_names[] = { "io", "alloc", "mmap", "ranges", "files", "frames" };
	bool tests[6] = { true, true, true, false, false, false }, sizes_given = false, runs_given = false;
	char cmdline[4096];
	size_t cl = 0;
	struct sigaction sa = { 0 };
	FILE *csv = NULL;
	char *end, *tok, *save;
	int c, i;
	long v;

	/* the command line, before getopt permutes argv and strtok_r cuts its strings */
	cmdline[0] = '\0';
	for (i = 0; i < argc && cl < sizeof(cmdline) - 8; i++) {
		bool plain_arg = argv[i][0] && !argv[i][strcspn(argv[i], " \t\n'\"\\$`*?[]{}()<>|&;#~!")];

		cl += (size_t)snprintf(cmdline + cl, sizeof(cmdline) - cl, plain_arg ? "%s%s" : "%s'%s'",
				       i ? " " : "", argv[i]);
	}
	o.dirs[DIR_READ] = o.dirs[DIR_WRITE] = true;
	o.modes[MODE_COLD] = o.modes[MODE_WARM] = true;
	o.dir = ".";
	while ((c = getopt_long(argc, argv, "h", lopts, NULL)) != -1) {
		switch (c) {
		case OPT_DIR:
			o.dir = optarg;
			break;
		case OPT_HEAP:
			o.nheaps = 0;
			for (tok = strtok_r(optarg, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
				if (o.nheaps == MAX_LBUFS)
					die("--heap: at most %d providers", MAX_LBUFS);
				o.heaps[o.nheaps++] = tok;
			}
			if (!o.nheaps)
				die("--heap: no provider named");
			break;
		case OPT_PATH:
			o.paths_given = true;
			for (tok = strtok_r(optarg, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
				int p = dmaio_path_from_name(tok);

				if (p < 0) {
					fprintf(stderr, PROG ": unknown path '%s' (see --help)\n", tok);
					return 2;
				}
				o.paths[p] = true;
			}
			break;
		case OPT_SIZES:
			sizes_given = true;
			o.nsizes = 0;
			for (tok = strtok_r(optarg, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
				if (o.nsizes >= MAX_SIZES || parse_size(tok, &o.sizes[o.nsizes])) {
					fprintf(stderr, PROG ": bad size '%s' (e.g. 1M,64M,1G; at most %d)\n", tok, MAX_SIZES);
					return 2;
				}
				o.nsizes++;
			}
			break;
		case OPT_DIRS:
			if (!parse_list(optarg, dir_name, NDIRS, o.dirs)) {
				fprintf(stderr, PROG ": --dirs takes read,write\n");
				return 2;
			}
			break;
		case OPT_MODES:
			if (!parse_list(optarg, mode_name, NMODES, o.modes)) {
				fprintf(stderr, PROG ": --modes takes cold,warm\n");
				return 2;
			}
			break;
		case OPT_RUNS:
			v = strtol(optarg, &end, 10);
			if (*end || v < 1 || v > MAX_RUNS) {
				fprintf(stderr, PROG ": --runs takes 1..%d\n", MAX_RUNS);
				return 2;
			}
			o.runs = (int)v;
			runs_given = true;
			break;
		case OPT_TESTS:
			if (!parse_list(optarg, test_names, 6, tests)) {
				fprintf(stderr, PROG ": --tests takes io,alloc,mmap,ranges,files,frames\n");
				return 2;
			}
			break;
		case OPT_ALLOC: {
			char *x = strchr(optarg, 'x');

			if (x)
				*x = '\0';
			v = strtol(optarg, &end, 10);
			if (*end || v < 1 || v > 128 || (x && parse_size(x + 1, &o.alloc_size))) {
				fprintf(stderr, PROG ": --alloc takes N[xSIZE], N in 1..128\n");
				return 2;
			}
			o.alloc_count = (int)v;
			break;
		}
		case OPT_MMAPSZ:
			if (parse_size(optarg, &o.mmap_size)) {
				fprintf(stderr, PROG ": bad --mmap-size\n");
				return 2;
			}
			break;
		case OPT_CHUNK:
			if (parse_size(optarg, &o.chunk) || o.chunk % 4096 || o.chunk > GIB) {
				fprintf(stderr, PROG ": --chunk takes a multiple of 4K up to 1G\n");
				return 2;
			}
			break;
		case OPT_QD:
			v = strtol(optarg, &end, 10);
			if (*end || v < 1 || v > 256) {
				fprintf(stderr, PROG ": --qd takes 1..256\n");
				return 2;
			}
			o.qd = (unsigned)v;
			break;
		case OPT_NODROP:
			o.drop_caches = false;
			break;
		case OPT_NOVERIFY:
			o.verify = false;
			break;
		case OPT_CSV:
			o.csv = optarg;
			break;
		case OPT_PLOT:
			o.plot = optarg;
			if (!plot_terminal(o.plot, 520)) {
				fprintf(stderr, PROG ": --plot %s: the name must end in .png, .svg or .pdf\n", optarg);
				return 2;
			}
			break;
		case OPT_QUICK:
			o.quick = true;
			break;
		case OPT_SAME:
			o.fresh = false;
			break;
		case OPT_KEEP:
			o.keep = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'R': {
			unsigned lv = dmaio_version();

			printf("dmaio-bench %d.%d.%d (libdmaio %u.%u.%u)\n", DMAIO_VERSION_MAJOR,
			       DMAIO_VERSION_MINOR, DMAIO_VERSION_MICRO, lv >> 16, (lv >> 8) & 0xff,
			       lv & 0xff);
			return 0;
		}
		default:
			if (c >= WL_OPT_BASE && c < WL_OPT_BASE + WL_NOPTS) {
				if (wl_option(c - WL_OPT_BASE, optarg) < 0)
					return 2;
				break;
			}
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, PROG ": unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	if (!sizes_given) {
		static const uint64_t def[] = { 1 * MIB, 4 * MIB, 16 * MIB, 64 * MIB, 256 * MIB, 1 * GIB };
		static const uint64_t quick[] = { 16 * MIB, 256 * MIB };
		const uint64_t *src = o.quick ? quick : def;

		o.nsizes = o.quick ? 2 : 6;
		for (i = 0; i < o.nsizes; i++)
			o.sizes[i] = src[i];
	}
	if (o.quick && !runs_given)
		o.runs = 3;
	o.test_io = tests[0];
	o.test_alloc = tests[1];
	o.test_mmap = tests[2];
	wlo.test_ranges = tests[3];
	wlo.test_files = tests[4];
	wlo.test_frames = tests[5];
	is_root = geteuid() == 0;

	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);

	if (o.csv) {
		csv = fopen(o.csv, "we");
		if (!csv) {
			fprintf(stderr, PROG ": cannot write %s: %s\n", o.csv, strerror(errno));
			return 2;
		}
		fprintf(csv, "test,provider,size_bytes,dir,mode,method,path,runs,mbps_median,mbps_min,mbps_max,"
			     "cpu_s_per_gib,x_uring_direct,x_buffered,x_naive,ms_median,ms_min,ms_max,count\n");
	}

	list_providers();
	if (o.test_io)
		setup_io();
	if (wl_enabled())
		wl_setup();

	/* header */
	{
		char sizes[256] = "";
		size_t l = 0;

		for (i = 0; i < o.nsizes && l < sizeof(sizes) - 16; i++) {
			char sz[32];

			size_str(sz, sizeof(sz), o.sizes[i]);
			l += (size_t)snprintf(sizes + l, sizeof(sizes) - l, "%s%s", i ? "," : "", sz);
		}
		printf("# %s\n", cmdline);
		printf("# dmaio-bench (libdmaio %d.%d.%d), %d interleaved runs, medians\n", DMAIO_VERSION_MAJOR,
		       DMAIO_VERSION_MINOR, DMAIO_VERSION_MICRO, o.runs);
		if (o.test_io) {
			char bs[32];

			size_str(bs, sizeof(bs), dbuf_size);
			for (i = 0; i < nlbufs; i++)
				printf("# I/O: buffer %s from %s (%s), sizes %s, test file %s\n", bs,
				       dmaio_buf_provider(lbufs[i].b),
				       dmaio_buf_kind(lbufs[i].b) == DMAIO_BUF_MEMFD ? "a memfd, not a dma-buf" : "dma-buf",
				       sizes, test_path);
			if (nlbufs > 1)
				printf("# one test file for all buffers; lib:PATH@PROVIDER = that buffer; base:naive "
				       "uses the %s buffer; targets use lib:auto@%s\n", dmaio_buf_provider(lbufs[0].b),
				       dmaio_buf_provider(lbufs[0].b));
			printf("# cold: fsync + POSIX_FADV_DONTNEED%s; warm: range read once before\n",
			       o.drop_caches && is_root ? " + drop_caches" : "");
			printf("# base:uring-direct = O_DIRECT io_uring, %s, %" PRIu64 " KiB requests, QD %u, into "
			       "posix_memalign'd memory; base:uring-shm = the same into a memfd mapping\n"
			       "# base:buffered = read()/write() into plain memory; base:naive = read()/write() on the "
			       "dmaio_map() mapping inside sync_begin/end\n"
			       "# x direct = ratio to the better of the two O_DIRECT baselines (the device-limit proxy)\n",
			       ring_fixed ? "fixed buffers" : "unregistered buffers", o.chunk / KIB, o.qd);
			printf("# writes include fdatasync(); MB/s = 10^6 B/s; CPU = user+sys s per GiB (RUSAGE_SELF); %s, "
			       "each primed with one pread of the file before timing\n",
			       o.fresh ? "new buffers for every run" : "the same buffers for every run");
			if (getenv("DMAIO_PATH"))
				printf("# DMAIO_PATH=%s is set: it steers lib:auto\n", getenv("DMAIO_PATH"));
			for (i = 0; i < nmethods; i++) {
				if (methods[i].kind != M_LIB)
					continue;
				printf("# %-18s read: %s%s\n", methods[i].name, methods[i].ok[0] ? "" : "SKIPPED, ",
				       methods[i].note[0]);
				printf("# %-18s write: %s%s\n", "", methods[i].ok[1] ? "" : "SKIPPED, ", methods[i].note[1]);
			}
			for (i = 0; i < nmethods; i++)
				if (methods[i].kind != M_LIB && (!methods[i].ok[0] || !methods[i].ok[1]))
					printf("# %-18s SKIPPED: %s\n", methods[i].name,
					       methods[i].note[0][0] ? methods[i].note[0] : methods[i].note[1]);
		}
		if (wl_enabled())
			wl_print_header();
		fflush(stdout);
	}

	if (o.test_io)
		run_io();
	if (o.test_alloc)
		run_alloc();
	if (o.test_mmap)
		run_mmap();
	if (wl_enabled())
		wl_run();

	if (o.test_io)
		print_io(csv);
	if (o.test_alloc)
		print_alloc(csv);
	if (o.test_mmap)
		print_mmap(csv);
	if (wl_enabled())
		wl_print(csv);
	if (o.test_io || o.test_alloc || o.test_mmap)
		print_targets();
	if (nnotes) {
		printf("\nnotes:\n");
		for (i = 0; i < nnotes; i++)
			printf("  - %s\n", notes[i]);
	}
	if (csv) {
		if (fclose(csv))
			fprintf(stderr, PROG ": cannot write %s: %s\n", o.csv, strerror(errno));
		else
			printf("\ncsv: %s\n", o.csv);
	}
	if (o.plot && o.test_io)
		write_plot();

	for (i = 0; i < nlbufs; i++)
		dmaio_free(lbufs[i].b);
	if (ring_ok)
		io_uring_queue_exit(&ring);
	if (fd_dir >= 0)
		close(fd_dir);
	if (fd_buf >= 0)
		close(fd_buf);
	if (test_created && !o.keep)
		unlink(test_path);
	wl_cleanup();
	free(plain);
	if (shm)
		munmap(shm, plain_size);
	return 0;
}
