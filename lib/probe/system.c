/* SPDX-License-Identifier: MIT */
/* Probing what the machine offers: heaps, udmabuf, DRM, io_uring (once per context, cached). */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/fs.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "probe.h"
#include "../engine/engine.h"
#include "../providers/provider.h"
#include "../choose/cost.h"
#include "../sys/sys.h"
#include "../uapi/dma-buf-rw-file.h"


/* ---- heaps -------------------------------------------------------------------------------- */
static int heap_cmp(const void *a, const void *b)
{
	return strcmp(((const struct dmaio_heap *)a)->name, ((const struct dmaio_heap *)b)->name);
}

/* What memory a heap gives, from what the running kernel calls things: a CMA heap is one of the
 * default names or is named after a CMA area (/sys/kernel/mm/cma/<area>, one heap per
 * device-tree shared-dma-pool region); an uncached heap says so in its name (system-uncached). */
static void classify_heap(struct dmaio_heap *h)
{
	char path[40 + DMAIO_NAME_MAX];
	size_t n = strlen(h->name);

	for (size_t i = 0; i < DMAIO_CMA_HEAP_NAMES; i++)
		if (!strcmp(h->name, dmaio_cma_heap_names[i]))
			h->info.contiguous = 1;
	snprintf(path, sizeof(path), "/sys/kernel/mm/cma/%s", h->name);
	if (!access(path, F_OK))
		h->info.contiguous = 1;
	if (n > 9 && (!strcmp(h->name + n - 9, "-uncached") || !strcmp(h->name + n - 9, "_uncached")))
		h->info.uncached = 1;
}

static int list_heaps_locked(struct dmaio_ctx *ctx)
{
	struct dmaio_heap *v = NULL;
	struct dirent *de;
	int n = 0, cap = 0;
	DIR *d;

	if (ctx->heaps_listed)
		return ctx->nheaps;
	d = opendir("/dev/dma_heap");
	if (!d) {
		int err = neg_errno();

		ctx->heaps_listed = true;
		ctx->nheaps = 0;
		return err;
	}
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.' || strlen(de->d_name) >= DMAIO_NAME_MAX)
			continue;
		if (n == cap) {
			struct dmaio_heap *nv = realloc(v, sizeof(*v) * (size_t)(cap ? cap * 2 : 8));

			if (!nv) {
				closedir(d);
				free(v);
				return -ENOMEM;
			}
			v = nv;
			cap = cap ? cap * 2 : 8;
		}
		memset(&v[n], 0, sizeof(v[n]));
		strcpy(v[n].name, de->d_name);
		strcpy(v[n].info.name, de->d_name);
		v[n].fd = -1;
		classify_heap(&v[n]);
		n++;
	}
	closedir(d);
	if (n)
		qsort(v, (size_t)n, sizeof(*v), heap_cmp);
	ctx->heaps = v;
	ctx->nheaps = n;
	ctx->heaps_listed = true;
	return n;
}

struct dmaio_heap *dmaio_find_heap_locked(struct dmaio_ctx *ctx, const char *name)
{
	list_heaps_locked(ctx);
	for (int i = 0; i < ctx->nheaps; i++)
		if (!strcmp(ctx->heaps[i].name, name))
			return &ctx->heaps[i];
	return NULL;
}

/* The proposed RW_FILE ioctl, probed on a real buffer of this heap with a well-formed request:
 * read one page of a memfd. -ENOTTY: the kernel lacks it; -EINVAL: this exporter lacks it. */
static void rw_file_locked(struct dmaio_ctx *ctx, struct dmaio_heap *h, int dmabuf_fd)
{
	struct dmaio_dma_buf_rw_file rw = { 0 };
	size_t ps = (size_t)dmaio_page_size();
	int mfd, r;

	if (dmaio_heap_rw_probed(h))
		return;
	mfd = dmaio_memfd_create(NULL, ps, false, true, NULL, 0);
	if (mfd < 0)
		return; /* try again on the next allocation */
	rw.flags = DMAIO_DMA_BUF_RW_FLAGS_READ;
	rw.fd = mfd;
	rw.buf_len = ps;
	r = sys_ioctl(dmabuf_fd, DMAIO_DMA_BUF_IOCTL_RW_FILE, &rw);
	r = r < 0 ? r : 0;
	close(mfd);
	/* read without the lock by the rw-file path and the allocator: answer, then rw_probed */
	dmaio_heap_set_rw_file(h, r ? DMAIO_CAP_NO : DMAIO_CAP_YES, r);
	dmaio_heap_set_rw_probed(h);
	DBG(ctx, "heap %s: DMA_BUF_IOCTL_RW_FILE %s (%d: %s)", h->name,
	    r ? "absent" : "available", r,
	    r == -ENOTTY ? "kernel lacks the ioctl" :
	    r == -EINVAL ? "exporter lacks the op" : r ? "refused" : "ok");
}

void dmaio_probe_heap_rw_file(struct dmaio_ctx *ctx, struct dmaio_heap *h, int dmabuf_fd)
{
	pthread_mutex_lock(&ctx->lock);
	rw_file_locked(ctx, h, dmabuf_fd);
	pthread_mutex_unlock(&ctx->lock);
}

/* The NVMe namespace the io_uring dma-buf registration is tried against (the proposal serves NVMe
 * block devices only): the first /sys/block/nvme<C>n<N> whose node opens read-only O_DIRECT. Its
 * name is kept in the system info; returns the fd or -errno (-ENODEV: none). */
static int open_nvme_locked(struct dmaio_ctx *ctx)
{
	char best[sizeof(ctx->sys.uring_dmabuf_dev)] = "";
	char path[sizeof(best) + 8];
	struct dirent *de;
	int fd = -ENODEV;
	DIR *d;

	if (ctx->sys.uring_dmabuf_dev[0]) {
		fd = sys_open(ctx->sys.uring_dmabuf_dev, O_RDONLY | O_DIRECT, 0);
		return fd;
	}
	d = opendir("/sys/block");
	if (!d)
		return -ENODEV;
	while ((de = readdir(d))) {
		unsigned c, n;
		char tail;

		if (sscanf(de->d_name, "nvme%un%u%c", &c, &n, &tail) != 2 ||
		    strlen(de->d_name) + 6 > sizeof(best))
			continue;
		snprintf(path, sizeof(path), "/dev/%s", de->d_name);
		if (best[0] && strcmp(path, best) >= 0)
			continue;
		int f = sys_open(path, O_RDONLY | O_DIRECT, 0);

		if (f < 0) {
			if (fd == -ENODEV)
				fd = f;
			continue;
		}
		if (fd >= 0)
			close(fd);
		fd = f;
		strcpy(best, path);
	}
	closedir(d);
	if (fd >= 0)
		strcpy(ctx->sys.uring_dmabuf_dev, best);
	return fd;
}

/* The proposed io_uring registration of a buffer of this heap for the NVMe device; only asked
 * when the kernel knows the registration. */
static void uring_dmabuf_locked(struct dmaio_ctx *ctx, struct dmaio_heap *h, int dmabuf_fd)
{
	struct dmaio_sys_facts *s = &ctx->sys;
	int t, r;

	if (s->uring_dmabuf_kernel != DMAIO_CAP_YES)
		return;
	t = open_nvme_locked(ctx);
	if (t < 0)
		return; /* nothing to try against: UNKNOWN */
	r = dmaio_engine_dmabuf_probe(dmabuf_fd, t);
	/* -EBUSY is "not now" (as for the path, paths/uring_dmabuf.c): asked again a few times,
	 * then the answer stays unknown, never "no" */
	for (int i = 0; r == -EBUSY && i < 4; i++) {
		struct timespec ts = { 0, 100000L << i };

		nanosleep(&ts, NULL);
		r = dmaio_engine_dmabuf_probe(dmabuf_fd, t);
	}
	close(t);
	h->info.uring_dmabuf = r == -EBUSY ? DMAIO_CAP_UNKNOWN : r ? DMAIO_CAP_NO : DMAIO_CAP_YES;
	h->uring_dmabuf_err = r;
}

/* A one-page allocation proves the heap allocates; mapping it proves mmap; RW_FILE and the
 * io_uring registration are probed on the same buffer. */
void dmaio_probe_heap_locked(struct dmaio_ctx *ctx, struct dmaio_heap *h)
{
	size_t ps = (size_t)dmaio_page_size();
	int fd, r, err;
	void *p;

	if (h->probed)
		return;
	h->probed = true;
	r = dmaio_heap_alloc_fd(h, ps, &fd);
	if (r < 0) {
		h->info.alloc = DMAIO_CAP_NO;
		h->info.alloc_err = r;
		h->info.mmap = DMAIO_CAP_UNKNOWN;
		return;
	}
	h->info.alloc = DMAIO_CAP_YES;
	err = sys_mmap(ps, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0, &p);
	if (!err) {
		h->info.mmap = DMAIO_CAP_YES;
		munmap(p, ps);
	} else {
		h->info.mmap = DMAIO_CAP_NO;
	}
	rw_file_locked(ctx, h, fd);
	uring_dmabuf_locked(ctx, h, fd);
	close(fd);
}

/* ---- system ------------------------------------------------------------------------------- */
static void probe_udmabuf(struct dmaio_ctx *ctx, struct dmaio_sys_facts *s)
{
	int fd = sys_open("/dev/udmabuf", O_RDWR, 0);

	if (fd < 0) {
		s->udmabuf = DMAIO_CAP_NO;
		s->udmabuf_err = fd;
	} else {
		s->udmabuf = DMAIO_CAP_YES;
		ctx->udmabuf_fd = fd;
	}
	s->udmabuf_size_limit =
		dmaio_read_sysfs_u64("/sys/module/udmabuf/parameters/size_limit_mb", 0) << 20;
	s->udmabuf_list_limit =
		(uint32_t)dmaio_read_sysfs_u64("/sys/module/udmabuf/parameters/list_limit", 0);
}

/* MemTotal and CmaTotal of /proc/meminfo, in bytes (0 when absent). */
static void probe_memory(struct dmaio_ctx *ctx)
{
	char line[128];
	unsigned long long kb;
	FILE *f = fopen("/proc/meminfo", "re");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "MemTotal: %llu kB", &kb) == 1)
			ctx->mem_total = (uint64_t)kb << 10;
		else if (sscanf(line, "CmaTotal: %llu kB", &kb) == 1)
			ctx->cma_total = (uint64_t)kb << 10;
	}
	fclose(f);
}

/* dma_heap.mem_accounting (7.0+): Y charges heap pages to the allocating task's memory cgroup */
static int32_t read_heap_memcg(void)
{
	char v[8] = "";
	int fd = sys_open("/sys/module/dma_heap/parameters/mem_accounting", O_RDONLY, 0);
	ssize_t n;

	if (fd < 0)
		return -ENOENT;
	n = read(fd, v, sizeof(v) - 1);
	close(fd);
	if (n <= 0)
		return -ENOENT;
	return v[0] == 'Y' || v[0] == 'y' || v[0] == '1';
}

/* What every allocation and transfer needs, cheap: no allocation from any heap. */
/* The machine's costs for the path choice's model, measured once per process: a memory copy
 * and a trivial syscall, each the fastest of a few tries (the minimum is the machine, the rest
 * is other load). The copy is of 256 KiB, which the caches hold: fresh memory would measure the
 * page faults (12 us each on some virtual machines: 16 MiB took 200 ms there), so this is the
 * copy's best case, and the ratios learned from completions carry the rest. The tries come in
 * COST_ROUNDS rounds 1 ms apart: eight tries in a row fit in one stall of a virtual CPU, and
 * one process of our 6.12 VM so measured the copy 24x slower than the others did (a 3 MiB
 * copy priced at 257 ms): the learned ratios scaled its times back, but not its CPU and its
 * bounce memory's price, and bounce-direct, half rw-file's CPU per frame, was out of reach
 * (bench/RESULTS.md, session 33). Under 4 ms. */
#define COST_ROUNDS 3
static double measured_copy_ns, measured_sys_ns;
static pthread_once_t measured_once = PTHREAD_ONCE_INIT;

static void measure_costs(void)
{
	size_t n = 256u << 10;
	char *a = malloc(2 * n);
	uint64_t best_copy = UINT64_MAX, best_sys = UINT64_MAX;
	struct timespec gap = { 0, 1000000 };

	measured_copy_ns = 0.1;
	measured_sys_ns = 250;
	if (a)
		memset(a, 1, 2 * n);
	for (int round = 0; round < COST_ROUNDS; round++) {
		if (round)
			nanosleep(&gap, NULL);
		for (int i = 0; a && i < 8; i++) {
			uint64_t t0 = dmaio_now_ns();

			memcpy(a + n, a, n);
			__asm__ __volatile__("" : : "r"(a) : "memory");
			best_copy = MIN(best_copy, dmaio_now_ns() - t0);
		}
		for (int i = 0; i < 8; i++) {
			uint64_t t0 = dmaio_now_ns();

			for (int j = 0; j < 16; j++)
				syscall(SYS_getppid);
			best_sys = MIN(best_sys, dmaio_now_ns() - t0);
		}
	}
	if (a)
		measured_copy_ns = (double)MAX(best_copy, 1) / (double)n;
	free(a);
	measured_sys_ns = (double)MAX(best_sys, 16) / 16;
}

static void probe_costs(struct dmaio_ctx *ctx)
{
	if (ctx->cost.fixed) {
		dmaio_cost_params_fixed(&ctx->cost.p);
	} else {
		pthread_once(&measured_once, measure_costs);
		dmaio_cost_params_measured(measured_copy_ns, measured_sys_ns, &ctx->cost.p);
	}
	ctx->cost.calibrated = true;
	DBG(ctx, "costs (%s): syscall %.0f ns, copy %.3f ns/B (%.1f GB/s)",
	    ctx->cost.fixed ? "fixed" : "measured", ctx->cost.p.sys_ns, ctx->cost.p.copy_ns,
	    1 / ctx->cost.p.copy_ns);
}

void dmaio_probe_base_locked(struct dmaio_ctx *ctx)
{
	struct dmaio_sys_facts *s = &ctx->sys;

	if (ctx->sys_probed)
		return;
	ctx->sys_probed = true;
	memset(s, 0, sizeof(*s));
	s->page_size = (uint32_t)dmaio_page_size();
	s->nheaps = list_heaps_locked(ctx);
	probe_memory(ctx);
	probe_udmabuf(ctx, s);
	s->io_uring_disabled =
		(int32_t)dmaio_read_sysfs_u64("/proc/sys/kernel/io_uring_disabled", (uint64_t)-1);
	dmaio_engine_probe(s);
	if (s->uring_dmabuf_kernel == DMAIO_CAP_NO)
		ctx->uring_dmabuf = DMAIO_CAP_NO; /* the path is not tried at all */
	s->heap_memcg = read_heap_memcg();
	s->rw_file_kernel = DMAIO_CAP_UNKNOWN;
	s->uring_dmabuf = DMAIO_CAP_UNKNOWN;
	s->drm = DMAIO_CAP_UNKNOWN;
	s->hugetlb_memfd = DMAIO_CAP_UNKNOWN;
	s->udmabuf_huge = DMAIO_CAP_UNKNOWN;
	probe_costs(ctx);
}

void dmaio_probe_drm_locked(struct dmaio_ctx *ctx)
{
	struct dmaio_sys_facts *s = &ctx->sys;
	int fd;

	dmaio_probe_base_locked(ctx);
	if (s->drm != DMAIO_CAP_UNKNOWN)
		return;
	fd = dmaio_drm_find_node(s->drm_node, sizeof(s->drm_node));
	s->drm = fd >= 0 ? DMAIO_CAP_YES : DMAIO_CAP_NO;
	if (fd >= 0)
		ctx->drm_fd = fd;
}

void dmaio_probe_hugetlb_locked(struct dmaio_ctx *ctx)
{
	struct dmaio_sys_facts *s = &ctx->sys;
	size_t sz;
	int fd;

	dmaio_probe_base_locked(ctx);
	if (s->hugetlb_memfd != DMAIO_CAP_UNKNOWN)
		return;
	s->huge_page_size = dmaio_huge_page_size();
	s->hugetlb_memfd = DMAIO_CAP_NO;
	s->udmabuf_huge = DMAIO_CAP_NO;
	if (!s->huge_page_size)
		return;
	fd = dmaio_memfd_create(NULL, s->huge_page_size, true, true, &sz, 0);
	if (fd < 0)
		return;
	close(fd);
	s->hugetlb_memfd = DMAIO_CAP_YES;
	if (ctx->udmabuf_fd >= 0) {
		struct dmaio_buf b = { .fd = -1, .memfd = -1 };

		/* the provider proves it end to end, seals and all */
		if (!dmaio_udmabuf_make(ctx, ctx->udmabuf_fd, NULL, s->huge_page_size, true,
					s->udmabuf_size_limit, s->udmabuf_list_limit, &b)) {
			s->udmabuf_huge = DMAIO_CAP_YES;
			close(b.fd);
			close(b.memfd);
		}
	}
}

void dmaio_probe_sys_locked(struct dmaio_ctx *ctx)
{
	struct dmaio_sys_facts *s = &ctx->sys;

	dmaio_probe_base_locked(ctx);
	dmaio_probe_hugetlb_locked(ctx);
	dmaio_probe_drm_locked(ctx);
	s->cachestat = dmaio_has_cachestat();
	for (int i = 0; i < ctx->nheaps; i++) {
		struct dmaio_heap *h = &ctx->heaps[i];
		int32_t rw, rw_err;

		dmaio_probe_heap_locked(ctx, h);
		rw = dmaio_heap_rw_file(h, &rw_err);
		if (rw == DMAIO_CAP_YES)
			s->rw_file_kernel = DMAIO_CAP_YES;
		else if (rw_err == -ENOTTY)
			s->rw_file_kernel = DMAIO_CAP_NO;
		else if (rw_err == -EINVAL && s->rw_file_kernel == DMAIO_CAP_UNKNOWN)
			s->rw_file_kernel = DMAIO_CAP_YES; /* the core knows it, this exporter not */
	}
	/* io_uring dma-buf registration: the heaps' answers (each tried against an NVMe device) */
	if (s->uring_dmabuf_kernel != DMAIO_CAP_YES) {
		s->uring_dmabuf = DMAIO_CAP_NO; /* uring_dmabuf_err says why */
		return;
	}
	s->uring_dmabuf = DMAIO_CAP_UNKNOWN;
	s->uring_dmabuf_err = 0;
	for (int i = 0; i < ctx->nheaps; i++) {
		struct dmaio_heap *h = &ctx->heaps[i];

		if (h->info.uring_dmabuf == DMAIO_CAP_YES) {
			s->uring_dmabuf = DMAIO_CAP_YES;
			s->uring_dmabuf_err = 0;
			break;
		}
		if (h->info.uring_dmabuf == DMAIO_CAP_NO && s->uring_dmabuf == DMAIO_CAP_UNKNOWN) {
			s->uring_dmabuf = DMAIO_CAP_NO;
			s->uring_dmabuf_err = h->uring_dmabuf_err;
		}
	}
}

