/* SPDX-License-Identifier: MIT */
/*
 * fuzz-tool-options: the option parsers of dmaio-cp, dmaio-info, dmaio-load and dmaio-record
 * (each tool's parse_options(), compiled from the tool's source: tool-*.c) on command lines from
 * the input: its first byte picks the tool, the rest is the arguments, separated by NUL bytes
 * (at most 64). A parser returns -1 (the tool goes on) or an exit status of 0 or 2; what it
 * parsed when the tool goes on is checked against the ranges its --help gives (tool-*.c). The
 * tools' output goes to /dev/null meanwhile (DMAIO_FUZZ_VERBOSE=1 keeps it).
 */
#include <getopt.h>
#include <stdbool.h>
#include <string.h>

#include "fuzz.h"
#include "tool-options.h"

#define MAX_ARGS 64

static FILE *saved_out, *saved_err;

void fuzz_tool_loud(void)
{
	if (saved_out) {
		stdout = saved_out;
		stderr = saved_err;
	}
}

static const struct {
	const char *name;
	int (*parse)(int argc, char **argv);
} tools[] = {
	{ "dmaio-cp", fuzz_parse_cp },
	{ "dmaio-info", fuzz_parse_info },
	{ "dmaio-load", fuzz_parse_load },
#ifdef FUZZ_HAVE_RECORD
	{ "dmaio-record", fuzz_parse_record },
#endif
};
#define NTOOLS (sizeof(tools) / sizeof(tools[0]))

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *devnull;
	static bool verbose;
	char *args, *argv[MAX_ARGS + 2];
	int argc = 0, r;
	size_t t;

	if (size == 0)
		return 0;
	if (!devnull) {
		verbose = getenv("DMAIO_FUZZ_VERBOSE") != NULL;
		devnull = fopen("/dev/null", "we");
		if (!devnull)
			FUZZ_DIE("/dev/null: %m");
	}
	t = data[0] % NTOOLS;
	/* the arguments: the rest of the input, NUL-terminated pieces */
	args = malloc(size);
	if (!args)
		FUZZ_DIE("out of memory");
	memcpy(args, data + 1, size - 1);
	args[size - 1] = 0;
	argv[argc++] = (char *)tools[t].name;
	for (size_t i = 0; i + 1 < size && argc <= MAX_ARGS;) {
		argv[argc++] = args + i;
		i += strlen(args + i) + 1;
	}
	argv[argc] = NULL;

	optind = 0; /* glibc: start over (the tools run once, from optind 1) */
	opterr = 1;
	saved_out = stdout;
	saved_err = stderr;
	if (!verbose)
		stdout = stderr = devnull;
	r = tools[t].parse(argc, argv);
	fuzz_tool_loud();
	if (verbose)
		fprintf(stderr, "%s: %d\n", tools[t].name, r);
	FUZZ_CHECK(r == -1 || r == 0 || r == 2, "%s: exit status %d", tools[t].name, r);
	free(args);
	return 0;
}
