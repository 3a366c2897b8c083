/* SPDX-License-Identifier: MIT */
/* dmaio-record's option parser (examples/dmaio-record.c, its main renamed), for
 * fuzz-tool-options.c. */
#include <stdio.h>

int dmaio_record_main(int argc, char **argv);
#define main dmaio_record_main
#include "../../examples/dmaio-record.c"
#undef main

#include "fuzz.h"
#include "tool-options.h"

int fuzz_parse_record(int argc, char **argv)
{
	struct rec r;
	int rc;

	memset(&r, 0, sizeof(r));
	rc = parse_options(argc, argv, &r);
	fuzz_tool_loud();
	if (rc >= 0)
		return rc;
	FUZZ_CHECK(r.out && optind == argc - 1, "dmaio-record goes on without OUT");
	FUZZ_CHECK(r.width >= 1 && r.width <= 16384 && r.height >= 1 && r.height <= 16384,
		   "size %ux%u", r.width, r.height);
	FUZZ_CHECK(r.frames >= 1 && r.frames <= 10000000, "frames %u", r.frames);
	FUZZ_CHECK(r.nbufs >= 2 && r.nbufs <= MAX_BUFS, "buffers %u", r.nbufs);
	FUZZ_CHECK(r.depth >= 1 && r.depth <= DMAIO_QUEUE_DEPTH_MAX, "depth %u", r.depth);
	FUZZ_CHECK(r.fps >= 0 && r.fps <= 10000, "fps %g", r.fps);
	FUZZ_CHECK(r.v4l2_fmt && r.drm_fmt, "format %x/%x", r.v4l2_fmt, r.drm_fmt);
	return rc;
}
