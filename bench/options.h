/* SPDX-License-Identifier: MIT */
/*
 * dmaio-bench's options: one struct for every benchmark (io, alloc, mmap, the queue workloads
 * ranges, files, frames, and the path-choice matrix) and the output, filled by opts_parse() and
 * read-only after it.
 */
#ifndef DMAIO_BENCH_OPTIONS_H
#define DMAIO_BENCH_OPTIONS_H

#include <dmaio.h>

#include <stdbool.h>
#include <stdint.h>

#include "baselines.h"
#include "output.h"
#include "stats.h"
#include "util.h"

#define PROG "dmaio-bench"
#define MAX_SIZES 16
#define MAX_LBUFS 4        /* --heap A,B,...: library buffers measured side by side */
#define MAX_JOBS 64
#define WL_MAX_RANGESETS 8

struct opts {
	/* what runs */
	bool test_io, test_alloc, test_mmap;          /* --tests */
	bool test_ranges, test_files, test_frames;
	bool test_choice;
	int runs;                                     /* --runs, --quick */
	bool verify;                                  /* not --no-verify */
	bool fresh;                                   /* new buffers before every run: not --same-buffers */
	bool keep;                                    /* --keep */
	bool quick;                                   /* --quick */
	const char *dir;                              /* --dir */
	const char *device;                           /* --device: the io test on this block device */
	const char *heaps[MAX_LBUFS];                 /* --heap (heaps[0] NULL: the default provider) */
	int nheaps;                                   /* at least 1 */

	/* io */
	uint64_t sizes[MAX_SIZES];                    /* --sizes */
	int nsizes;
	bool dirs[NDIRS];                             /* --dirs */
	bool modes[NMODES];                           /* --modes */
	bool paths[DMAIO_PATH_COUNT];                 /* --path: library paths (auto included) */
	bool paths_given;
	uint64_t chunk;                               /* --chunk: O_DIRECT io_uring request size */
	unsigned qd;                                  /* --qd: its requests in flight */
	unsigned jobs;                                /* --jobs: threads moving each transfer */

	/* alloc, mmap */
	int alloc_count;                              /* --alloc NxSIZE */
	uint64_t alloc_size;
	uint64_t mmap_size;                           /* --mmap-size */

	/* the queue workloads */
	int nsets;                                    /* --ranges COUNTxSIZE[,...] */
	uint64_t set_count[WL_MAX_RANGESETS];
	uint64_t set_size[WL_MAX_RANGESETS];
	uint64_t ranges_file;                         /* --ranges-file (default twice the largest set) */
	unsigned nfiles;                              /* --files NxSIZE */
	uint64_t file_size;
	uint64_t frame_size;                          /* --frame-size */
	unsigned fps;                                 /* --fps */
	unsigned frames;                              /* --frames */
	unsigned ring;                                /* --ring */
	unsigned depth;                               /* --depth */
	uint64_t seed;                                /* --seed */
	bool base_memfd;                              /* --base-mem memfd */

	/* choice (the queue's --depth, --chunk, --seed, --dirs, --path and --base-mem apply too) */
	uint64_t choice_bufs[MAX_SIZES];              /* --choice-bufs: buffer sizes */
	int nchoice_bufs;
	uint64_t choice_ranges[MAX_SIZES];            /* --choice-ranges: range sizes */
	int nchoice_ranges;
	int choice_runs;                              /* --runs, else 3 (--quick 1) */
	uint64_t choice_min_bytes;                    /* --choice-min-bytes: bytes per sample */
	bool choice_own_sync;                         /* --choice-own-sync: the library's
						       * writes synced by fdatasync() */
	int choice_repeat;                            /* --choice-repeat: pairs (fastest forced,
							 lib:auto) after each cell's methods */

	/* output */
	enum format format;                           /* --format: what stdout gets */
	const char *csv;                              /* --csv FILE */
	const char *json;                             /* --json FILE */
	const char *plot;                             /* --plot FILE */
};

/* -1: run; else the exit status (0 after --help or --version; 2 after a bad option, said why) */
int opts_parse(struct opts *o, int argc, char **argv);

static inline bool opts_queue_workloads(const struct opts *o)
{
	return o->test_ranges || o->test_files || o->test_frames;
}

#endif /* DMAIO_BENCH_OPTIONS_H */
