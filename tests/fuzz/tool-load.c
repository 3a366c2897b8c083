/* SPDX-License-Identifier: MIT */
/* dmaio-load's option parser (examples/dmaio-load.c, its main renamed), for fuzz-tool-options.c. */
#include <stdio.h>

int dmaio_load_main(int argc, char **argv);
#define main dmaio_load_main
#include "../../examples/dmaio-load.c"
#undef main

#include "fuzz.h"
#include "tool-options.h"

int fuzz_parse_load(int argc, char **argv)
{
	struct load_cli o;
	int r = parse_options(argc, argv, &o);

	fuzz_tool_loud();
	if (r >= 0)
		return r;
	if (o.gen) {
		FUZZ_CHECK(o.shards && o.ntensors && (!strcmp(o.format, "st") ||
						      !strcmp(o.format, "gguf")),
			   "--generate with %u shards, %u tensors, format %s", o.shards, o.ntensors,
			   o.format);
		return r;
	}
	FUZZ_CHECK(optind < argc, "dmaio-load goes on without a file");
	FUZZ_CHECK(o.lo.struct_size == sizeof(o.lo) && o.lo.mode <= DMAIO_LOAD_PACKED,
		   "load options: size %u mode %u", o.lo.struct_size, o.lo.mode);
	FUZZ_CHECK(o.lo.mode != DMAIO_LOAD_WHOLE || o.lo.align == 0, "WHOLE with align %u",
		   o.lo.align);
	FUZZ_CHECK(!o.lo.alloc || (o.lo.alloc == &o.ao && o.ao.providers == o.providers &&
				   o.providers[0] && !o.providers[1]),
		   "the provider list");
	FUZZ_CHECK(!o.lo.rw_flags || ((o.lo.rw_flags & DMAIO_RW_NO_FALLBACK) &&
				      (o.lo.rw_flags & DMAIO_RW_PATH_MASK) < DMAIO_PATH_COUNT),
		   "rw_flags 0x%x", o.lo.rw_flags);
	return r;
}
