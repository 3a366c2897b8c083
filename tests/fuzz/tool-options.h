/* SPDX-License-Identifier: MIT */
/* The option parsers of the tools in examples/, each compiled from the tool's own source with its
 * main renamed (tool-*.c), for fuzz-tool-options.c. Each returns what the tool's parse_options()
 * returned (-1: the tool goes on; else its exit status) after checking what it parsed. */
#ifndef DMAIO_FUZZ_TOOL_OPTIONS_H
#define DMAIO_FUZZ_TOOL_OPTIONS_H

#include <stdio.h>

int fuzz_parse_cp(int argc, char **argv);
int fuzz_parse_info(int argc, char **argv);
int fuzz_parse_load(int argc, char **argv);
int fuzz_parse_record(int argc, char **argv);

/* While a parser runs, stdout and stderr go to /dev/null (its usage texts); the checks after it
 * call this first, so that a failure is seen. */
void fuzz_tool_loud(void);

#endif
