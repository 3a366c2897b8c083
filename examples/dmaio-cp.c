// SPDX-License-Identifier: MIT
/*
 * dmaio-cp: copy a file through a dma-buf: SRC -> buffer -> DST, each direction by the path libdmaio
 * chooses (or the one forced with --path), in chunks of the buffer size. A SRC or DST that cannot
 * be read or written at an offset (a pipe, a terminal, /dev/stdin) is streamed through the
 * buffer's CPU mapping with read()/write() instead; --verify refuses such files.
 */
#include <dmaio.h>

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <libgen.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define PROG "dmaio-cp"
#define MIB ((uint64_t)1 << 20)
#define BUF_MAX (256 * MIB)
#define BUF_MIN MIB
#define VERIFY_CHUNK (4 * MIB)
#define STREAM_BUF (8 * MIB)  /* the buffer for a SRC of unknown size (a pipe) */
#define TTY_STEP (16 * MIB)   /* bytes per library call when a progress bar is shown */

struct dir_stats {
	uint64_t bytes;
	uint64_t ns;
	uint64_t calls;
	uint64_t fallbacks;
	uint64_t unaligned;
	uint64_t path_bytes[DMAIO_PATH_COUNT];
};

struct progress {
	bool on;       /* show progress (not --no-progress) */
	bool tty;      /* one line rewritten in place; else plain lines */
	bool shown;    /* the tty line is on the screen */
	bool printed;  /* something was shown in this phase */
	const char *phase;
	uint64_t delay;  /* ns before the first report */
	uint64_t period; /* ns between reports */
	uint64_t total;
	uint64_t t0;
	uint64_t last;
};

/* A buffer from one provider by name (NULL: the library's order). */
static int ex_alloc(const char *provider, uint64_t size, uint32_t flags, struct dmaio_buf **b)
{
	const char *list[2] = { provider, NULL };
	struct dmaio_alloc_opts o = { .struct_size = sizeof(o), .flags = flags,
				      .providers = provider ? list : NULL };
	struct dmaio_reason why = { .struct_size = sizeof(why) };
	int r = dmaio_buf_alloc(NULL, size, &o, b, &why);

	if (r < 0 && why.text[0])
		fprintf(stderr, "dmaio-cp: %s\n", why.text);
	return r;
}

static bool verbose;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* A progress line only on an interactive terminal: not on a serial or system console, which is
 * usually a log (a VM's output captured by its host). */
static bool interactive(int fd)
{
	const char *t;

	if (!isatty(fd))
		return false;
	t = ttyname(fd);
	return !t || (strcmp(t, "/dev/console") && strncmp(t, "/dev/ttyS", 9));
}

static void human_size(char *out, size_t len, uint64_t v)
{
	static const char *unit[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	double d = (double)v;
	int u = 0;

	while (d >= 1024.0 && u < 4) {
		d /= 1024.0;
		u++;
	}
	if (u == 0)
		snprintf(out, len, "%" PRIu64 " B", v);
	else
		snprintf(out, len, "%.1f %s", d, unit[u]);
}

static double mbps(uint64_t bytes, uint64_t ns)
{
	return ns ? (double)bytes * 1000.0 / (double)ns : 0.0;
}

/* where progress goes: a terminal gets one line rewritten in place (first after 1 s, then every
 * 250 ms), anything else plain lines (every 5 s); --progress-interval MS sets both times */
static void progress_init(struct progress *p, bool on, long interval_ms)
{
	p->on = on;
	p->tty = interactive(STDERR_FILENO);
	p->delay = p->tty ? 1000000000ull : 5000000000ull;
	p->period = p->tty ? 250000000ull : 5000000000ull;
	if (interval_ms >= 0)
		p->delay = p->period = (uint64_t)interval_ms * 1000000ull;
}

static void progress_start(struct progress *p, const char *phase, uint64_t total)
{
	p->phase = phase;
	p->total = total;
	p->t0 = now_ns();
	p->last = 0;
	p->printed = false;
}

static void progress_update(struct progress *p, uint64_t done)
{
	uint64_t t = now_ns(), el;
	char a[32], b[32], eta[32];
	double rate;

	if (!p->on)
		return;
	el = t - p->t0;
	if (el < p->delay || (p->printed && t - p->last < p->period))
		return;
	rate = el ? (double)done / ((double)el / 1e9) : 0.0;
	human_size(a, sizeof(a), done);
	human_size(b, sizeof(b), p->total);
	if (rate > 0 && p->total > done) {
		uint64_t s = (uint64_t)((double)(p->total - done) / rate + 0.5);

		snprintf(eta, sizeof(eta), "ETA %" PRIu64 ":%02" PRIu64, s / 60, s % 60);
	} else {
		snprintf(eta, sizeof(eta), p->total > done ? "ETA -:--" : "ETA 0:00");
	}
	if (!p->total) /* a stream: no size, no ETA */
		snprintf(b, sizeof(b), "?"), snprintf(eta, sizeof(eta), "ETA ?");
	if (p->tty) {
		fprintf(stderr, "\r\033[K%s: %s / %s  %.0f MB/s  %s", p->phase, a, b, rate / 1e6, eta);
		p->shown = true;
	} else {
		fprintf(stderr, PROG ": %s: %s / %s  %.0f MB/s  %s\n", p->phase, a, b, rate / 1e6, eta);
	}
	fflush(stderr);
	p->printed = true;
	p->last = t;
}

static void progress_clear(struct progress *p)
{
	if (p->shown) {
		fprintf(stderr, "\r\033[K");
		fflush(stderr);
		p->shown = false;
	}
}

static void account(struct dir_stats *d, const struct dmaio_xfer *x)
{
	if (!x->done && !x->fallbacks)
		return; /* the read that found the end of the file */
	d->bytes += x->done;
	d->ns += x->ns;
	d->calls++;
	d->fallbacks += x->fallbacks;
	d->unaligned += x->unaligned;
	if (x->path < DMAIO_PATH_COUNT)
		d->path_bytes[x->path] += x->done;
}

static void io_error(const char *what, const char *name, int err, unsigned flags)
{
	int forced = (int)(flags & DMAIO_RW_PATH_MASK);

	if (err == -EOPNOTSUPP && forced)
		fprintf(stderr, PROG ": %s %s: path '%s' cannot serve this buffer and file (%s)\n", what,
			name, dmaio_path_name(forced), strerror(-err));
	else
		fprintf(stderr, PROG ": %s %s: %s\n", what, name, strerror(-err));
}

/* The name of path @p: the library's own (dmaio_path_name), the one DMAIO_PATH and --path take;
 * for a memfd buffer, udmabuf-direct is O_DIRECT into the memfd's pages, said beside it. */
static const char *path_label(int kind, int p)
{
	if (kind == DMAIO_BUF_MEMFD && p == DMAIO_PATH_UDMABUF_DIRECT)
		return "udmabuf-direct (O_DIRECT into the memfd's pages)";
	return dmaio_path_name((uint32_t)p);
}

static int buf_kind = -1;

static void report_dir(const char *what, const char *name, const struct dir_stats *d)
{
	int p, n = 0;

	printf("%-5s %s: %" PRIu64 " bytes in %.3f s, %.1f MB/s, ", what, name, d->bytes, d->ns / 1e9,
	       mbps(d->bytes, d->ns));
	for (p = 0; p < DMAIO_PATH_COUNT; p++)
		if (d->path_bytes[p])
			n++;
	if (n == 0) {
		printf("no path used");
	} else if (n == 1) {
		for (p = 0; p < DMAIO_PATH_COUNT; p++)
			if (d->path_bytes[p])
				printf("path %s", path_label(buf_kind, p));
	} else {
		printf("paths");
		for (p = 0; p < DMAIO_PATH_COUNT; p++)
			if (d->path_bytes[p])
				printf(" %s (%" PRIu64 " bytes)", path_label(buf_kind, p), d->path_bytes[p]);
	}
	printf(" (%" PRIu64 " calls, %" PRIu64 " fallbacks, %" PRIu64 " unaligned bytes)\n", d->calls,
	       d->fallbacks, d->unaligned);
}

/* Re-read both files (page cache dropped first, so DST comes from the disk) and compare. */
static int verify(const char *src, const char *dst, uint64_t expect, struct progress *prog)
{
	unsigned char *a = NULL, *b = NULL;
	int fa = -1, fb = -1, ret = 1;
	uint64_t off = 0;

	fa = open(src, O_RDONLY | O_CLOEXEC);
	if (fa < 0) {
		fprintf(stderr, PROG ": verify: open %s: %s\n", src, strerror(errno));
		goto out;
	}
	fb = open(dst, O_RDONLY | O_CLOEXEC);
	if (fb < 0) {
		fprintf(stderr, PROG ": verify: open %s: %s\n", dst, strerror(errno));
		goto out;
	}
	posix_fadvise(fa, 0, 0, POSIX_FADV_DONTNEED);
	posix_fadvise(fb, 0, 0, POSIX_FADV_DONTNEED);
	a = malloc(VERIFY_CHUNK);
	b = malloc(VERIFY_CHUNK);
	if (!a || !b) {
		fprintf(stderr, PROG ": verify: out of memory\n");
		goto out;
	}
	for (;;) {
		ssize_t na = 0, nb = 0, r;
		size_t i, n;

		/* fill both chunks fully (short reads only at EOF) */
		while (na < (ssize_t)VERIFY_CHUNK) {
			r = pread(fa, a + na, VERIFY_CHUNK - (size_t)na, (off_t)(off + (uint64_t)na));
			if (r < 0 && errno == EINTR)
				continue;
			if (r < 0) {
				fprintf(stderr, PROG ": verify: read %s: %s\n", src, strerror(errno));
				goto out;
			}
			if (r == 0)
				break;
			na += r;
		}
		while (nb < (ssize_t)VERIFY_CHUNK) {
			r = pread(fb, b + nb, VERIFY_CHUNK - (size_t)nb, (off_t)(off + (uint64_t)nb));
			if (r < 0 && errno == EINTR)
				continue;
			if (r < 0) {
				fprintf(stderr, PROG ": verify: read %s: %s\n", dst, strerror(errno));
				goto out;
			}
			if (r == 0)
				break;
			nb += r;
		}
		n = (size_t)(na < nb ? na : nb);
		if (memcmp(a, b, n)) {
			for (i = 0; i < n && a[i] == b[i]; i++)
				;
			fprintf(stderr, PROG ": verify: %s and %s differ at byte %" PRIu64 " (0x%" PRIx64 ")\n",
				src, dst, off + i, off + i);
			goto out;
		}
		if (na != nb) {
			fprintf(stderr, PROG ": verify: %s and %s differ in size: %s ends at byte %" PRIu64 "\n",
				src, dst, na < nb ? src : dst, off + n);
			goto out;
		}
		off += n;
		progress_update(prog, off);
		if (na < (ssize_t)VERIFY_CHUNK)
			break;
	}
	progress_clear(prog);
	if (off != expect)
		fprintf(stderr, PROG ": verify: note: %s has %" PRIu64 " bytes, %" PRIu64 " were copied\n", src,
			off, expect);
	if (verbose)
		printf("verify: %" PRIu64 " bytes identical (re-read from the files)\n", off);
	ret = 0;
out:
	progress_clear(prog);
	free(a);
	free(b);
	if (fa >= 0)
		close(fa);
	if (fb >= 0)
		close(fb);
	return ret;
}

static void usage(FILE *out)
{
	int p;

	fprintf(out,
		"Usage: " PROG " [--heap H] [--path P] [--verify] [--no-progress] [-v] SRC DST\n"
		"Copy SRC to DST through a dma-buf: SRC is read into the buffer and the buffer written\n"
		"to DST, in chunks of the buffer size (the file size, at most 256 MiB).\n"
		"\n"
		"  --heap H    allocate from H: a /dev/dma_heap name, udmabuf, udmabuf-huge, drm, memfd\n"
		"              (default: the best dma-buf provider, a memfd when there is none)\n"
		"  --path P    force path P for both directions, without fallback; P is one of:\n"
		"             ");
	for (p = 0; p < DMAIO_PATH_COUNT; p++)
		fprintf(out, " %s", dmaio_path_name(p) ? dmaio_path_name(p) : "?");
	fprintf(out,
		"\n"
		"  --verify    re-read both files afterwards and compare them byte for byte\n"
		"  --no-progress  no progress reports\n"
		"  --progress-interval MS  report progress every MS milliseconds (also the first)\n"
		"  -v          report the path of each direction, bytes and MB/s\n"
		"  --version   print the version of dmaio-cp and of the libdmaio it runs with\n"
		"  -h, --help  this help\n"
		"\n"
		"DST may be a directory. SRC or DST may be a pipe or terminal (/dev/stdin, /dev/stdout):\n"
		"such a file is streamed through the buffer (not with --verify).\n"
		"Progress (copy and verify: bytes, MB/s, ETA) goes to stderr: on a terminal one line\n"
		"updated in place, after a second; otherwise a plain line every 5 seconds.\n"
		"Exit status: 0 copied (and verified), 1 an error, 2 a usage error.\n");
}

/* What the command line asks for. */
struct cp_opts {
	const char *heap, *src, *dst;
	bool verify, progress;
	long interval_ms;   /* -1: the default */
	unsigned flags;     /* a forced path */
};

/* The command line into @o (and the global verbose): -1 to go on, else the exit status (--help,
 * --version: 0; a usage error: 2). Apart from main so that it can be run alone
 * (tests/fuzz/fuzz-tool-options.c). */
static int parse_options(int argc, char **argv, struct cp_opts *o)
{
	static const struct option opts[] = {
		{ "heap", required_argument, NULL, 'H' },
		{ "path", required_argument, NULL, 'P' },
		{ "verify", no_argument, NULL, 'V' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'R' },
		{ "no-progress", no_argument, NULL, 'N' },
		{ "progress-interval", required_argument, NULL, 'I' },
		{ NULL, 0, NULL, 0 },
	};
	const char *path_name = NULL;
	char *end;
	int c;

	*o = (struct cp_opts){ .progress = true, .interval_ms = -1 };
	while ((c = getopt_long(argc, argv, "vh", opts, NULL)) != -1) {
		switch (c) {
		case 'H':
			o->heap = optarg;
			break;
		case 'P':
			path_name = optarg;
			break;
		case 'V':
			o->verify = true;
			break;
		case 'v':
			verbose = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'R': {
			unsigned v = dmaio_version();

			printf(PROG " %d.%d.%d (libdmaio %u.%u.%u)\n", DMAIO_VERSION_MAJOR,
			       DMAIO_VERSION_MINOR, DMAIO_VERSION_MICRO, v >> 16, (v >> 8) & 0xff, v & 0xff);
			return 0;
		}
		case 'N':
			o->progress = false;
			break;
		case 'I':
			errno = 0;
			o->interval_ms = strtol(optarg, &end, 10);
			if (errno || *end || end == optarg || o->interval_ms < 0) {
				fprintf(stderr, PROG ": --progress-interval: '%s' is not a number of ms\n", optarg);
				return 2;
			}
			break;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (argc - optind != 2) {
		fprintf(stderr, PROG ": expected SRC and DST\n");
		usage(stderr);
		return 2;
	}
	o->src = argv[optind];
	o->dst = argv[optind + 1];
	if (path_name) {
		int p = dmaio_path_from_name(path_name);

		if (p < 0) {
			fprintf(stderr, PROG ": unknown path '%s' (see --help for the names)\n", path_name);
			return 2;
		}
		if (p != DMAIO_PATH_AUTO)
			o->flags = DMAIO_RW_PATH(p) | DMAIO_RW_NO_FALLBACK;
	}
	return -1;
}

int main(int argc, char **argv)
{
	struct cp_opts o;
	const char *heap, *src, *dst;
	char *dst_alloc = NULL;
	bool do_verify, show_progress, src_stream, dst_stream;
	long interval_ms;
	unsigned char *map = NULL;
	struct stat dfst;
	struct dmaio_buf *buf = NULL;
	struct dir_stats rd = { 0 }, wr = { 0 };
	struct progress prog = { 0 };
	struct stat sst, dstst;
	unsigned flags;
	uint64_t size, off = 0, t0, t1;
	size_t bs;
	int c, sfd = -1, dfd = -1, ret, status = 1;

	setvbuf(stdout, NULL, _IOLBF, 0);
	c = parse_options(argc, argv, &o);
	if (c >= 0)
		return c;
	heap = o.heap;
	src = o.src;
	dst = o.dst;
	do_verify = o.verify;
	show_progress = o.progress;
	interval_ms = o.interval_ms;
	flags = o.flags;

	sfd = open(src, O_RDONLY | O_CLOEXEC);
	if (sfd < 0) {
		fprintf(stderr, PROG ": open %s: %s\n", src, strerror(errno));
		goto out;
	}
	if (fstat(sfd, &sst) < 0) {
		fprintf(stderr, PROG ": stat %s: %s\n", src, strerror(errno));
		goto out;
	}
	if (S_ISDIR(sst.st_mode)) {
		fprintf(stderr, PROG ": %s: %s\n", src, strerror(EISDIR));
		goto out;
	}
	size = (uint64_t)sst.st_size;
	/* a pipe, socket or character device has no offsets to read at (and no size) */
	src_stream = !S_ISREG(sst.st_mode) && !S_ISBLK(sst.st_mode);
	if (src_stream && do_verify) {
		fprintf(stderr, PROG ": --verify: %s cannot be read twice (not a regular file or block device)\n",
			src);
		status = 2;
		goto out;
	}
	if (src_stream)
		size = 0;
	if (S_ISBLK(sst.st_mode)) {
		struct dmaio_file_info fi = { .struct_size = sizeof(struct dmaio_file_info) };

		ret = dmaio_fd_get_info(sfd, &fi);
		if (ret < 0) {
			fprintf(stderr, PROG ": probe %s: %s\n", src, strerror(-ret));
			goto out;
		}
		size = fi.file_size;
	}

	/* DST may be a directory: copy into it under SRC's name */
	if (stat(dst, &dstst) == 0 && S_ISDIR(dstst.st_mode)) {
		char *tmp = strdup(src);

		if (!tmp || asprintf(&dst_alloc, "%s/%s", dst, basename(tmp)) < 0) {
			free(tmp);
			fprintf(stderr, PROG ": out of memory\n");
			goto out;
		}
		free(tmp);
		dst = dst_alloc;
	}
	if (stat(dst, &dstst) == 0 && dstst.st_dev == sst.st_dev && dstst.st_ino == sst.st_ino) {
		fprintf(stderr, PROG ": %s and %s are the same file\n", src, dst);
		goto out;
	}
	dfd = open(dst, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, sst.st_mode & 0777);
	if (dfd < 0 && errno == EACCES)
		dfd = open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, sst.st_mode & 0777);
	if (dfd < 0) {
		fprintf(stderr, PROG ": open %s: %s\n", dst, strerror(errno));
		goto out;
	}
	if (fstat(dfd, &dfst) < 0) {
		fprintf(stderr, PROG ": stat %s: %s\n", dst, strerror(errno));
		goto out;
	}
	dst_stream = !S_ISREG(dfst.st_mode) && !S_ISBLK(dfst.st_mode);
	if (dst_stream && do_verify) {
		fprintf(stderr, PROG ": --verify: %s cannot be read back (not a regular file or block device)\n",
			dst);
		status = 2;
		goto out;
	}

	t0 = now_ns();
	if (size == 0 && !src_stream)
		goto done; /* nothing to move: DST is created empty */

	bs = src_stream ? (size_t)STREAM_BUF : size < BUF_MAX ? (size_t)size : (size_t)BUF_MAX;
	for (;;) {
		ret = ex_alloc(heap, bs, heap ? 0 : DMAIO_ALLOC_ALLOW_NON_DMABUF, &buf);
		/* above the provider's limit (udmabuf size_limit_mb) or short of memory: smaller chunks */
		if ((ret == -EFBIG || ret == -ENOMEM) && bs / 2 >= BUF_MIN) {
			bs /= 2;
			continue;
		}
		break;
	}
	if (ret < 0) {
		char hs[32];

		human_size(hs, sizeof(hs), bs);
		bool known = heap && (!strcmp(heap, "udmabuf") || !strcmp(heap, "udmabuf-huge") ||
				      !strcmp(heap, "drm") || !strcmp(heap, "memfd"));

		fprintf(stderr, PROG ": allocate %s from %s%s%s: %s%s\n", hs, heap ? "'" : "",
			heap ? heap : "the default provider", heap ? "'" : "", strerror(-ret),
			ret == -ENOENT && known ? " (this provider is not available here; run dmaio-info)" :
			ret == -ENOENT ? " (no such dma-buf heap here; run dmaio-info for the list)" :
			ret == -EINVAL && heap ? " (not a valid heap name)" :
			ret == -EACCES ? " (no permission; run dmaio-info for the fix)" :
			ret == -ENODEV ? " (no dma-buf provider works; run dmaio-info)" : "");
		goto out;
	}
	if (!heap && dmaio_buf_kind(buf) == DMAIO_BUF_MEMFD)
		fprintf(stderr, PROG ": no dma-buf provider on this machine; using a memfd\n");
	if (verbose) {
		char hs[32];

		human_size(hs, sizeof(hs), bs);
		printf("buffer: %s from %s\n", hs, dmaio_buf_provider(buf));
	}

	buf_kind = dmaio_buf_kind(buf);
	if (src_stream || dst_stream) {
		ret = dmaio_buf_map(buf, (void **)&map);
		if (ret < 0) {
			fprintf(stderr, PROG ": map the buffer (needed to stream %s): %s\n",
				src_stream ? src : dst, strerror(-ret));
			goto out;
		}
	}

	progress_init(&prog, show_progress, interval_ms);
	progress_start(&prog, "copy", size);
	for (;;) {
		size_t step = prog.tty && prog.on ? (size_t)TTY_STEP : bs, r = 0, w;
		bool eof = false;

		/* fill the buffer from SRC */
		if (src_stream)
			dmaio_buf_sync_begin(buf, DMAIO_SYNC_WRITE);
		while (r < bs && !eof) {
			size_t n = bs - r < step ? bs - r : step;
			ssize_t got;

			if (src_stream) {
				got = read(sfd, map + r, n);
				if (got < 0 && errno == EINTR)
					continue;
				if (got < 0)
					got = -errno;
				eof = got == 0;
			} else {
				struct dmaio_xfer x = { .struct_size = sizeof(struct dmaio_xfer) };

				got = dmaio_fd_read(sfd, (off_t)(off + r), buf, r, n, flags, &x);
				account(&rd, &x);
				eof = got >= 0 && (size_t)got < n;
			}
			if (got < 0) {
				progress_clear(&prog);
				io_error("read", src, (int)got, src_stream ? 0 : flags);
				goto out;
			}
			r += (size_t)got;
			progress_update(&prog, off + r);
		}
		if (src_stream)
			dmaio_buf_sync_end(buf, DMAIO_SYNC_WRITE);
		/* and write it to DST */
		if (dst_stream)
			dmaio_buf_sync_begin(buf, DMAIO_SYNC_READ);
		for (w = 0; w < r;) {
			size_t n = r - w < step ? r - w : step;
			ssize_t put;

			if (dst_stream) {
				put = write(dfd, map + w, n);
				if (put < 0 && errno == EINTR)
					continue;
				if (put < 0)
					put = -errno;
			} else {
				struct dmaio_xfer x = { .struct_size = sizeof(struct dmaio_xfer) };

				put = dmaio_fd_write(dfd, (off_t)(off + w), buf, w, n, flags, &x);
				account(&wr, &x);
			}
			if (put < 0) {
				progress_clear(&prog);
				io_error("write", dst, (int)put, dst_stream ? 0 : flags);
				goto out;
			}
			if (put == 0 || (!dst_stream && (size_t)put != n)) {
				progress_clear(&prog);
				fprintf(stderr, PROG ": write %s: short write (%zd of %zu bytes)\n", dst, put, n);
				goto out;
			}
			w += (size_t)put;
		}
		if (dst_stream)
			dmaio_buf_sync_end(buf, DMAIO_SYNC_READ);
		off += (uint64_t)r;
		if (off > prog.total && !src_stream)
			prog.total = off;
		progress_update(&prog, off);
		if (eof || r < bs)
			break; /* end of file */
	}
	progress_clear(&prog);
done:
	/* --verify re-reads DST from the disk: its pages must be clean to be dropped */
	if (do_verify && dfd >= 0 && fdatasync(dfd) < 0) {
		fprintf(stderr, PROG ": fsync %s: %s\n", dst, strerror(errno));
		goto out;
	}
	if (dfd >= 0 && close(dfd) < 0) {
		dfd = -1;
		fprintf(stderr, PROG ": close %s: %s\n", dst, strerror(errno));
		goto out;
	}
	dfd = -1;
	t1 = now_ns();
	if (verbose) {
		if (src_stream)
			printf("read  %s: %" PRIu64 " bytes streamed with read() into the mapping\n", src, off);
		else
			report_dir("read", src, &rd);
		if (dst_stream)
			printf("write %s: %" PRIu64 " bytes streamed with write() from the mapping\n", dst, off);
		else
			report_dir("write", dst, &wr);
		printf("total: %" PRIu64 " bytes in %.3f s, %.1f MB/s\n", off, (t1 - t0) / 1e9,
		       mbps(off, t1 - t0));
	}
	if (off < size && !src_stream)
		fprintf(stderr, PROG ": note: %s shrank during the copy: %" PRIu64 " of %" PRIu64 " bytes copied\n",
			src, off, size);
	if (do_verify) {
		if (verbose)
			fflush(stdout);
		progress_start(&prog, "verify", off);
		if (verify(src, dst, off, &prog))
			goto out;
	}
	status = 0;
out:
	dmaio_buf_free(buf);
	if (sfd >= 0)
		close(sfd);
	if (dfd >= 0)
		close(dfd);
	free(dst_alloc);
	return status;
}
