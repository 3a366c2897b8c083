/* SPDX-License-Identifier: MIT */
/* Alignment splitting: the part of a range that O_DIRECT can take, and the edges it cannot. */
#include "split.h"

/*
 * [file_off, file_off + len) split into head | mid | tail where mid starts at the first
 * align-multiple file offset, is a multiple of align, and ends at or before limit (the file size
 * for reads: direct reads never reach past end of file, so no byte past it lands in the buffer).
 */
void dmaio_split_range(uint64_t file_off, uint64_t len, uint64_t limit, uint32_t align,
		       struct dmaio_split *s)
{
	uint64_t start, end, a = align ? align : 1;

	s->head = s->mid = 0;
	s->tail = len;
	start = round_up_u64(file_off, a);
	end = file_off + len;
	if (end > limit)
		end = limit;
	end -= end % a;
	if (start >= end || start - file_off >= len) {
		s->head = len;
		s->tail = 0;
		return;
	}
	s->head = (size_t)(start - file_off);
	s->mid = (size_t)(end - start);
	s->tail = len - s->head - s->mid;
}

void dmaio_split_req(struct dmaio_req *r, uint32_t align, bool direct_ok)
{
	uint64_t limit = r->write ? UINT64_MAX : dmaio_file_size_load(r->file);

	r->cursor = r->start;
	r->direct_ok = direct_ok;
	if (direct_ok)
		dmaio_split_range(r->file_off + r->start, r->end - r->start, limit, align, &r->split);
	else
		r->split = (struct dmaio_split){ .head = r->end - r->start };
}

bool dmaio_split_next(const struct dmaio_req *r, uint64_t chunk, uint64_t edge_chunk,
		      uint64_t *rel, uint64_t *n, bool *direct)
{
	uint64_t mid_start = r->start + r->split.head, mid_end = mid_start + r->split.mid;
	uint64_t c = r->cursor;

	if (c >= r->end)
		return false;
	*rel = c;
	if (c < mid_start) {
		*n = MIN(mid_start - c, edge_chunk);
		*direct = false;
	} else if (c < mid_end) {
		*n = MIN(mid_end - c, chunk);
		*direct = true;
	} else {
		*n = MIN(r->end - c, edge_chunk);
		*direct = false;
	}
	return true;
}
