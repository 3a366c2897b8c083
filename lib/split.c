/* SPDX-License-Identifier: MIT */
/* Alignment splitting: the part of a range that O_DIRECT can take, and the edges it cannot. */
#include "dmaio-private.h"

/*
 * [file_off, file_off + len) split into head | mid | tail where mid starts at the first
 * align-multiple file offset, is a multiple of align, and ends at or before limit (the file size
 * for reads: direct reads never reach past end of file, so no byte past it lands in the buffer).
 */
void dmaio_split_range(uint64_t file_off, size_t len, uint64_t limit, uint32_t align,
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

/* Run a request as head (buffered) | aligned middle (mid callback) | tail (buffered), starting at
 * r->done, so a path that took over after a fallback resumes where the last one stopped. */
int dmaio_req_split_run(struct dmaio_req *r, uint32_t align,
			int (*mid)(struct dmaio_req *r, uint64_t rel, size_t n, void *arg), void *arg)
{
	uint64_t rel = r->done;
	uint64_t limit = r->write ? UINT64_MAX : r->file->size;
	struct dmaio_split s;
	int err;

	dmaio_split_range(r->file_off + rel, r->len - rel, limit, align, &s);
	err = dmaio_req_buffered(r, rel, s.head, true);
	if (err || r->eof)
		return err;
	if (s.mid) {
		err = mid(r, rel + s.head, s.mid, arg);
		if (err || r->eof)
			return err;
	}
	return dmaio_req_buffered(r, rel + s.head + s.mid, s.tail, true);
}
