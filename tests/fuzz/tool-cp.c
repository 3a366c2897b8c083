/* SPDX-License-Identifier: MIT */
/* dmaio-cp's option parser (examples/dmaio-cp.c, its main renamed), for fuzz-tool-options.c. */
#include <stdio.h>

int dmaio_cp_main(int argc, char **argv);
#define main dmaio_cp_main
#include "../../examples/dmaio-cp.c"
#undef main

#include "fuzz.h"
#include "tool-options.h"

int fuzz_parse_cp(int argc, char **argv)
{
	struct cp_opts o;
	int r;

	verbose = false;
	r = parse_options(argc, argv, &o);
	fuzz_tool_loud();
	if (r < 0) {
		FUZZ_CHECK(o.src && o.dst && optind == argc - 2, "dmaio-cp goes on without SRC and DST");
		FUZZ_CHECK(o.interval_ms >= -1, "progress interval %ld", o.interval_ms);
		FUZZ_CHECK(!o.flags || ((o.flags & DMAIO_RW_NO_FALLBACK) &&
					(o.flags & DMAIO_RW_PATH_MASK) < DMAIO_PATH_COUNT),
			   "flags 0x%x", o.flags);
	}
	return r;
}
