// SPDX-License-Identifier: MIT
/* dmaio-bench's options (options.h): defaults, --help, parsing. */
#include "options.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const dir_names[NDIRS] = { "read", "write" };
static const char *const mode_names[NMODES] = { "cold", "warm" };
static const char *const test_names[] = { "io", "alloc", "mmap", "ranges", "files", "frames",
					  "choice" };
#define NTESTS ((int)(sizeof(test_names) / sizeof(test_names[0])))
static const char *const format_names[] = { "text", "csv", "json" };

static void usage(FILE *out)
{
	int p;

	fprintf(out,
		"Usage: " PROG " [options]\n"
		"Measure libdmaio's data paths against baselines, allocation per provider and mapping.\n"
		"\n"
		"  --dir DIR         directory of the test file (default: .); a block filesystem for O_DIRECT\n"
		"  --device DEV      the io test on this block device instead of a file in DIR: its first\n"
		"                    bytes (the largest size) are OVERWRITTEN with the pattern (e.g. a raw\n"
		"                    NVMe namespace, where the proposed io_uring dma-buf path can serve)\n"
		"  --heap H[,H...]   provider(s) of the I/O buffers (default: the best dma-buf provider, else\n"
		"                    memfd); several: one buffer each, measured side by side on one file\n"
		"  --path P[,P...]   library paths to measure (default: auto and every path that can serve):\n"
		"                   ");
	for (p = 0; p < DMAIO_PATH_COUNT; p++)
		fprintf(out, " %s", dmaio_path_name(p));
	fprintf(out,
		"\n"
		"  --sizes LIST      transfer sizes (default 1M,4M,16M,64M,256M,1G)\n"
		"  --dirs LIST       read,write (default both)\n"
		"  --modes LIST      cold,warm (default both); cold = the test file's own pages dropped\n"
		"                    (fdatasync + POSIX_FADV_DONTNEED over the file), then checked with\n"
		"                    cachestat(2) (mincore(2) without it) before every timed run: the run\n"
		"                    fails when more than 0.1%% of the file stays cached (e.g. on tmpfs);\n"
		"                    the system's caches are never dropped\n"
		"  --runs N          interleaved repetitions, medians reported (default 5)\n"
		"  --tests LIST      io,alloc,mmap,ranges,files,frames,choice (default io,alloc,mmap)\n"
		"  --alloc N[xSIZE]  allocation test: N buffers of SIZE (default 32x32M)\n"
		"  --mmap-size SIZE  map+touch test size (default 512M)\n"
		"  --chunk SIZE      request size of the O_DIRECT io_uring baseline (default 4M)\n"
		"  --qd N            its queue depth (default 8)\n"
		"                    libdmaio exposes neither chunk size nor queue depth: they do not\n"
		"                    apply to the library paths\n"
		"  --jobs N          io test: N threads move disjoint slices of each transfer at once\n"
		"                    (default 1, 1..%d): each O_DIRECT baseline thread has a ring of its\n"
		"                    own with --qd in flight; the library, buffered and naive cases call\n"
		"                    from N threads on disjoint ranges of the file and the buffer\n"
		"  --no-drop-caches  accepted for old command lines: nothing to turn off now\n"
		"  --no-verify       skip the data check of each method before timing\n"
		"  --same-buffers    keep the buffers of the first run (default: new memory for every run,\n"
		"                    as physical placement alone moves bandwidth by up to 2x here)\n"
		"  --format F        what stdout gets: text (default), csv or json\n"
		"  --csv FILE        write the results as CSV too\n"
		"  --json FILE       write the results as JSON too: the CSV's values plus each run's\n"
		"                    values, latency percentiles (p50/p90/p99/max), jobs, queue_depth (the\n"
		"                    requests the bench keeps in flight per job: 1 for a synchronous\n"
		"                    library call, which the library may split further), and the\n"
		"                    page-cache residency before each timed run\n"
		"  --plot FILE       plot bandwidth per method and size, PNG, SVG or PDF by FILE's\n"
		"                    extension (.png/.svg/.pdf; writes FILE.gp too, runs gnuplot)\n"
		"  --quick           a short subset: sizes 16M,256M, 3 runs (choice: its sizes, 1 run)\n"
		"  --keep            keep the test file\n"
		"  --version         print the version of dmaio-bench and of the libdmaio it runs with\n"
		"  -h, --help        this help\n"
		"\n"
		"MB/s are 10^6 bytes/s. CPU is user+sys of the process (getrusage RUSAGE_SELF, io_uring\n"
		"workers included) per GiB moved. Write times include a final fdatasync().\n"
		"The target verdicts: bench/verdict.py FILE.csv (or FILE.json, which adds the run-by-run\n"
		"ratios) in the source tree.\n",
		MAX_JOBS);
	fprintf(out,
		"\n"
		"Queue workloads (--tests ranges,files,frames; run only when named): the baseline, lib:sync\n"
		"(one dmaio_fd_read/write per range), lib:file (dmaio_file_read/write on a registered file)\n"
		"and lib:queue (dmaio_queue_submit/dmaio_queue_reap), interleaved, cold before every read variant:\n"
		"  --ranges LIST     ranges: COUNTxSIZE[,...] random ranges of one file, random order\n"
		"                    (default 4096x64K,512x1M; --quick 1024x64K,128x1M)\n"
		"  --ranges-file SIZE  its file (default twice the largest COUNT x SIZE)\n"
		"  --files NxSIZE    files: N whole files into one buffer (default 64x16M; --quick 16x16M)\n"
		"  --depth N         in flight: the O_DIRECT io_uring baseline's requests (of at most --chunk)\n"
		"                    and dmaio_queue_new()'s depth (default 32)\n"
		"  --frame-size S    frames: bytes per frame, or WxH for NV12 (default 1920x1080 = 3110400)\n"
		"  --fps N           frame rate (default 60)\n"
		"  --frames N        frames per variant and run (default 300; --quick 120)\n"
		"  --ring K          capture buffers (default 4): a frame whose buffer is still in flight\n"
		"                    when the ring wraps is dropped\n"
		"  --seed N          of the random ranges (default 1)\n"
		"  --base-mem M      the baseline's memory: anon (default; may get THP) or memfd (shmem, the\n"
		"                    memory behind a udmabuf or memfd buffer)\n"
		"CSV rows: ranges/files: size_bytes = range/file size, x_uring_direct = x the baseline, ms_* =\n"
		"wall ms of the variant, count = ranges/files. frames: mode = <fps>fps, x_buffered = x base:write\n"
		"MB/s, ms_* = CPU ms per frame, count = frames dropped (all runs); frames-latency: mode =\n"
		"p50/p90/p99/max, ms_* = that percentile of each run (median, min, max over runs; submit to\n"
		"completion), count = frames written (all runs). The JSON has the latency of every range\n"
		"(ranges/files: per request of the baseline, per call of lib:sync/lib:file, submit to reap\n"
		"of lib:queue) and of every io request or call.\n");
	fprintf(out,
		"\n"
		"Path choice (--tests choice; run only when named): for each provider (--heap), buffer size,\n"
		"range size and direction, a buffer allocated once per run is moved whole as ranges of that\n"
		"size, in random order, each at the file offset equal to its buffer offset, through one\n"
		"dmaio_queue_new(--depth) queue: by the library's own choice (lib:auto) and by every path\n"
		"forced with DMAIO_RW_NO_FALLBACK (lib:PATH; a path that refuses is \"cannot serve\"),\n"
		"against the O_DIRECT io_uring baseline into anonymous memory (same ranges, requests of at\n"
		"most --chunk, --depth in flight). Reads cold, writes with a final fdatasync(); every method\n"
		"of every cell checked byte by byte once, cold, before the timed runs (unless --no-verify).\n"
		"  --choice-bufs LIST    buffer sizes (default 16M,512M); the test file is as large as the\n"
		"                        largest\n"
		"  --choice-ranges LIST  range sizes, multiples of 4K (default 4K,64K,1M,16M); a range size\n"
		"                        that does not divide a buffer size is left out for that buffer\n"
		"  --choice-min-bytes N  a sample moves the buffer whole as often as it takes to move at\n"
		"                        least N bytes (default 128M, --quick 64M; 0: once), each pass\n"
		"                        cold, the passes' times summed: a 16 MiB buffer moves in a few\n"
		"                        ms, where one pass is mostly the storage's noise\n"
		"  --choice-repeat N     after a cell's methods, in each run, N more pairs of the\n"
		"                        fastest forced path so far and lib:auto, in turn (default 1;\n"
		"                        0: none): lib:auto measured again after it has learned from\n"
		"                        the forced runs, and the best path's own spread beside it\n"
		"  --choice-own-sync     the library's writes made durable by fdatasync() of the file,\n"
		"                        as an application that syncs on its own (the library then\n"
		"                        learns no writeback); default dmaio_file_sync()\n"
		"  --runs N              3 by default here (--quick: 1), medians\n"
		"  --path P[,P...]       only these forced paths (lib:auto and the baseline always run)\n"
		"The table gives per cell the median MB/s and CPU s/GiB of each method, the fastest forced\n"
		"path, the path lib:auto took (the majority of its completions' dmaio_done.path), auto/best\n"
		"and a verdict: ok (auto >= 0.90 x best), miss (below), FAIL (below 1/1.5 of best); a\n"
		"\"~\" after miss or FAIL: the best path's own samples (runs and repeats) spread wider\n"
		"than auto's gap to it (max/min above best/auto), so the cell cannot tell them apart.\n"
		"CSV rows (test choice): size_bytes = range size, count = ranges (the buffer is size_bytes x\n"
		"count), mode cold, x_uring_direct = x the baseline, ms_* = wall ms of one sample.\n"
		"bench/verdict.py FILE prints the verdicts of each cell.\n");
}

static int pick(const char *arg, const char *const *names, int n)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(arg, names[i]))
			return i;
	return -1;
}

static bool parse_list(char *arg, const char *const *names, int n, bool *out)
{
	char *tok, *save = NULL;
	int i;

	for (i = 0; i < n; i++)
		out[i] = false;
	for (tok = strtok_r(arg, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		i = pick(tok, names, n);
		if (i < 0)
			return false;
		out[i] = true;
	}
	return true;
}

static int parse_uint(const char *s, unsigned long lo, unsigned long hi, unsigned long *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi)
		return -EINVAL;
	*out = v;
	return 0;
}

/* "COUNTxSIZE" */
static int parse_nx(const char *s, uint64_t *n, uint64_t *size)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || *end != 'x' || v == 0)
		return -EINVAL;
	*n = v;
	return parse_size(end + 1, size);
}

/* "16M,512M": 1 to MAX_SIZES sizes, each a multiple of 4 KiB (O_DIRECT); 0 or -EINVAL */
static int parse_sizes(char *arg, uint64_t *out, int *n)
{
	char *tok, *save = NULL;

	*n = 0;
	for (tok = strtok_r(arg, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (*n == MAX_SIZES || parse_size(tok, &out[*n]) || out[*n] % 4096)
			return -EINVAL;
		(*n)++;
	}
	return *n ? 0 : -EINVAL;
}

#define BAD(...) do { fprintf(stderr, PROG ": " __VA_ARGS__); return 2; } while (0)

int opts_parse(struct opts *o, int argc, char **argv)
{
	enum { OPT_SIZES = 256, OPT_DIRS, OPT_MODES, OPT_RUNS, OPT_TESTS, OPT_ALLOC, OPT_MMAPSZ, OPT_CHUNK, OPT_QD,
	       OPT_NODROP, OPT_NOVERIFY, OPT_CSV, OPT_JSON, OPT_FORMAT, OPT_PLOT, OPT_QUICK, OPT_KEEP, OPT_SAME,
	       OPT_DIR, OPT_DEVICE, OPT_HEAP, OPT_PATH, OPT_JOBS, OPT_VERSION, OPT_RANGES, OPT_RANGES_FILE, OPT_FILES,
	       OPT_FRAME_SIZE, OPT_FPS, OPT_FRAMES, OPT_RING, OPT_DEPTH, OPT_SEED, OPT_BASE_MEM,
	       OPT_CHOICE_BUFS, OPT_CHOICE_RANGES, OPT_CHOICE_MIN_BYTES, OPT_CHOICE_REPEAT,
	       OPT_CHOICE_OWN_SYNC };
	static const struct option lopts[] = {
		{ "dir", required_argument, NULL, OPT_DIR },
		{ "device", required_argument, NULL, OPT_DEVICE },
		{ "heap", required_argument, NULL, OPT_HEAP },
		{ "path", required_argument, NULL, OPT_PATH },
		{ "sizes", required_argument, NULL, OPT_SIZES },
		{ "dirs", required_argument, NULL, OPT_DIRS },
		{ "modes", required_argument, NULL, OPT_MODES },
		{ "runs", required_argument, NULL, OPT_RUNS },
		{ "tests", required_argument, NULL, OPT_TESTS },
		{ "alloc", required_argument, NULL, OPT_ALLOC },
		{ "mmap-size", required_argument, NULL, OPT_MMAPSZ },
		{ "chunk", required_argument, NULL, OPT_CHUNK },
		{ "qd", required_argument, NULL, OPT_QD },
		{ "jobs", required_argument, NULL, OPT_JOBS },
		{ "no-drop-caches", no_argument, NULL, OPT_NODROP },
		{ "no-verify", no_argument, NULL, OPT_NOVERIFY },
		{ "csv", required_argument, NULL, OPT_CSV },
		{ "json", required_argument, NULL, OPT_JSON },
		{ "format", required_argument, NULL, OPT_FORMAT },
		{ "plot", required_argument, NULL, OPT_PLOT },
		{ "quick", no_argument, NULL, OPT_QUICK },
		{ "keep", no_argument, NULL, OPT_KEEP },
		{ "same-buffers", no_argument, NULL, OPT_SAME },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, OPT_VERSION },
		{ "ranges", required_argument, NULL, OPT_RANGES },
		{ "ranges-file", required_argument, NULL, OPT_RANGES_FILE },
		{ "files", required_argument, NULL, OPT_FILES },
		{ "frame-size", required_argument, NULL, OPT_FRAME_SIZE },
		{ "fps", required_argument, NULL, OPT_FPS },
		{ "frames", required_argument, NULL, OPT_FRAMES },
		{ "ring", required_argument, NULL, OPT_RING },
		{ "depth", required_argument, NULL, OPT_DEPTH },
		{ "seed", required_argument, NULL, OPT_SEED },
		{ "base-mem", required_argument, NULL, OPT_BASE_MEM },
		{ "choice-bufs", required_argument, NULL, OPT_CHOICE_BUFS },
		{ "choice-ranges", required_argument, NULL, OPT_CHOICE_RANGES },
		{ "choice-min-bytes", required_argument, NULL, OPT_CHOICE_MIN_BYTES },
		{ "choice-repeat", required_argument, NULL, OPT_CHOICE_REPEAT },
		{ "choice-own-sync", no_argument, NULL, OPT_CHOICE_OWN_SYNC },
		{ NULL, 0, NULL, 0 },
	};
	bool tests[NTESTS] = { true, true, true, false, false, false, false };
	bool sizes_given = false, runs_given = false, sets_given = false, files_given = false;
	bool frames_given = false, min_bytes_given = false, repeat_given = false;
	char *tok, *save, term[128];
	unsigned long v;
	uint64_t n, size;
	int c, i;

	memset(o, 0, sizeof(*o));
	o->runs = 5;
	o->chunk = 4 * MIB;
	o->qd = 8;
	o->jobs = 1;
	o->verify = true;
	o->fresh = true;
	o->alloc_count = 32;
	o->alloc_size = 32 * MIB;
	o->mmap_size = 512 * MIB;
	o->dirs[DIR_READ] = o->dirs[DIR_WRITE] = true;
	o->modes[MODE_COLD] = o->modes[MODE_WARM] = true;
	o->dir = ".";
	o->nfiles = 64;
	o->file_size = 16 * MIB;
	o->frame_size = 1920 * 1080 * 3 / 2; /* NV12 */
	o->fps = 60;
	o->frames = 300;
	o->ring = 4;
	o->depth = 32;
	o->seed = 1;
	o->format = FMT_TEXT;

	while ((c = getopt_long(argc, argv, "h", lopts, NULL)) != -1) {
		switch (c) {
		case OPT_DIR:
			o->dir = optarg;
			break;
		case OPT_DEVICE:
			o->device = optarg;
			break;
		case OPT_HEAP:
			o->nheaps = 0;
			for (tok = strtok_r(optarg, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
				if (o->nheaps == MAX_LBUFS)
					BAD("--heap: at most %d providers\n", MAX_LBUFS);
				o->heaps[o->nheaps++] = tok;
			}
			if (!o->nheaps)
				BAD("--heap: no provider named\n");
			break;
		case OPT_PATH:
			o->paths_given = true;
			for (tok = strtok_r(optarg, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
				int p = dmaio_path_from_name(tok);

				if (p < 0)
					BAD("unknown path '%s' (see --help)\n", tok);
				o->paths[p] = true;
			}
			break;
		case OPT_SIZES:
			sizes_given = true;
			o->nsizes = 0;
			for (tok = strtok_r(optarg, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
				if (o->nsizes >= MAX_SIZES || parse_size(tok, &o->sizes[o->nsizes]))
					BAD("bad size '%s' (e.g. 1M,64M,1G; at most %d)\n", tok, MAX_SIZES);
				o->nsizes++;
			}
			break;
		case OPT_DIRS:
			if (!parse_list(optarg, dir_names, NDIRS, o->dirs))
				BAD("--dirs takes read,write\n");
			break;
		case OPT_MODES:
			if (!parse_list(optarg, mode_names, NMODES, o->modes))
				BAD("--modes takes cold,warm\n");
			break;
		case OPT_RUNS:
			if (parse_uint(optarg, 1, MAX_RUNS, &v))
				BAD("--runs takes 1..%d\n", MAX_RUNS);
			o->runs = (int)v;
			runs_given = true;
			break;
		case OPT_TESTS:
			if (!parse_list(optarg, test_names, NTESTS, tests))
				BAD("--tests takes io,alloc,mmap,ranges,files,frames,choice\n");
			break;
		case OPT_ALLOC: {
			char *x = strchr(optarg, 'x');

			if (x)
				*x = '\0';
			if (parse_uint(optarg, 1, RAW_MAX, &v) || (x && parse_size(x + 1, &o->alloc_size)))
				BAD("--alloc takes N[xSIZE], N in 1..%d\n", RAW_MAX);
			o->alloc_count = (int)v;
			break;
		}
		case OPT_MMAPSZ:
			if (parse_size(optarg, &o->mmap_size))
				BAD("bad --mmap-size\n");
			break;
		case OPT_CHUNK:
			if (parse_size(optarg, &o->chunk) || o->chunk % 4096 || o->chunk > GIB)
				BAD("--chunk takes a multiple of 4K up to 1G\n");
			break;
		case OPT_QD:
			if (parse_uint(optarg, 1, 256, &v))
				BAD("--qd takes 1..256\n");
			o->qd = (unsigned)v;
			break;
		case OPT_JOBS:
			if (parse_uint(optarg, 1, MAX_JOBS, &v))
				BAD("--jobs takes 1..%d\n", MAX_JOBS);
			o->jobs = (unsigned)v;
			break;
		case OPT_NODROP:
			/* the cold mode drops only the test files' own pages now */
			break;
		case OPT_NOVERIFY:
			o->verify = false;
			break;
		case OPT_CSV:
			o->csv = optarg;
			break;
		case OPT_JSON:
			o->json = optarg;
			break;
		case OPT_FORMAT:
			i = pick(optarg, format_names, 3);
			if (i < 0)
				BAD("--format takes text, csv or json\n");
			o->format = (enum format)i;
			break;
		case OPT_PLOT:
			o->plot = optarg;
			if (!plot_terminal(o->plot, 520, term, sizeof(term)))
				BAD("--plot %s: the name must end in .png, .svg or .pdf\n", optarg);
			break;
		case OPT_QUICK:
			o->quick = true;
			break;
		case OPT_SAME:
			o->fresh = false;
			break;
		case OPT_KEEP:
			o->keep = true;
			break;
		case OPT_RANGES:
			o->nsets = 0;
			sets_given = true;
			for (tok = strtok_r(optarg, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
				if (o->nsets == WL_MAX_RANGESETS || parse_nx(tok, &n, &size) || size % 4096 || n > (1u << 24))
					BAD("--ranges takes COUNTxSIZE[,...] (e.g. 4096x64K,512x1M; SIZE a multiple "
					    "of 4K, at most %d sets)\n", WL_MAX_RANGESETS);
				o->set_count[o->nsets] = n;
				o->set_size[o->nsets] = size;
				o->nsets++;
			}
			if (!o->nsets)
				BAD("--ranges: no COUNTxSIZE given\n");
			break;
		case OPT_RANGES_FILE:
			if (parse_size(optarg, &o->ranges_file) || o->ranges_file % 4096)
				BAD("--ranges-file takes a size, a multiple of 4K\n");
			break;
		case OPT_FILES:
			if (parse_nx(optarg, &n, &size) || n > 4096 || size % 4096)
				BAD("--files takes NxSIZE (N 1..4096, SIZE a multiple of 4K)\n");
			o->nfiles = (unsigned)n;
			o->file_size = size;
			files_given = true;
			break;
		case OPT_FRAME_SIZE:
			/* WxH: an NV12 frame (W*H*3/2 bytes); else a size in bytes */
			if (strchr(optarg, 'x')) {
				uint64_t w;
				char *end;

				errno = 0;
				w = strtoull(optarg, &end, 10);
				if (errno || end == optarg || *end != 'x' || parse_uint(end + 1, 1, 65536, &v) || !w ||
				    w > 65536)
					BAD("--frame-size takes WxH (NV12) or a size in bytes\n");
				o->frame_size = w * v * 3 / 2;
			} else if (parse_size(optarg, &o->frame_size) || o->frame_size > GIB) {
				BAD("--frame-size takes WxH (NV12) or a size up to 1G\n");
			}
			if (!o->frame_size)
				BAD("--frame-size: empty frame\n");
			break;
		case OPT_FPS:
			if (parse_uint(optarg, 1, 10000, &v))
				BAD("--fps takes 1..10000\n");
			o->fps = (unsigned)v;
			break;
		case OPT_FRAMES:
			if (parse_uint(optarg, 1, 10000000, &v))
				BAD("--frames takes 1..10000000\n");
			o->frames = (unsigned)v;
			frames_given = true;
			break;
		case OPT_RING:
			if (parse_uint(optarg, 1, 64, &v))
				BAD("--ring takes 1..64\n");
			o->ring = (unsigned)v;
			break;
		case OPT_DEPTH:
			if (parse_uint(optarg, 1, DMAIO_QUEUE_DEPTH_MAX, &v))
				BAD("--depth takes 1..%u\n", DMAIO_QUEUE_DEPTH_MAX);
			o->depth = (unsigned)v;
			break;
		case OPT_SEED:
			if (parse_uint(optarg, 0, ULONG_MAX, &v))
				BAD("--seed takes a number\n");
			o->seed = v;
			break;
		case OPT_BASE_MEM:
			if (strcmp(optarg, "anon") && strcmp(optarg, "memfd"))
				BAD("--base-mem takes anon or memfd\n");
			o->base_memfd = !strcmp(optarg, "memfd");
			break;
		case OPT_CHOICE_BUFS:
			if (parse_sizes(optarg, o->choice_bufs, &o->nchoice_bufs))
				BAD("--choice-bufs takes sizes, multiples of 4K (e.g. 16M,512M; "
				    "at most %d)\n", MAX_SIZES);
			break;
		case OPT_CHOICE_RANGES:
			if (parse_sizes(optarg, o->choice_ranges, &o->nchoice_ranges))
				BAD("--choice-ranges takes sizes, multiples of 4K (e.g. 4K,64K,1M; "
				    "at most %d)\n", MAX_SIZES);
			break;
		case OPT_CHOICE_MIN_BYTES:
			/* parse_size() refuses 0, which means one pass here */
			if (!strcmp(optarg, "0"))
				o->choice_min_bytes = 0;
			else if (parse_size(optarg, &o->choice_min_bytes))
				BAD("--choice-min-bytes takes a size (e.g. 128M, 0: one pass)\n");
			min_bytes_given = true;
			break;
		case OPT_CHOICE_OWN_SYNC:
			o->choice_own_sync = true;
			break;
		case OPT_CHOICE_REPEAT: {
			char *end;
			long rv;

			errno = 0;
			rv = strtol(optarg, &end, 10);
			if (errno || end == optarg || *end || rv < 0 || rv > 8)
				BAD("--choice-repeat takes 0 to 8\n");
			o->choice_repeat = (int)rv;
			repeat_given = true;
			break;
		}
		case 'h':
			usage(stdout);
			return 0;
		case OPT_VERSION: {
			unsigned lv = dmaio_version();

			printf("dmaio-bench %d.%d.%d (libdmaio %u.%u.%u)\n", DMAIO_VERSION_MAJOR, DMAIO_VERSION_MINOR,
			       DMAIO_VERSION_MICRO, lv >> 16, (lv >> 8) & 0xff, lv & 0xff);
			return 0;
		}
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc)
		BAD("unexpected argument '%s'\n", argv[optind]);

	/* the defaults that depend on other options */
	if (!sizes_given) {
		static const uint64_t def[] = { 1 * MIB, 4 * MIB, 16 * MIB, 64 * MIB, 256 * MIB, 1 * GIB };
		static const uint64_t quick[] = { 16 * MIB, 256 * MIB };
		const uint64_t *src = o->quick ? quick : def;

		o->nsizes = o->quick ? 2 : 6;
		for (i = 0; i < o->nsizes; i++)
			o->sizes[i] = src[i];
	}
	if (o->quick && !runs_given)
		o->runs = 3;
	if (!sets_given) {
		o->nsets = 2;
		o->set_count[0] = o->quick ? 1024 : 4096;
		o->set_size[0] = 64 * KIB;
		o->set_count[1] = o->quick ? 128 : 512;
		o->set_size[1] = MIB;
	}
	if (o->quick && !files_given)
		o->nfiles = 16;
	if (o->quick && !frames_given)
		o->frames = 120;
	if (!o->ranges_file)
		for (i = 0; i < o->nsets; i++)
			if (2 * o->set_count[i] * o->set_size[i] > o->ranges_file)
				o->ranges_file = 2 * o->set_count[i] * o->set_size[i];
	if (!o->nchoice_bufs) {
		o->choice_bufs[0] = 16 * MIB;
		o->choice_bufs[1] = 512 * MIB;
		o->nchoice_bufs = 2;
	}
	if (!o->nchoice_ranges) {
		static const uint64_t def[] = { 4 * KIB, 64 * KIB, MIB, 16 * MIB };

		for (i = 0; i < 4; i++)
			o->choice_ranges[i] = def[i];
		o->nchoice_ranges = 4;
	}
	/* the matrix is long: 3 runs unless told (1 with --quick, which keeps its sizes) */
	o->choice_runs = runs_given ? o->runs : o->quick ? 1 : 3;
	if (!min_bytes_given)
		o->choice_min_bytes = o->quick ? 64 * MIB : 128 * MIB;
	if (!repeat_given)
		o->choice_repeat = 1;
	if (o->choice_runs * (1 + o->choice_repeat) > MAX_RUNS)
		BAD("--runs x (1 + --choice-repeat) is at most %d: the samples of one method\n",
		    MAX_RUNS);
	if (!o->nheaps)
		o->nheaps = 1; /* heaps[0] NULL: the default provider */
	o->test_io = tests[0];
	o->test_alloc = tests[1];
	o->test_mmap = tests[2];
	o->test_ranges = tests[3];
	o->test_files = tests[4];
	o->test_frames = tests[5];
	o->test_choice = tests[6];
	/* only the matrix: the run count the "# " lines and the JSON state is its own */
	if (o->test_choice && !o->test_io && !o->test_alloc && !o->test_mmap &&
	    !opts_queue_workloads(o))
		o->runs = o->choice_runs;
	return -1;
}
