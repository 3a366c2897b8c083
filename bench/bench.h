/* SPDX-License-Identifier: MIT */
/*
 * dmaio-bench: what dmaio-bench.c shares with the workload modules (workloads-queue.c): the
 * options, the helpers (timing, CPU, sizes, medians, the position-encoded file pattern, cold
 * cache, buffer allocation from --heap, notes) and the entry points of the queue workloads.
 */
#ifndef DMAIO_BENCH_H
#define DMAIO_BENCH_H

#include <dmaio.h>

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#define PROG "dmaio-bench"
#define KIB ((uint64_t)1 << 10)
#define MIB ((uint64_t)1 << 20)
#define GIB ((uint64_t)1 << 30)
#define MAX_SIZES 16
#define MAX_LBUFS 4   /* --heap A,B,...: library buffers measured side by side */
#define MAX_RUNS 101
#define URING_PIECE GIB /* io_uring refuses registered buffers over 1 GiB */

enum { DIR_READ, DIR_WRITE, NDIRS };
enum { MODE_COLD, MODE_WARM, NMODES };

struct opts {
	uint64_t sizes[MAX_SIZES];
	int nsizes;
	bool dirs[NDIRS];
	bool modes[NMODES];
	bool paths[DMAIO_PATH_COUNT]; /* --path: which library paths (auto included) */
	bool paths_given;
	bool test_io, test_alloc, test_mmap;
	int runs;
	const char *heaps[MAX_LBUFS]; /* --heap: providers of the library buffers (NULL: default) */
	int nheaps;
	const char *dir;
	const char *csv;
	const char *plot;
	uint64_t chunk;         /* O_DIRECT io_uring baseline request size */
	unsigned qd;            /* and queue depth */
	bool drop_caches;
	bool verify;
	bool keep;
	bool quick;
	bool fresh;             /* new buffers before every run */
	int alloc_count;
	uint64_t alloc_size;
	uint64_t mmap_size;
};

extern struct opts o;
extern bool is_root;

/* ---- helpers defined in dmaio-bench.c ---- */
__attribute__((format(printf, 1, 2)))
void note(const char *fmt, ...);
__attribute__((format(printf, 1, 2), noreturn))
void die(const char *fmt, ...);
uint64_t now_ns(void);
double cpu_now(void);
bool interactive(int fd);
const char *errname(int err);
void size_str(char *out, size_t len, uint64_t v);
int parse_size(const char *s, uint64_t *out);
double median(const double *v, int n);
double vmin(const double *v, int n);
double vmax(const double *v, int n);
uint64_t mem_available(void);
void fill_pattern(void *p, uint64_t file_off, size_t len);
int64_t check_pattern(const void *p, uint64_t file_off, size_t len);
ssize_t full_pread(int fd, void *p, size_t len, uint64_t off);
ssize_t full_pwrite(int fd, const void *p, size_t len, uint64_t off);
void fmt_ratio(char *out, size_t len, double a, double b);
const char *heap_desc(int i);
int alloc_dbuf(int i, size_t len, struct dmaio_buf **b, void **map);
/* cold: fsync + POSIX_FADV_DONTNEED of each file, then drop_caches once (root, unless
 * --no-drop-caches); a note when more than 2% of [0, lens[i]) stayed resident */
void make_cold_fds(const int *fds, const uint64_t *lens, int n);

static inline uint64_t pattern_word(uint64_t off)
{
	return off | (0xD3A1ull << 48);
}

/* ---- the queue workloads (workloads-queue.c): --tests ranges,files,frames ---- */
#define WL_MAX_RANGESETS 8

struct wl_opts {
	bool test_ranges, test_files, test_frames; /* --tests */
	int nsets;                      /* --ranges COUNTxSIZE[,...] */
	uint64_t set_count[WL_MAX_RANGESETS];
	uint64_t set_size[WL_MAX_RANGESETS];
	bool sets_given;
	uint64_t ranges_file;           /* --ranges-file SIZE (0: twice the largest COUNT x SIZE) */
	unsigned nfiles;                /* --files NxSIZE */
	uint64_t file_size;
	bool files_given;
	uint64_t frame_size;            /* --frame-size */
	unsigned fps;                   /* --fps */
	unsigned frames;                /* --frames */
	bool frames_given;
	unsigned ring;                  /* --ring */
	unsigned depth;                 /* --depth: baseline requests in flight and queue depth */
	uint64_t seed;                  /* --seed */
	bool base_memfd;                /* --base-mem memfd: the baseline reads into memfd memory */
};

extern struct wl_opts wlo;

/* the long options of the workloads; main() gives them the ids WL_OPT_BASE + WL_OPT_* */
enum { WL_OPT_RANGES, WL_OPT_RANGES_FILE, WL_OPT_FILES, WL_OPT_FRAME_SIZE, WL_OPT_FPS, WL_OPT_FRAMES,
       WL_OPT_RING, WL_OPT_DEPTH, WL_OPT_SEED, WL_OPT_BASE_MEM, WL_NOPTS };
#define WL_OPT_BASE 512
#define WL_LONG_OPTIONS                                                                   \
	{ "ranges", required_argument, NULL, WL_OPT_BASE + WL_OPT_RANGES },               \
	{ "ranges-file", required_argument, NULL, WL_OPT_BASE + WL_OPT_RANGES_FILE },     \
	{ "files", required_argument, NULL, WL_OPT_BASE + WL_OPT_FILES },                 \
	{ "frame-size", required_argument, NULL, WL_OPT_BASE + WL_OPT_FRAME_SIZE },       \
	{ "fps", required_argument, NULL, WL_OPT_BASE + WL_OPT_FPS },                     \
	{ "frames", required_argument, NULL, WL_OPT_BASE + WL_OPT_FRAMES },               \
	{ "ring", required_argument, NULL, WL_OPT_BASE + WL_OPT_RING },                   \
	{ "depth", required_argument, NULL, WL_OPT_BASE + WL_OPT_DEPTH },                 \
	{ "seed", required_argument, NULL, WL_OPT_BASE + WL_OPT_SEED },                   \
	{ "base-mem", required_argument, NULL, WL_OPT_BASE + WL_OPT_BASE_MEM }

/* parse option WL_OPT_* with its argument: 0, or -EINVAL after printing why to stderr */
int wl_option(int id, char *arg);
/* the option lines of --help */
void wl_usage(FILE *out);
bool wl_enabled(void);
/* create the test files, buffers, queues, registered files; verify and warm up every variant */
void wl_setup(void);
/* the "# ..." lines of the output header */
void wl_print_header(void);
/* the timed, interleaved runs */
void wl_run(void);
/* the result tables, and rows of the CSV (csv may be NULL) */
void wl_print(FILE *csv);
/* free everything, remove the test files (unless --keep) */
void wl_cleanup(void);
/* remove the test files (unless --keep); async-signal-safe, for die() and signal handlers */
void wl_unlink_files(void);

#endif /* DMAIO_BENCH_H */
