/* SPDX-License-Identifier: MIT */
/* Helpers shared by the paths: the buffer's mapping, transfers through it, refusals. */
#include <linux/dma-buf.h>
#include <string.h>

#include "path.h"
#include "../engine/engine.h"
#include "../providers/provider.h"
#include "../split/split.h"
#include "../sys/sys.h"

int dmaio_path_map(struct dmaio_req *r)
{
	int err;

	if (!r->addr) {
		err = dmaio_buf_get_addr(r->buf, &r->addr);
		if (err)
			return err;
	}
	if (r->cpu_synced || !dmaio_buf_is_dmabuf(r->buf))
		return 0;
	err = dmaio_sync_ioctl(r->buf->fd, DMA_BUF_SYNC_START |
			       (r->write ? DMA_BUF_SYNC_READ : DMA_BUF_SYNC_WRITE));
	if (!err)
		r->cpu_synced = true;
	return err;
}

int dmaio_path_unmappable(const struct dmaio_req *r, const char **why)
{
	int err = __atomic_load_n(&r->buf->map_err, __ATOMIC_RELAXED);

	if (err && r->buf->memfd < 0) {
		*why = "the buffer's exporter gives no CPU mapping (its mmap refused)";
		return err;
	}
	return 0;
}

/* The direct middle starts and ends on page boundaries even when the file takes smaller O_DIRECT
 * units: the page-cache edges (of this range and of ranges next to it, in flight at the same
 * time) then never share a page with direct I/O, whose invalidation would race with them. */
uint32_t dmaio_path_align(const struct dmaio_req *r)
{
	uint32_t a = r->write ? r->file->off_align : r->file->roff_align;
	uint32_t ps = (uint32_t)dmaio_page_size();

	return a > ps ? a : ps;
}

void dmaio_path_op_mapped(struct dmaio_req *r, struct dmaio_op *op, uint64_t rel, uint64_t n,
			  bool direct)
{
	op->kind = r->write ? DMAIO_OPK_WRITE : DMAIO_OPK_READ;
	op->fd = direct ? r->file->dfd : r->file->bfd;
	op->mem = r->addr + r->buf_off + rel;
	op->len = (uint32_t)n;
	op->off = r->file_off + rel;
	op->direct = direct;
	op->rest_fd = direct && r->write ? r->file->bfd : -1;
	op->align = direct ? dmaio_path_align(r) : 1;
	op->edge = !direct && r->direct_ok;
	op->rel = rel;
}

bool dmaio_path_refuses_direct(int err)
{
	switch (-err) {
	case EINVAL:     /* O_DIRECT alignment or a file that takes no O_DIRECT after all */
	case EOPNOTSUPP: /* feature absent */
	case ENOSYS:     /* io_uring op compiled out or filtered by seccomp */
	case EPERM:      /* io_uring_disabled, seccomp */
	case ENODEV:     /* no CPU mapping */
		return true;
	default:
		return false;
	}
}

bool dmaio_path_congruent(const struct dmaio_req *r, uint32_t mem_align, struct dmaio_split *s)
{
	uint64_t limit = r->write ? UINT64_MAX : dmaio_file_size_load(r->file);

	dmaio_split_range(r->file_off + r->start, r->len - r->start, limit, dmaio_path_align(r), s);
	return !s->mid || !mem_align || (r->buf_off + r->start + s->head) % mem_align == 0;
}

static uint64_t pieces(uint64_t n, uint64_t chunk)
{
	return n ? (n + chunk - 1) / chunk : 0;
}

uint64_t dmaio_path_shape(const struct dmaio_req *r, int cached_pct, uint32_t align,
			  bool direct_ok, uint64_t chunk, uint64_t edge, struct dmaio_cost_shape *sh)
{
	uint64_t off = r->file_off + r->start, len = r->len - r->start, size, edges, miss;
	struct dmaio_split s = { .head = len };

	memset(sh, 0, sizeof(*sh));
	if (!r->write) {
		/* a read moves nothing past the end of file known now */
		size = dmaio_file_size_load(r->file);
		len = off >= size ? 0 : MIN(len, size - off);
		s.head = len;
	}
	if (direct_ok)
		dmaio_split_range(off, len, r->write ? UINT64_MAX : off + len, align, &s);
	edges = s.head + s.tail;
	sh->ops = pieces(s.head, edge) + pieces(s.mid, chunk) + pieces(s.tail, edge);
	/* the edges go through the page cache: copied, and read from the storage where the page
	 * cache misses them, written back on writes. A range counts as cached only when nearly
	 * all of it is (90%): a partial residency is mostly readahead of reads in flight, pages
	 * cachestat counts while their I/O still runs, and pricing them as cached made one
	 * buffered read pull its neighbours to buffered too (bench/RESULTS.md, C4) */
	miss = r->write || cached_pct < 90 ? edges : edges * (uint64_t)(100 - MIN(cached_pct, 100)) / 100;
	sh->dev = s.mid + miss;
	sh->copy = edges;
	sh->pcache = miss;
	return s.mid;
}
