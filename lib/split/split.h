/* SPDX-License-Identifier: MIT */
/*
 * Layer "split": alignment splitting. The part of a range that O_DIRECT can take (the aligned
 * middle) and the edges it cannot (head, tail), and the pieces a path hands to the engine.
 */
#ifndef DMAIO_SPLIT_H
#define DMAIO_SPLIT_H

#include "../dmaio-types.h"

/* [file_off, file_off + len) as head | mid | tail: mid starts at the first align-multiple file
 * offset, is a multiple of align and ends at or before limit */
void dmaio_split_range(uint64_t file_off, uint64_t len, uint64_t limit, uint32_t align,
		       struct dmaio_split *s);
/* split [r->start, r->end) of a request for its current path (r->split, r->cursor) */
void dmaio_split_req(struct dmaio_req *r, uint32_t align, bool direct_ok);
/* The next piece at r->cursor: [*rel, *rel + *n), inside the direct middle or not. Direct pieces
 * are at most chunk bytes, the others at most edge_chunk. false when everything is handed out. */
bool dmaio_split_next(const struct dmaio_req *r, uint64_t chunk, uint64_t edge_chunk,
		      uint64_t *rel, uint64_t *n, bool *direct);

#endif
