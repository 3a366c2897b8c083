// SPDX-License-Identifier: MIT
/* The baselines the library is measured against (baselines.h). */
#include "baselines.h"
#include "stats.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/dma-heap.h>
#include <linux/udmabuf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

/* ------------------------------------------------------------------------------------------- */
/* O_DIRECT io_uring */

int ub_init(struct uring_base *u, unsigned entries)
{
	int ret = io_uring_queue_init(entries < 4 ? 4 : entries, &u->ring, 0);

	u->ok = ret == 0;
	u->fixed = false;
	u->nregs = 0;
	return ret;
}

void ub_exit(struct uring_base *u)
{
	if (u->ok)
		io_uring_queue_exit(&u->ring);
	u->ok = u->fixed = false;
}

int ub_register(struct uring_base *u, const struct iovec *iov, unsigned n)
{
	int ret;

	ub_unregister(u);
	ret = io_uring_register_buffers(&u->ring, iov, n);
	u->fixed = ret == 0;
	u->nregs = ret == 0 ? n : 0;
	return ret;
}

void ub_unregister(struct uring_base *u)
{
	if (u->ok && u->fixed)
		io_uring_unregister_buffers(&u->ring);
	u->fixed = false;
	u->nregs = 0;
}

size_t breq_count(uint64_t mem_off, uint64_t len, uint64_t chunk)
{
	return (size_t)(len / chunk + len / URING_PIECE + 2);
}

size_t breq_split(struct breq *out, int fd, uint64_t off, uint64_t mem_off, uint64_t len, uint64_t chunk)
{
	uint64_t done = 0;
	size_t n = 0;

	while (done < len) {
		uint64_t mo = mem_off + done, l = len - done, piece_end = (mo / URING_PIECE + 1) * URING_PIECE;

		if (l > chunk)
			l = chunk;
		if (mo + l > piece_end)
			l = piece_end - mo;
		out[n].fd = fd;
		out[n].off = off + done;
		out[n].mem_off = mo;
		out[n].len = (uint32_t)l;
		n++;
		done += l;
	}
	return n;
}

struct slot {
	struct breq q;
	uint64_t t;   /* submitted (ns) */
};

static void prep(struct uring_base *u, struct io_uring_sqe *sqe, int dir, char *mem, int buf_base,
		 const struct breq *q)
{
	char *p = mem + q->mem_off;

	if (u->fixed && dir == DIR_READ)
		io_uring_prep_read_fixed(sqe, q->fd, p, q->len, q->off, buf_base + (int)(q->mem_off / URING_PIECE));
	else if (u->fixed)
		io_uring_prep_write_fixed(sqe, q->fd, p, q->len, q->off, buf_base + (int)(q->mem_off / URING_PIECE));
	else if (dir == DIR_READ)
		io_uring_prep_read(sqe, q->fd, p, q->len, q->off);
	else
		io_uring_prep_write(sqe, q->fd, p, q->len, q->off);
}

int ub_run(struct uring_base *u, int dir, char *mem, int buf_base, const struct breq *reqs, size_t n,
	   unsigned depth, bool short_ok, struct samples *lat)
{
	struct slot *sl = calloc(depth, sizeof(*sl));
	unsigned *freel = calloc(depth, sizeof(*freel));
	unsigned nfree = depth, inflight = 0, i;
	size_t next = 0;
	int ret = 0;

	if (!sl || !freel) {
		free(sl);
		free(freel);
		return -ENOMEM;
	}
	for (i = 0; i < depth; i++)
		freel[i] = i;
	while (next < n || inflight) {
		struct io_uring_cqe *cqe;
		bool queued = false;

		while (nfree && next < n) {
			struct io_uring_sqe *sqe = io_uring_get_sqe(&u->ring);
			unsigned s;

			if (!sqe)
				break;
			s = freel[--nfree];
			sl[s].q = reqs[next++];
			sl[s].t = lat ? now_ns() : 0;
			prep(u, sqe, dir, mem, buf_base, &sl[s].q);
			io_uring_sqe_set_data64(sqe, s);
			inflight++;
			queued = true;
		}
		if (queued) {
			ret = io_uring_submit(&u->ring);
			if (ret < 0)
				goto out;
		}
		ret = io_uring_wait_cqe(&u->ring, &cqe);
		if (ret < 0)
			goto out;
		queued = false;
		do {
			unsigned s = (unsigned)io_uring_cqe_get_data64(cqe);
			int r = cqe->res;

			io_uring_cqe_seen(&u->ring, cqe);
			inflight--;
			if (r == -EAGAIN || r == -EINTR || (r > 0 && (uint32_t)r < sl[s].q.len && !short_ok)) {
				/* reissue the rest */
				struct io_uring_sqe *sqe;
				uint32_t adv = r > 0 ? (uint32_t)r : 0;

				sl[s].q.off += adv;
				sl[s].q.mem_off += adv;
				sl[s].q.len -= adv;
				sqe = io_uring_get_sqe(&u->ring);
				if (!sqe) {
					io_uring_submit(&u->ring);
					sqe = io_uring_get_sqe(&u->ring);
				}
				if (!sqe) {
					ret = -EBUSY;
					goto out;
				}
				prep(u, sqe, dir, mem, buf_base, &sl[s].q);
				io_uring_sqe_set_data64(sqe, s);
				inflight++;
				queued = true;
			} else if (r < 0) {
				ret = r;
				goto out;
			} else if (r == 0 && !short_ok) {
				ret = -ENODATA;
				goto out;
			} else {
				if (lat)
					samples_add(lat, (double)(now_ns() - sl[s].t) / 1e6);
				freel[nfree++] = s;
			}
		} while (io_uring_peek_cqe(&u->ring, &cqe) == 0);
		if (queued) {
			ret = io_uring_submit(&u->ring);
			if (ret < 0)
				goto out;
		}
		ret = 0;
	}
out:
	/* drain what is still in flight after an error */
	while (inflight) {
		struct io_uring_cqe *cqe;

		if (io_uring_wait_cqe(&u->ring, &cqe) < 0)
			break;
		io_uring_cqe_seen(&u->ring, cqe);
		inflight--;
	}
	free(sl);
	free(freel);
	return ret;
}

/* ------------------------------------------------------------------------------------------- */
/* buffered read()/write() */

int buffered_rw(int dir, int fd, char *mem, uint64_t off, uint64_t len)
{
	ssize_t r;

	if (dir == DIR_READ)
		r = full_pread(fd, mem + off, (size_t)len, off);
	else
		r = full_pwrite(fd, mem + off, (size_t)len, off);
	if (r < 0)
		return (int)r;
	return (uint64_t)r == len ? 0 : -ENODATA;
}

/* ------------------------------------------------------------------------------------------- */
/* memory */

char *mem_plain(uint64_t size)
{
	void *p;

	if (posix_memalign(&p, 2 * MIB, (size_t)size))
		die("cannot allocate %" PRIu64 " MiB of plain memory", size / MIB);
	memset(p, 0, (size_t)size);
	return p;
}

char *mem_anon(uint64_t size)
{
	void *p = mmap(NULL, (size_t)size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		die("mmap %" PRIu64 " MiB of anonymous memory: %s", size / MIB, strerror(errno));
	memset(p, 0, (size_t)size);
	return p;
}

char *mem_memfd(uint64_t size, bool falloc)
{
	int fd = memfd_create("dmaio-bench-baseline", MFD_CLOEXEC);
	void *p;

	if (fd < 0)
		die("memfd_create: %s", strerror(errno));
	if (ftruncate(fd, (off_t)size) < 0 || (falloc && fallocate(fd, 0, 0, (off_t)size) < 0))
		die("a %" PRIu64 " MiB memfd: %s", size / MIB, strerror(errno));
	p = mmap(NULL, (size_t)size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		die("mmap a %" PRIu64 " MiB memfd: %s", size / MIB, strerror(errno));
	memset(p, 0, (size_t)size);
	return p;
}

/* ------------------------------------------------------------------------------------------- */
/* the raw allocation loops */

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

const char *raw_desc(enum prov_type t)
{
	switch (t) {
	case P_HEAP: return "DMA_HEAP_IOCTL_ALLOC";
	case P_UDMABUF: return "memfd+seal+UDMABUF_CREATE";
	case P_UDMABUF_HUGE: return "hugetlb memfd+seal+UDMABUF_CREATE";
	case P_DRM: return "CREATE_DUMB+PRIME_HANDLE_TO_FD";
	case P_MEMFD: return "memfd_create+ftruncate+fallocate+seal";
	}
	return "?";
}

void raw_free(struct raw_set *rs)
{
	int i;

	for (i = 0; i < rs->n; i++)
		close(rs->fd[i]);
	rs->n = 0;
}

int raw_alloc(enum prov_type t, int devfd, uint64_t size, int count, struct raw_set *rs)
{
	int i;

	for (i = 0; i < count; i++) {
		switch (t) {
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

			if (t == P_UDMABUF_HUGE)
				mflags |= MFD_HUGETLB;
			mfd = memfd_create("dmaio-bench", mflags);
			if (mfd < 0)
				return -errno;
			rs->fd[rs->n++] = mfd;
			if (ftruncate(mfd, (off_t)size) < 0)
				return -errno;
			/* a plain memfd: give it its memory now, as udmabuf creation does by pinning */
			if (t == P_MEMFD && fallocate(mfd, 0, 0, (off_t)size) < 0)
				return -errno;
			if (fcntl(mfd, F_ADD_SEALS, F_SEAL_SHRINK | (t == P_MEMFD ? F_SEAL_GROW : 0)) < 0)
				return -errno;
			if (t == P_MEMFD)
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

int raw_open(enum prov_type t, const char *heap, const char *drm_node)
{
	char path[128];
	int fd;

	switch (t) {
	case P_HEAP:
		snprintf(path, sizeof(path), "/dev/dma_heap/%.63s", heap);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		break;
	case P_UDMABUF:
	case P_UDMABUF_HUGE:
		fd = open("/dev/udmabuf", O_RDWR | O_CLOEXEC);
		break;
	case P_DRM:
		if (!drm_node || !drm_node[0])
			return -ENOENT;
		fd = open(drm_node, O_RDWR | O_CLOEXEC);
		break;
	default:
		return INT_MAX; /* memfd: no device */
	}
	return fd < 0 ? -errno : fd;
}
