/* SPDX-License-Identifier: MIT */
/*
 * The baselines the library is measured against, written here without the library: O_DIRECT
 * io_uring of a list of requests into plain memory (fixed buffers when registered), buffered
 * read()/write() into plain memory, the memory they move into (posix_memalign'd, anonymous or
 * memfd mappings), and the raw kernel allocation loops of each provider.
 */
#ifndef DMAIO_BENCH_BASELINES_H
#define DMAIO_BENCH_BASELINES_H

#include <liburing.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct samples;

/* ---- O_DIRECT io_uring ---- */
struct uring_base {
	struct io_uring ring;
	bool ok;            /* initialised */
	bool fixed;         /* the memory is registered: read/write_fixed */
	unsigned nregs;     /* registered buffers */
};

/* one request: len bytes at file offset off of fd, at mem_off of the memory */
struct breq {
	int fd;
	uint64_t off, mem_off;
	uint32_t len;
};

/* a ring of at least entries SQEs (4 minimum): 0 or -errno */
int ub_init(struct uring_base *u, unsigned entries);
void ub_exit(struct uring_base *u);
/* register iov[0..n) (each at most URING_PIECE): 0 or -errno; u->fixed says whether it held */
int ub_register(struct uring_base *u, const struct iovec *iov, unsigned n);
void ub_unregister(struct uring_base *u);
/* the requests of [off, off + len) at mem_off: at most chunk bytes each, none crossing a
 * URING_PIECE boundary of the memory (each piece is one registered buffer) */
size_t breq_count(uint64_t mem_off, uint64_t len, uint64_t chunk);
size_t breq_split(struct breq *out, int fd, uint64_t off, uint64_t mem_off, uint64_t len, uint64_t chunk);
/*
 * Move reqs[0..n) (dir DIR_READ or DIR_WRITE) with depth requests in flight, into or out of mem;
 * fixed buffers when u->fixed, buffer index buf_base + mem_off / URING_PIECE. Short transfers are
 * reissued for the rest (short_ok: a short read ends its request, as at the end of a file).
 * lat (may be NULL) gets each request's submit-to-completion time in ms. 0 or -errno.
 */
int ub_run(struct uring_base *u, int dir, char *mem, int buf_base, const struct breq *reqs, size_t n,
	   unsigned depth, bool short_ok, struct samples *lat);

/* ---- buffered read()/write() of [off, off + len) into mem: 0, -ENODATA when short, -errno ---- */
int buffered_rw(int dir, int fd, char *mem, uint64_t off, uint64_t len);

/* ---- memory (each dies when it cannot be had; zeroed, every page touched) ---- */
char *mem_plain(uint64_t size);                 /* posix_memalign'd, 2 MiB aligned; free() */
char *mem_anon(uint64_t size);                  /* anonymous mmap; munmap() */
char *mem_memfd(uint64_t size, bool fallocate); /* a shared memfd mapping (shmem); munmap() */

/* ---- the raw allocation loops of the providers ---- */
enum prov_type { P_HEAP, P_UDMABUF, P_UDMABUF_HUGE, P_DRM, P_MEMFD };

#define RAW_MAX 128
struct raw_set {
	int fd[2 * RAW_MAX];
	int n;
};

/* what the raw loop of a provider type does, e.g. "DMA_HEAP_IOCTL_ALLOC" */
const char *raw_desc(enum prov_type t);
/* the device of the loop (heap name, DRM node): an fd, INT_MAX for memfd (none), or -errno */
int raw_open(enum prov_type t, const char *heap, const char *drm_node);
/* count buffers of size, kept in rs: 0 or -errno (rs holds those made) */
int raw_alloc(enum prov_type t, int devfd, uint64_t size, int count, struct raw_set *rs);
void raw_free(struct raw_set *rs);

#endif /* DMAIO_BENCH_BASELINES_H */
