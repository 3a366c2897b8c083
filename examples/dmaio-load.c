// SPDX-License-Identifier: MIT
/*
 * dmaio-load: list the tensors of a safetensors or GGUF model (one or more shards), load them
 * into dma-bufs and report the speed, the paths, the CPU time and the peak RSS; --verify
 * checksums every tensor of the buffers against a plain pread() of the file.
 *
 *   dmaio-load --list model-00001.safetensors model-00002.safetensors
 *   dmaio-load --heap system --mode packed --verify --drop-cache model.gguf
 *   dmaio-load --generate /var/tmp/m --format st --shards 2 --tensors 1000 --size-mib 4096
 *
 * A file that is refused is reported with the library's reason: the shard, the field or tensor
 * and the offsets or values that are wrong.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "dmaio-model.h"

#define PROG "dmaio-load"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: dmaio-load [options] FILE...\n"
		"  -l, --list            list the tensors (no load)\n"
		"  -H, --heap NAME       provider of the buffers (a dma-heap name, udmabuf,\n"
		"                        udmabuf-huge, drm or memfd; default: the library's order)\n"
		"  -m, --mode M          whole | tensor | packed (default packed)\n"
		"  -b, --max-buf BYTES   packed: buffer limit (default: the provider's)\n"
		"  -a, --align N         packed: tensor start alignment (default 0: the file phase only)\n"
		"  -d, --depth N         queue depth (default 32)\n"
		"  -p, --path NAME       force a path for every range (buffered, bounce-direct, ...)\n"
		"  -D, --drop-cache      leave no page cache of the ranges read\n"
		"  -c, --cold            drop the files' page cache before loading (fadvise)\n"
		"  -V, --verify          checksum every tensor against pread()\n"
		"  -q, --quiet           one result line\n"
		"      --version         print the version of dmaio-load and of the libdmaio it runs with\n"
		"  -h, --help            this help\n"
		"      --generate PREFIX write a test model: PREFIX-N-of-M.{safetensors,gguf}\n"
		"      --format st|gguf  --shards N --tensors N --size-mib M  (for --generate)\n");
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t fnv(uint64_t h, const unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return h;
}

static int pwrite_all(int fd, const void *p, size_t n, off_t off)
{
	const char *c = p;

	while (n > 0) {
		ssize_t r = pwrite(fd, c, n, off);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		c += r;
		n -= (size_t)r;
		off += r;
	}
	return 0;
}

/* data of a generated model: each 8-byte word is its file offset xor a shard constant */
static int fill_data(int fd, uint64_t off, uint64_t len, uint64_t shard)
{
	static uint64_t buf[1 << 17];
	uint64_t end = off + len;

	while (off < end) {
		uint64_t base = off & ~7ull, n = sizeof(buf);
		int r;

		for (size_t i = 0; i < sizeof(buf) / 8; i++)
			buf[i] = (base + 8 * i) ^ (shard * 0x9e3779b97f4a7c15ull);
		if (n > end - base)
			n = end - base;
		r = pwrite_all(fd, (char *)buf + (off - base), (size_t)(n - (off - base)), (off_t)off);
		if (r < 0)
			return r;
		off = base + n;
	}
	return 0;
}

/*
 * tensor sizes, shaped like a transformer's: for @total >= 1 GiB two of 256 MiB (embedding and
 * output), a third tiny (4-16 KiB: norms, biases), the rest log-spread from 256 KiB to 64 MiB,
 * scaled so the sum is about @total (each kept within 4 KiB .. 256 MiB)
 */
static uint64_t *gen_sizes(unsigned n, uint64_t total)
{
	uint64_t *s = calloc(n, sizeof(*s)), fixed = 0, mid = 0;
	uint64_t seed = 12345;
	unsigned nbig = total >= (1ull << 30) && n >= 8 ? 2 : 0;

	if (!s)
		return NULL;
	for (unsigned i = 0; i < n; i++) {
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		double u = (double)(seed >> 11) / 9007199254740992.0; /* [0, 1) */

		if (i < nbig)
			s[i] = 256ull << 20;
		else if (i % 3 == 2)
			s[i] = 4096ull << (unsigned)(u * 3); /* 4, 8 or 16 KiB */
		else
			s[i] = (uint64_t)(262144.0 * pow(256.0, u)); /* 256 KiB .. 64 MiB */
		if (i < nbig || i % 3 == 2)
			fixed += s[i];
		else
			mid += s[i];
	}
	double k = total > fixed && mid ? (double)(total - fixed) / (double)mid : 1.0;

	for (unsigned i = nbig; i < n; i++) {
		double v = i % 3 == 2 ? (double)s[i] : (double)s[i] * k;

		if (v < 4096)
			v = 4096;
		if (v > 256.0 * 1048576)
			v = 256.0 * 1048576;
		s[i] = (uint64_t)v & ~3ull;
	}
	return s;
}

static int generate(const char *prefix, const char *format, unsigned shards, unsigned ntensors,
		    uint64_t size_mib)
{
	uint64_t *sizes = gen_sizes(ntensors, size_mib << 20);
	bool st = strcmp(format, "st") == 0;
	unsigned per = (ntensors + shards - 1) / shards;

	if (!sizes)
		return 1;
	for (unsigned sh = 0; sh < shards; sh++) {
		char path[4096], *hdr;
		size_t cap = 1 << 20, n = 0;
		unsigned first = sh * per, last = first + per > ntensors ? ntensors : first + per;
		uint64_t at = 0;
		int fd, r;

		snprintf(path, sizeof(path), "%s-%05u-of-%05u.%s", prefix, sh + 1, shards,
			 st ? "safetensors" : "gguf");
		fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd < 0) {
			fprintf(stderr, "dmaio-load: %s: %s\n", path, strerror(errno));
			return 1;
		}
		hdr = malloc(cap + (size_t)(last - first) * 160);
		if (!hdr)
			return 1;
		if (st) {
			n = 8;
			n += (size_t)sprintf(hdr + n, "{\"__metadata__\":{\"format\":\"pt\"}");
			for (unsigned i = first; i < last; i++) {
				n += (size_t)sprintf(hdr + n,
						     ",\"layer.%u.weight\":{\"dtype\":\"F32\",\"shape\":[%" PRIu64
						     "],\"data_offsets\":[%" PRIu64 ",%" PRIu64 "]}",
						     i, sizes[i] / 4, at, at + sizes[i]);
				at += sizes[i];
			}
			hdr[n++] = '}';
			while (n % 8)
				hdr[n++] = ' ';
			uint64_t len = n - 8;

			for (int k = 0; k < 8; k++)
				hdr[k] = (char)(len >> (8 * k));
		} else {
#define PUT(v, w)                                           \
	do {                                                \
		uint64_t x_ = (v);                          \
		for (int k_ = 0; k_ < (w); k_++)            \
			hdr[n++] = (char)(x_ >> (8 * k_));  \
	} while (0)
			memcpy(hdr, "GGUF", 4);
			n = 4;
			PUT(3, 4);
			PUT(last - first, 8);
			PUT(1, 8);
			PUT(17, 8);
			memcpy(hdr + n, "general.alignment", 17);
			n += 17;
			PUT(4, 4);
			PUT(32, 4);
			for (unsigned i = first; i < last; i++) {
				char name[64];
				int nl = snprintf(name, sizeof(name), "blk.%u.weight", i);

				PUT((uint64_t)nl, 8);
				memcpy(hdr + n, name, (size_t)nl);
				n += (size_t)nl;
				PUT(1, 4);
				PUT(sizes[i] / 4, 8);
				PUT(0, 4); /* F32 */
				PUT(at, 8);
				at = (at + sizes[i] + 31) / 32 * 32;
			}
			while (n % 32)
				hdr[n++] = 0;
#undef PUT
		}
		r = pwrite_all(fd, hdr, n, 0);
		if (r == 0)
			r = fill_data(fd, n, at, sh);
		if (r == 0 && fsync(fd) < 0)
			r = -errno;
		free(hdr);
		close(fd);
		if (r < 0) {
			fprintf(stderr, "dmaio-load: writing %s: %s\n", path, strerror(-r));
			return 1;
		}
		printf("%s: %u tensors, %.1f MiB\n", path, last - first, (double)(n + at) / 1048576);
	}
	free(sizes);
	return 0;
}

/* buffer @b of the load (NULL past the count) */
static struct dmaio_buf *lbuf(const struct dmaio_load *l, int b)
{
	struct dmaio_buf *buf = NULL;

	if (dmaio_load_get_buf(l, (uint32_t)b, &buf) < 0)
		return NULL;
	return buf;
}

static int verify(struct dmaio_model *m, struct dmaio_load *l, const int *fds)
{
	int nt = dmaio_model_tensor_count(m), nb = dmaio_load_buf_count(l), bad = 0;
	void **maps = calloc((size_t)nb + 1, sizeof(void *));
	size_t cap = 1 << 20;
	unsigned char *tmp = malloc(cap);

	if (!maps || !tmp)
		return -ENOMEM;
	for (int b = 0; b < nb; b++) {
		int r = dmaio_buf_map(lbuf(l, b), &maps[b]);

		if (r == 0)
			r = dmaio_buf_sync_begin(lbuf(l, b), DMAIO_SYNC_READ);
		if (r < 0) {
			fprintf(stderr, "dmaio-load: map buffer %d: %s\n", b, strerror(-r));
			return r;
		}
	}
	for (int i = 0; i < nt; i++) {
		struct dmaio_tensor_info ti = { .struct_size = sizeof(struct dmaio_tensor_info) };
		struct dmaio_tensor_place pl = { .struct_size = sizeof(struct dmaio_tensor_place) };
		uint64_t h1 = 0xcbf29ce484222325ull, h2 = h1;

		dmaio_model_get_tensor(m, (unsigned)i, &ti);
		if (dmaio_load_get_tensor(l, (unsigned)i, &pl) < 0 || !pl.buf)
			continue;
		h1 = fnv(h1, (unsigned char *)maps[pl.buf_index] + pl.offset, (size_t)pl.nbytes);
		for (uint64_t o = 0; o < ti.nbytes;) {
			size_t n = ti.nbytes - o < cap ? (size_t)(ti.nbytes - o) : cap;
			ssize_t r = pread(fds[ti.file], tmp, n, (off_t)(ti.offset + o));

			if (r <= 0) {
				fprintf(stderr, "dmaio-load: pread %s: %s\n", ti.name,
					r < 0 ? strerror(errno) : "short file");
				bad++;
				break;
			}
			h2 = fnv(h2, tmp, (size_t)r);
			o += (uint64_t)r;
		}
		if (h1 != h2) {
			fprintf(stderr, "dmaio-load: %s differs (%016" PRIx64 " != %016" PRIx64 ")\n",
				ti.name, h1, h2);
			bad++;
		}
	}
	for (int b = 0; b < nb; b++) {
		dmaio_buf_sync_end(lbuf(l, b), DMAIO_SYNC_READ);
		dmaio_buf_unmap(lbuf(l, b));
	}
	free(maps);
	free(tmp);
	return bad;
}

/* What the command line asks for. */
struct load_cli {
	struct dmaio_alloc_opts ao;
	const char *providers[2];
	struct dmaio_load_opts lo;
	bool list, verify, cold, quiet;
	const char *gen, *format;    /* --generate PREFIX, its --format */
	unsigned shards, ntensors;
	uint64_t size_mib;
};

/* The command line into @o (in place: o->lo points into it): -1 to go on (the files from optind,
 * or --generate), else the exit status (--help, --version: 0; a usage error: 2). Apart from main
 * so that it can be run alone (tests/fuzz/fuzz-tool-options.c). */
static int parse_options(int argc, char **argv, struct load_cli *o)
{
	static const struct option opts[] = {
		{ "list", no_argument, 0, 'l' },	  { "heap", required_argument, 0, 'H' },
		{ "mode", required_argument, 0, 'm' },	  { "max-buf", required_argument, 0, 'b' },
		{ "align", required_argument, 0, 'a' },	  { "depth", required_argument, 0, 'd' },
		{ "path", required_argument, 0, 'p' },	  { "drop-cache", no_argument, 0, 'D' },
		{ "cold", no_argument, 0, 'c' },	  { "verify", no_argument, 0, 'V' },
		{ "quiet", no_argument, 0, 'q' },	  { "help", no_argument, 0, 'h' },
		{ "generate", required_argument, 0, 1 }, { "format", required_argument, 0, 2 },
		{ "shards", required_argument, 0, 3 },	  { "tensors", required_argument, 0, 4 },
		{ "size-mib", required_argument, 0, 5 }, { "version", no_argument, 0, 6 },
		{ 0, 0, 0, 0 },
	};
	int c, r;

	memset(o, 0, sizeof(*o));
	o->ao.struct_size = sizeof(o->ao);
	o->lo.struct_size = sizeof(struct dmaio_load_opts);
	o->format = "st";
	o->shards = 1;
	o->ntensors = 1000;
	o->size_mib = 1024;
	o->lo.mode = DMAIO_LOAD_PACKED;
	while ((c = getopt_long(argc, argv, "lH:m:b:a:d:p:DcVqh", opts, NULL)) != -1) {
		switch (c) {
		case 'l': o->list = true; break;
		case 'H':
			o->providers[0] = optarg; /* a list of one */
			o->ao.providers = o->providers;
			o->lo.alloc = &o->ao;
			break;
		case 'm':
			if (!strcmp(optarg, "whole"))
				o->lo.mode = DMAIO_LOAD_WHOLE;
			else if (!strcmp(optarg, "tensor"))
				o->lo.mode = DMAIO_LOAD_PER_TENSOR;
			else if (!strcmp(optarg, "packed"))
				o->lo.mode = DMAIO_LOAD_PACKED;
			else {
				usage(stderr);
				return 2;
			}
			break;
		case 'b': o->lo.max_buf = strtoull(optarg, NULL, 0); break;
		case 'a': o->lo.align = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'd': o->lo.depth = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'p':
			r = dmaio_path_from_name(optarg);
			if (r < 0) {
				fprintf(stderr, "dmaio-load: unknown path %s\n", optarg);
				return 2;
			}
			o->lo.rw_flags = DMAIO_RW_PATH(r) | DMAIO_RW_NO_FALLBACK;
			break;
		case 'D': o->lo.flags |= DMAIO_LOAD_DROP_CACHE; break;
		case 'c': o->cold = true; break;
		case 'V': o->verify = true; break;
		case 'q': o->quiet = true; break;
		case 'h': usage(stdout); return 0;
		case 1: o->gen = optarg; break;
		case 2: o->format = optarg; break;
		case 3: o->shards = (unsigned)strtoul(optarg, NULL, 0); break;
		case 4: o->ntensors = (unsigned)strtoul(optarg, NULL, 0); break;
		case 5: o->size_mib = strtoull(optarg, NULL, 0); break;
		case 6: {
			uint32_t v = dmaio_version();

			printf(PROG " %d.%d.%d (libdmaio %u.%u.%u)\n", DMAIO_VERSION_MAJOR,
			       DMAIO_VERSION_MINOR, DMAIO_VERSION_MICRO, v >> 16, (v >> 8) & 0xff,
			       v & 0xff);
			return 0;
		}
		default: usage(stderr); return 2;
		}
	}
	if (o->gen) {
		if (o->shards == 0 || o->ntensors == 0 ||
		    (strcmp(o->format, "st") && strcmp(o->format, "gguf"))) {
			usage(stderr);
			return 2;
		}
		return -1;
	}
	if (o->lo.mode == DMAIO_LOAD_WHOLE)
		o->lo.align = 0;
	if (argc - optind <= 0) {
		usage(stderr);
		return 2;
	}
	return -1;
}

int main(int argc, char **argv)
{
	struct load_cli o;
	struct dmaio_reason why = { .struct_size = sizeof(why) };
	struct dmaio_model *m = NULL;
	struct dmaio_load *l = NULL;
	struct dmaio_load_stats st = { .struct_size = sizeof(struct dmaio_load_stats) };
	struct rusage ru0, ru1;
	int r, *fds, nfds;
	uint64_t t0, t1;

	r = parse_options(argc, argv, &o);
	if (r >= 0)
		return r;
	if (o.gen)
		return generate(o.gen, o.format, o.shards, o.ntensors, o.size_mib);
	nfds = argc - optind;
	fds = calloc((size_t)nfds, sizeof(int));
	for (int i = 0; i < nfds; i++) {
		fds[i] = open(argv[optind + i], O_RDONLY | O_CLOEXEC);
		if (fds[i] < 0) {
			fprintf(stderr, "dmaio-load: %s: %s\n", argv[optind + i], strerror(errno));
			return 1;
		}
	}
	r = dmaio_model_open(NULL, fds, (uint32_t)nfds, 0, &m, &why);
	if (r < 0) {
		unsigned shard;
		const char *what = nfds == 1 ? argv[optind] : "the shards";

		/* the reason names the shard by its index: the file name goes before it */
		if (sscanf(why.text, "file %u:", &shard) == 1 && shard < (unsigned)nfds)
			what = argv[optind + (int)shard];
		fprintf(stderr, PROG ": %s: %s\n", what, why.text[0] ? why.text : strerror(-r));
		return 1;
	}
	if (o.list) {
		for (int i = 0; i < dmaio_model_tensor_count(m); i++) {
			struct dmaio_tensor_info ti = { .struct_size = sizeof(struct dmaio_tensor_info) };

			dmaio_model_get_tensor(m, (unsigned)i, &ti);
			printf("%-48s %-8s [", ti.name, ti.dtype_name);
			for (unsigned k = 0; k < ti.ndims; k++)
				printf("%s%" PRIu64, k ? ", " : "", ti.shape[k]);
			printf("]  file %u  offset %" PRIu64 "  %" PRIu64 " bytes\n", ti.file, ti.offset,
			       ti.nbytes);
		}
		dmaio_model_close(m);
		return 0;
	}
	if (o.cold)
		for (int i = 0; i < nfds; i++)
			posix_fadvise(fds[i], 0, 0, POSIX_FADV_DONTNEED);
	getrusage(RUSAGE_SELF, &ru0);
	t0 = now_ns();
	r = dmaio_model_load(m, &o.lo, &l, &why);
	t1 = now_ns();
	getrusage(RUSAGE_SELF, &ru1);
	if (r < 0) {
		fprintf(stderr, PROG ": load: %s\n", why.text[0] ? why.text : strerror(-r));
		return 1;
	}
	dmaio_load_get_stats(l, &st);
	double secs = (double)(t1 - t0) / 1e9;
	double cpu = (double)(ru1.ru_utime.tv_sec - ru0.ru_utime.tv_sec) +
		     (double)(ru1.ru_utime.tv_usec - ru0.ru_utime.tv_usec) / 1e6 +
		     (double)(ru1.ru_stime.tv_sec - ru0.ru_stime.tv_sec) +
		     (double)(ru1.ru_stime.tv_usec - ru0.ru_stime.tv_usec) / 1e6;
	printf("%d tensors, %" PRIu64 " bytes in %" PRIu64 " buffers (%s), %" PRIu64
	       " ranges: %.3f s, %.2f GB/s, CPU %.3f s (%.3f s/GiB), peak RSS %ld KiB\n",
	       dmaio_model_tensor_count(m), st.bytes, st.buffers,
	       dmaio_load_buf_count(l) ? dmaio_buf_provider(lbuf(l, 0)) : "-", st.ranges,
	       secs, (double)st.bytes / secs / 1e9, cpu,
	       st.bytes ? cpu / ((double)st.bytes / 1073741824.0) : 0.0, ru1.ru_maxrss);
	if (!o.quiet) {
		printf("paths:");
		for (uint32_t p = 0; p < DMAIO_PATH_SLOTS; p++)
			if (st.path_bytes[p])
				printf(" %s %.1f%%", dmaio_path_name(p) ? dmaio_path_name(p) : "?",
				       100.0 * (double)st.path_bytes[p] / (double)st.bytes);
		printf("%s\n", st.fallbacks ? " (with fallbacks)" : "");
	}
	if (o.verify) {
		int bad = verify(m, l, fds);

		if (bad != 0) {
			fprintf(stderr, "dmaio-load: verify: %d tensors differ\n", bad);
			return 1;
		}
		printf("verify: every tensor matches pread()\n");
	}
	dmaio_load_free(l);
	dmaio_model_close(m);
	for (int i = 0; i < nfds; i++)
		close(fds[i]);
	free(fds);
	return 0;
}
