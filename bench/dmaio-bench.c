// SPDX-License-Identifier: MIT
/*
 * dmaio-bench: bandwidth and CPU cost of every libdmaio data path against baselines written here
 * (workloads-io.c, baselines.c), allocation time per provider against the raw kernel loops and
 * the time to map and touch a large buffer (workloads-alloc.c), and the workloads of the
 * asynchronous API (workloads-queue.c), lib:auto against every forced path over providers, buffer
 * and range sizes (workloads-choice.c). Options: options.c; what a run found: report.c, written
 * as text, CSV or JSON by output-*.c. The target verdicts are not computed here: bench/verdict.py
 * reads them from the CSV or the JSON.
 */
#include "bench.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static void config(struct bench *b)
{
	const struct opts *o = &b->o;
	struct report *r = &b->rep;
	char list[512];
	size_t l = 0;
	int i;

	report_cfg_num(r, "runs", "%d", o->runs);
	report_cfg_str(r, "dir", "%s", o->dir);
	if (o->device)
		report_cfg_str(r, "device", "%s", o->device);
	list[0] = '\0';
	for (i = 0; i < o->nheaps; i++)
		l += (size_t)snprintf(list + l, sizeof(list) - l, "%s%s", i ? "," : "", o->heaps[i] ? o->heaps[i] : "default");
	report_cfg_str(r, "heaps", "%s", list);
	l = 0;
	list[0] = '\0';
	for (i = 0; i < 7; i++) {
		static const char *const names[] = { "io", "alloc", "mmap", "ranges", "files",
						     "frames", "choice" };
		const bool on[] = { o->test_io, o->test_alloc, o->test_mmap, o->test_ranges,
				    o->test_files, o->test_frames, o->test_choice };

		if (on[i])
			l += (size_t)snprintf(list + l, sizeof(list) - l, "%s%s", l ? "," : "", names[i]);
	}
	report_cfg_str(r, "tests", "%s", list);
	report_cfg_num(r, "jobs", "%u", o->jobs);
	report_cfg_num(r, "qd", "%u", o->qd);
	report_cfg_num(r, "chunk_bytes", "%llu", (unsigned long long)o->chunk);
	report_cfg_num(r, "depth", "%u", o->depth);
	report_cfg_num(r, "verify", "%s", o->verify ? "true" : "false");
	report_cfg_num(r, "fresh_buffers", "%s", o->fresh ? "true" : "false");
	if (o->test_choice) {
		for (i = 0; i < 2; i++) {
			const uint64_t *v = i ? o->choice_ranges : o->choice_bufs;
			int n = i ? o->nchoice_ranges : o->nchoice_bufs;

			l = 0;
			list[0] = '\0';
			for (int j = 0; j < n && l < sizeof(list) - 24; j++)
				l += (size_t)snprintf(list + l, sizeof(list) - l, "%s%llu",
						      j ? "," : "", (unsigned long long)v[j]);
			report_cfg_str(r, i ? "choice_range_bytes" : "choice_buffer_bytes", "%s",
				       list);
		}
		report_cfg_num(r, "choice_runs", "%d", o->choice_runs);
		report_cfg_num(r, "choice_min_bytes", "%" PRIu64, o->choice_min_bytes);
	}
	report_cfg_str(r, "cold", "per file: fdatasync + POSIX_FADV_DONTNEED, residency checked (at most %d per mille)",
		       COLD_MAX_PER_MILLE);
}

static int write_file(const struct bench *b, const char *path, enum format fmt, const char *what)
{
	int ret = output_to_file(path, fmt, &b->rep);

	if (ret < 0) {
		fprintf(stderr, PROG ": cannot write %s: %s\n", path, strerror(-ret));
		return 1;
	}
	if (b->o.format == FMT_TEXT)
		printf("%s: %s\n", what, path);
	return 0;
}

int main(int argc, char **argv)
{
	struct bench b = { 0 };
	const struct opts *o = &b.o;
	int ret, rc = 0;

	/* the command line first: getopt permutes argv and the list options cut its strings */
	report_init(&b.rep, PROG, argc, argv);
	ret = opts_parse(&b.o, argc, argv);
	if (ret >= 0) {
		report_free(&b.rep);
		return ret;
	}
	cleanup_init(o->keep);
	config(&b);

	if (o->test_alloc || o->test_mmap)
		alloc_setup(&b);
	if (o->test_io)
		io_setup(&b);
	if (opts_queue_workloads(o))
		wl_setup(&b);
	if (o->test_choice)
		choice_setup(&b);

	report_info(&b.rep, "%s", b.rep.cmdline);
	report_info(&b.rep, "dmaio-bench (libdmaio %d.%d.%d), %d interleaved runs, medians", DMAIO_VERSION_MAJOR,
		    DMAIO_VERSION_MINOR, DMAIO_VERSION_MICRO, o->runs);
	if (o->test_io)
		io_info(&b);
	if (opts_queue_workloads(o))
		wl_info(&b);
	if (o->test_choice)
		choice_info(&b);
	if (o->format == FMT_TEXT)
		output_text_info(stdout, &b.rep);

	if (o->test_io)
		io_run(&b);
	if (o->test_alloc)
		alloc_run(&b);
	if (o->test_mmap)
		mmap_run(&b);
	if (opts_queue_workloads(o))
		wl_run(&b);
	if (o->test_choice)
		choice_run(&b);

	if (o->test_io)
		io_report(&b);
	if (o->test_alloc)
		alloc_report(&b);
	if (o->test_mmap)
		mmap_report(&b);
	if (opts_queue_workloads(o))
		wl_report(&b);
	if (o->test_choice)
		choice_report(&b);
	if (o->test_io || o->test_alloc || o->test_choice)
		report_trailer(&b.rep, "target verdicts: bench/verdict.py %s", o->csv ? o->csv : o->json ? o->json :
			       "FILE (the --csv or --json file of this run)");

	ret = 0;
	switch (o->format) {
	case FMT_TEXT:
		output_text(stdout, &b.rep);
		break;
	case FMT_CSV:
		ret = output_csv(stdout, &b.rep);
		break;
	case FMT_JSON:
		ret = output_json(stdout, &b.rep);
		break;
	}
	if (fflush(stdout) || ret < 0) {
		fprintf(stderr, PROG ": cannot write the output: %s\n", strerror(ret < 0 ? -ret : errno));
		rc = 1;
	}
	if ((o->csv || o->json) && o->format == FMT_TEXT)
		putchar('\n');
	if (o->csv)
		rc |= write_file(&b, o->csv, FMT_CSV, "csv");
	if (o->json)
		rc |= write_file(&b, o->json, FMT_JSON, "json");
	if (o->plot && o->test_io) {
		char title[512];

		io_plot_title(&b, title, sizeof(title));
		output_plot(&b.rep, o->plot, title, o->format == FMT_TEXT ? stdout : stderr);
	}

	io_free(&b);
	alloc_free(&b);
	wl_free(&b);
	choice_free(&b);
	report_free(&b.rep);
	return rc;
}
