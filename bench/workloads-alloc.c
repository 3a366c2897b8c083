// SPDX-License-Identifier: MIT
/*
 * --tests alloc,mmap: allocation time per provider (dma-heaps, udmabuf, udmabuf-huge, DRM dumb
 * buffers, memfd) through dmaio_buf_alloc against the raw kernel loop of baselines.c, each run
 * allocating --alloc N buffers, keeping them, then freeing them (library and raw alternating
 * first); and the time to allocate, map and touch one byte per page of a --mmap-size buffer,
 * with anonymous memory as the reference.
 */
#include "bench.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define MAX_PROVS 24

struct prov {
	char name[64];
	enum prov_type type;
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

struct alloc_state {
	struct prov provs[MAX_PROVS];
	int nprovs;
	struct dmaio_sys_info sys;
	int count;               /* buffers per run (--alloc, less when memory is short) */
	bool mmap_skipped;
	int anon_n;
	double anon_ms[MAX_RUNS];
};

static void add_prov(struct alloc_state *a, const char *name, enum prov_type t, bool dmabuf)
{
	struct prov *p = &a->provs[a->nprovs++];

	snprintf(p->name, sizeof(p->name), "%.63s", name);
	p->type = t;
	p->dmabuf = dmabuf;
}

void alloc_setup(struct bench *b)
{
	struct alloc_state *a = xcalloc(1, sizeof(*a));
	int n, i;

	b->al = a;
	a->sys.struct_size = sizeof(a->sys);
	dmaio_ctx_get_system(NULL, &a->sys);
	n = dmaio_ctx_heap_count(NULL);
	for (i = 0; i < n && i < MAX_PROVS - 4; i++) {
		struct dmaio_heap_info hi = { .struct_size = sizeof(hi) };
		int r = dmaio_ctx_get_heap(NULL, (uint32_t)i, &hi);

		if (r < 0) {
			note(b, "heap %d: skipped, dmaio_ctx_get_heap failed (%s)", i, errname(r));
			continue;
		}
		if (hi.alloc != DMAIO_CAP_YES) {
			note(b, "heap %s: skipped, a one-page allocation fails (%s)", hi.name, errname(hi.alloc_err));
			continue;
		}
		add_prov(a, hi.name, P_HEAP, true);
	}
	if (n <= 0)
		note(b, "dma-heaps: none here (%s): heap rows skipped", n < 0 ? errname(n) : "empty /dev/dma_heap");
	if (a->sys.udmabuf == DMAIO_CAP_YES)
		add_prov(a, "udmabuf", P_UDMABUF, true);
	else
		note(b, "udmabuf: skipped, /dev/udmabuf %s",
		     a->sys.udmabuf_err == -ENOENT ? "absent" : errname(a->sys.udmabuf_err));
	if (a->sys.udmabuf_huge == DMAIO_CAP_YES)
		add_prov(a, "udmabuf-huge", P_UDMABUF_HUGE, true);
	if (a->sys.drm == DMAIO_CAP_YES)
		add_prov(a, "drm", P_DRM, true);
	else
		note(b, "drm: skipped, no DRM node with dumb buffers and PRIME");
	add_prov(a, "memfd", P_MEMFD, false);
}

static int lib_alloc(struct prov *p, uint64_t size, int count, struct dmaio_buf **bufs, int *nb)
{
	int i, ret;

	for (i = 0; i < count; i++) {
		ret = bench_alloc(NULL, p->name, (size_t)size, p->dmabuf ? DMAIO_ALLOC_DMABUF_ONLY : 0, &bufs[i]);
		if (ret < 0)
			return ret;
		(*nb)++;
	}
	return 0;
}

void alloc_run(struct bench *b)
{
	struct alloc_state *a = b->al;
	const struct opts *o = &b->o;
	struct dmaio_buf *bufs[RAW_MAX];
	struct raw_set *rs = xcalloc(1, sizeof(*rs));
	int devfd[MAX_PROVS];
	uint64_t avail = mem_available();
	int count = o->alloc_count, r, i, w, j;

	if (count > RAW_MAX)
		count = RAW_MAX;
	if (avail && (uint64_t)count * o->alloc_size > avail / 2) {
		int c = (int)(avail / 2 / o->alloc_size);

		note(b, "alloc: %d x %" PRIu64 " MiB reduced to %d x %" PRIu64 " MiB (%" PRIu64 " MiB available)", count,
		     o->alloc_size / MIB, c, o->alloc_size / MIB, avail / MIB);
		count = c < 1 ? 1 : c;
	}
	a->count = count;
	for (i = 0; i < a->nprovs; i++) {
		struct prov *p = &a->provs[i];
		int nb = 0, ret;

		devfd[i] = raw_open(p->type, p->name, a->sys.drm_node);
		p->raw_ok = devfd[i] >= 0;
		if (!p->raw_ok)
			snprintf(p->raw_note, sizeof(p->raw_note), "raw loop: open failed (%s)", errname(devfd[i]));
		if (p->type == P_UDMABUF && a->sys.udmabuf_size_limit && o->alloc_size > a->sys.udmabuf_size_limit) {
			p->err[0] = p->err[1] = -EFBIG;
			continue;
		}
		/* warm-up, also for the library's cached device fds */
		ret = lib_alloc(p, o->alloc_size, 1, bufs, &nb);
		while (nb)
			dmaio_buf_free(bufs[--nb]);
		if (ret < 0)
			p->err[0] = ret;
		if (p->raw_ok) {
			ret = raw_alloc(p->type, devfd[i], o->alloc_size, 1, rs);
			raw_free(rs);
			if (ret < 0)
				p->err[1] = ret;
		}
	}
	for (r = 0; r < o->runs; r++) {
		for (i = 0; i < a->nprovs; i++) {
			struct prov *p = &a->provs[i];

			for (w = 0; w < 2; w++) {
				int which = (r % 2) ^ w; /* alternate library/raw first */
				uint64_t t0, t1;
				int ret, nb = 0;

				if (p->err[which] || (which == 1 && !p->raw_ok))
					continue;
				t0 = now_ns();
				if (which == 0)
					ret = lib_alloc(p, o->alloc_size, count, bufs, &nb);
				else
					ret = raw_alloc(p->type, devfd[i], o->alloc_size, count, rs);
				t1 = now_ns();
				if (which == 0) {
					p->err_at[0] = nb;
					for (j = 0; j < nb; j++)
						dmaio_buf_free(bufs[j]);
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
	for (i = 0; i < a->nprovs; i++)
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

void mmap_run(struct bench *b)
{
	struct alloc_state *a = b->al;
	const struct opts *o = &b->o;
	uint64_t avail = mem_available(), size = o->mmap_size;
	int r, i;

	if (avail && size > avail / 2) {
		note(b, "mmap: %" PRIu64 " MiB is more than half the available memory (%" PRIu64 " MiB): skipped",
		     size / MIB, avail / MIB);
		a->mmap_skipped = true;
		return;
	}
	for (r = 0; r < o->runs; r++) {
		for (i = 0; i < a->nprovs; i++) {
			struct prov *p = &a->provs[i];
			struct dmaio_buf *buf;
			void *addr;
			uint64_t t0, t1, t2;
			int ret;

			if (p->merr)
				continue;
			if ((p->type == P_UDMABUF || p->type == P_UDMABUF_HUGE) && a->sys.udmabuf_size_limit &&
			    size > a->sys.udmabuf_size_limit) {
				p->merr = -EFBIG;
				snprintf(p->mnote, sizeof(p->mnote), "above udmabuf size_limit_mb=%" PRIu64
					 " (raise /sys/module/udmabuf/parameters/size_limit_mb)",
					 a->sys.udmabuf_size_limit / MIB);
				continue;
			}
			t0 = now_ns();
			ret = bench_alloc(NULL, p->name, (size_t)size, p->dmabuf ? DMAIO_ALLOC_DMABUF_ONLY : 0, &buf);
			t1 = now_ns();
			if (ret < 0) {
				p->merr = ret;
				snprintf(p->mnote, sizeof(p->mnote), "alloc: %s", strerror(-ret));
				continue;
			}
			ret = dmaio_buf_map(buf, &addr);
			if (ret == 0)
				ret = dmaio_buf_sync_begin(buf, DMAIO_SYNC_WRITE);
			if (ret == 0) {
				touch_pages(addr, size);
				ret = dmaio_buf_sync_end(buf, DMAIO_SYNC_WRITE);
			}
			t2 = now_ns();
			dmaio_buf_free(buf);
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
			void *m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

			if (m != MAP_FAILED) {
				touch_pages(m, size);
				a->anon_ms[a->anon_n++] = (double)(now_ns() - t0) / 1e6;
				munmap(m, size);
			}
		}
	}
}

void alloc_report(struct bench *b)
{
	struct alloc_state *a = b->al;
	const struct opts *o = &b->o;
	int sec = report_section(&b->rep, "alloc"), i, w;

	section_title(&b->rep, sec, "allocation of %d x %" PRIu64 " MiB (all kept, then freed; ms, median [min-max] "
		      "of %d runs)", a->count, o->alloc_size / MIB, o->runs);
	for (i = 0; i < a->nprovs; i++) {
		struct prov *p = &a->provs[i];

		for (w = 0; w < 2; w++) {
			struct row *x = report_row(&b->rep, sec, "alloc");

			row_str(x, COL_PROVIDER, "%s", p->name);
			row_u64(x, COL_SIZE, o->alloc_size);
			row_str(x, COL_METHOD, "%s", w ? "raw" : "library");
			row_u64(x, COL_COUNT, (uint64_t)a->count);
			x->ms_decimals = 3;
			if (p->err[w] || !p->n[w]) {
				x->status = ROW_FAILED;
				if (w == 1 && !p->raw_ok)
					snprintf(x->note, sizeof(x->note), "%s", p->raw_note);
				else if (p->err[w] == -EFBIG && p->type == P_UDMABUF)
					snprintf(x->note, sizeof(x->note), "skipped: %" PRIu64 " MiB above size_limit_mb=%" PRIu64,
						 o->alloc_size / MIB, a->sys.udmabuf_size_limit / MIB);
				else
					snprintf(x->note, sizeof(x->note), "failed at buffer %d: %s", p->err_at[w] + 1,
						 strerror(-p->err[w]));
				continue;
			}
			row_runs(x, p->n[w], NULL, NULL, p->ms[w]);
			x->desc = w ? raw_desc(p->type) : "dmaio_buf_alloc";
			if (w == 0 && p->n[1] && !p->err[1])
				x->extra = median(p->ms[0], p->n[0]) / median(p->ms[1], p->n[1]);
		}
	}
}

void mmap_report(struct bench *b)
{
	struct alloc_state *a = b->al;
	const struct opts *o = &b->o;
	int sec, i;
	struct row *x;

	if (a->mmap_skipped)
		return;
	sec = report_section(&b->rep, "mmap");
	section_title(&b->rep, sec, "map and touch one byte per page of a %" PRIu64 " MiB buffer (ms, median "
		      "[min-max] of %d runs)", o->mmap_size / MIB, o->runs);
	for (i = 0; i < a->nprovs; i++) {
		struct prov *p = &a->provs[i];

		x = report_row(&b->rep, sec, "mmap");
		row_str(x, COL_PROVIDER, "%s", p->name);
		row_u64(x, COL_SIZE, o->mmap_size);
		row_str(x, COL_METHOD, "map+touch");
		if (p->merr || !p->mn) {
			x->status = ROW_SKIPPED;
			snprintf(x->note, sizeof(x->note), "%s", p->mnote[0] ? p->mnote : "no result");
			continue;
		}
		row_runs(x, p->mn, NULL, NULL, p->touch_ms);
		x->extra = median(p->alloc_ms, p->mn);
	}
	if (a->anon_n) {
		x = report_row(&b->rep, sec, "mmap");
		row_str(x, COL_PROVIDER, "anonymous");
		row_u64(x, COL_SIZE, o->mmap_size);
		row_str(x, COL_METHOD, "map+touch");
		row_runs(x, a->anon_n, NULL, NULL, a->anon_ms);
		x->desc = "(reference: anonymous mmap + touch)";
	}
}

void alloc_free(struct bench *b)
{
	free(b->al);
	b->al = NULL;
}
