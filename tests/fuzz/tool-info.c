/* SPDX-License-Identifier: MIT */
/* dmaio-info's option parser (examples/dmaio-info.c, its main renamed), for fuzz-tool-options.c. */
#include <stdio.h>

int dmaio_info_main(int argc, char **argv);
#define main dmaio_info_main
#include "../../examples/dmaio-info.c"
#undef main

#include "fuzz.h"
#include "tool-options.h"

int fuzz_parse_info(int argc, char **argv)
{
	bool json = true;
	int r = parse_options(argc, argv, &json);

	fuzz_tool_loud();

	FUZZ_CHECK(r >= 0 || optind <= argc, "optind %d of %d arguments", optind, argc);
	return r;
}
