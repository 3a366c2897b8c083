/* SPDX-License-Identifier: MIT */
/*
 * fuzz-queue: random batches of struct dmaio_io on queues of several depths, against small files
 * (read-write, O_DIRECT, read-only, write-only, O_APPEND, one of another context) and memfd
 * buffers (provider "memfd"; one of another context), checking the contract of
 * dmaio_queue_submit() and dmaio_queue_reap():
 *   - a batch with an invalid range is refused whole, with an errno the header gives for one of
 *     its invalid ranges: nothing is queued (progress unchanged, nothing to reap, no byte moved);
 *     a batch of valid ranges is accepted (all, or a prefix when the queue is full);
 *   - every accepted range completes exactly once, with its user_data, res and done within its
 *     length (-EOPNOTSUPP only for a forced path without fallback);
 *   - no byte of a buffer or file outside the ranges changes (the guards: every byte the batch
 *     does not target, the file sizes), and each range whose bytes no other range of its batch
 *     touches moved exactly the reference bytes: a read what the file held (short only at end
 *     of file), a write what the buffer held.
 *
 * Input: a header byte (queue, contents seed), then batches: a batch byte (ranges, struct
 * sizes), then per range 8 bytes (operation, file, buffer, flags, offsets and length selectors)
 * and, for the wild ones, raw 64-bit offsets or lengths (tests/fuzz/make-seeds.py writes them).
 * Files go to $DMAIO_FUZZ_DIR, else $TMPDIR, else /var/tmp (made and unlinked at start).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>

#include <dmaio.h>

#include "fuzz.h"

#define NFILES 6     /* files[5] is of the other context */
#define NBUFS 4      /* bufs[3] is of the other context */
#define FILE_ROOM (160u << 10) /* every file stays below this (offsets and lengths are smaller) */
#define MAX_BATCH 16
#define MAX_BATCHES 6
#define NQUEUES 4

static const struct {
	int flags;
	uint64_t size; /* at the start of every input */
	bool can_read, can_write;
} file_spec[NFILES] = {
	{ O_RDWR, 40000, true, true },
	{ O_RDWR | O_DIRECT, 65536, true, true },
	{ O_RDONLY, 12305, true, false },
	{ O_WRONLY, 0, false, true },
	{ O_RDWR | O_APPEND, 100, true, false },
	{ O_RDWR, 8192, true, true },
};
static const uint64_t buf_size[NBUFS] = { 65536, 20580, 4096, 4096 };
static const uint32_t queue_depth[NQUEUES] = { 1, 2, 8, 32 };

static struct {
	struct dmaio_ctx *ctx, *other;
	struct dmaio_file *file[NFILES];
	int ref[NFILES];          /* the harness's own descriptor of each file */
	int fd[NFILES];           /* opened as file_spec says, registered again after a growth */
	struct dmaio_buf *buf[NBUFS];
	unsigned char *map[NBUFS];
	struct dmaio_queue *q[NQUEUES];
	unsigned char *fsnap[NFILES], *fnow[NFILES]; /* FILE_ROOM each */
	unsigned char *bsnap[NBUFS];
	uint64_t seq;             /* user_data of the ranges: unique over the run */
	bool verbose;             /* DMAIO_FUZZ_VERBOSE: each batch on stderr */
} g;

static uint64_t file_size(int i)
{
	struct stat st;

	if (fstat(g.ref[i], &st) < 0)
		FUZZ_DIE("fstat: %m");
	return (uint64_t)st.st_size;
}

/* the whole file into @dst (zeros past its end); its size */
static uint64_t file_read(int i, unsigned char *dst)
{
	uint64_t size = file_size(i), got = 0;

	FUZZ_CHECK(size <= FILE_ROOM, "file %d grew to %llu bytes", i, (unsigned long long)size);
	while (got < size) {
		ssize_t r = pread(g.ref[i], dst + got, size - got, (off_t)got);

		if (r <= 0)
			FUZZ_DIE("pread: %m");
		got += (uint64_t)r;
	}
	memset(dst + size, 0, FILE_ROOM - size);
	return size;
}

static void setup(void)
{
	static const char *const memfd_only[] = { "memfd", NULL };
	struct dmaio_alloc_opts ao = { .struct_size = sizeof(ao), .providers = memfd_only,
				       .name = "fuzz-queue" };
	const char *dir = getenv("DMAIO_FUZZ_DIR");
	char path[4096];
	int r;

	g.verbose = getenv("DMAIO_FUZZ_VERBOSE") != NULL;
	if (!dir || !*dir)
		dir = getenv("TMPDIR");
	if (!dir || !*dir)
		dir = "/var/tmp";
	if ((r = dmaio_ctx_new(0, &g.ctx)) || (r = dmaio_ctx_new(0, &g.other)))
		FUZZ_DIE("dmaio_ctx_new: %s", strerror(-r));
	for (int i = 0; i < NFILES; i++) {
		int fd;

		snprintf(path, sizeof(path), "%s/dmaio-fuzz-queue-%d-XXXXXX", dir, i);
		g.ref[i] = mkostemp(path, O_CLOEXEC);
		if (g.ref[i] < 0)
			FUZZ_DIE("mkostemp %s: %m", path);
		fd = open(path, file_spec[i].flags | O_CLOEXEC);
		if (fd < 0 && (file_spec[i].flags & O_DIRECT)) /* a filesystem without O_DIRECT */
			fd = open(path, (file_spec[i].flags & ~O_DIRECT) | O_CLOEXEC);
		if (fd < 0)
			FUZZ_DIE("open %s: %m", path);
		unlink(path);
		g.fd[i] = fd;
		r = dmaio_file_open(i == NFILES - 1 ? g.other : g.ctx, fd, 0, &g.file[i]);
		if (r)
			FUZZ_DIE("dmaio_file_open %s: %s", path, strerror(-r));
		g.fsnap[i] = malloc(FILE_ROOM);
		g.fnow[i] = malloc(FILE_ROOM);
		if (!g.fsnap[i] || !g.fnow[i])
			FUZZ_DIE("out of memory");
	}
	for (int i = 0; i < NBUFS; i++) {
		void *m;

		r = dmaio_buf_alloc(i == NBUFS - 1 ? g.other : g.ctx, buf_size[i], &ao, &g.buf[i],
				    NULL);
		if (r)
			FUZZ_DIE("dmaio_buf_alloc(memfd, %llu): %s", (unsigned long long)buf_size[i],
				 strerror(-r));
		r = dmaio_buf_map(g.buf[i], &m);
		if (r)
			FUZZ_DIE("dmaio_buf_map: %s", strerror(-r));
		g.map[i] = m;
		g.bsnap[i] = malloc(buf_size[i]);
		if (!g.bsnap[i])
			FUZZ_DIE("out of memory");
	}
	for (int i = 0; i < NQUEUES; i++) {
		r = dmaio_queue_new(g.ctx, queue_depth[i], 0, &g.q[i]);
		if (r)
			FUZZ_DIE("dmaio_queue_new(%u): %s", queue_depth[i], strerror(-r));
	}
}

/* Every file and buffer back to its size and a pattern of @seed: a window of a longer pattern
 * made once (no byte loop here: the harness's own loops cost the fuzzer more than the library). */
static void reset(uint8_t seed)
{
	static unsigned char *pat;
	size_t off = (size_t)seed * 61;

	if (!pat) {
		if (!(pat = malloc(FILE_ROOM + 256 * 61)))
			FUZZ_DIE("out of memory");
		for (size_t k = 0; k < FILE_ROOM + 256 * 61; k++)
			pat[k] = (unsigned char)(k * 31 + (k >> 8) + (k >> 16) * 7);
	}
	for (int i = 0; i < NFILES; i++) {
		uint64_t n = file_spec[i].size;
		bool grown = file_size(i) != n;
		int r;

		if (ftruncate(g.ref[i], (off_t)n) < 0 ||
		    pwrite(g.ref[i], pat + off + 977 * i, n, 0) != (ssize_t)n)
			FUZZ_DIE("resetting file %d: %m", i);
		/* A registered file knows its size (dmaio_file_open(3)): one shrunk behind its back
		 * is a file truncated under a read, whose bytes past the new end the header leaves
		 * open. The file is registered again instead. */
		if (grown && g.file[i]) {
			dmaio_file_close(g.file[i]);
			r = dmaio_file_open(i == NFILES - 1 ? g.other : g.ctx, g.fd[i], 0, &g.file[i]);
			if (r)
				FUZZ_DIE("dmaio_file_open again: %s", strerror(-r));
		}
	}
	for (int i = 0; i < NBUFS; i++)
		memcpy(g.map[i], pat + off + 1231 * (i + 1), buf_size[i]);
}

struct range {
	struct dmaio_io io;      /* as given (the library's size; the batch may be laid out wider) */
	int fi, bi;              /* file and buffer index, -1 for NULL */
	int errs[8];             /* the errnos this range may be refused with; none: valid */
	int nerr;
	bool accepted, seen, certain;
	int64_t res;
	uint64_t done;
};

static void add_err(struct range *r, int e)
{
	if (r->nerr < 8)
		r->errs[r->nerr++] = e;
}

/* What the header says of one range (dmaio_queue_submit(3), -EINVAL ... -EBADF). */
static void classify(struct range *r, uint32_t stride, bool tail_dirty)
{
	const struct dmaio_io *io = &r->io;
	uint64_t bsize = r->bi >= 0 ? buf_size[r->bi] : 0;

	if (io->struct_size != stride || io->struct_size < DMAIO_SIZE_IO)
		add_err(r, -EINVAL);
	if (tail_dirty)
		add_err(r, -E2BIG);
	if (io->op != DMAIO_OP_READ && io->op != DMAIO_OP_WRITE)
		add_err(r, -EINVAL);
	if (io->pad0 || !io->file || !io->buf)
		add_err(r, -EINVAL);
	if ((io->flags & ~DMAIO_RW_FLAGS_ALL) || (io->flags & DMAIO_RW_PATH_MASK) >= DMAIO_PATH_COUNT)
		add_err(r, -EINVAL);
	if (io->buf_off + io->len < io->buf_off || io->file_off > (uint64_t)INT64_MAX ||
	    io->len > (uint64_t)INT64_MAX - io->file_off)
		add_err(r, -EOVERFLOW);
	else if (io->buf && io->buf_off + io->len > bsize)
		add_err(r, -EINVAL);
	if ((r->fi == NFILES - 1 && io->file) || (r->bi == NBUFS - 1 && io->buf))
		add_err(r, -EINVAL); /* another context than the queue's */
	if (r->fi >= 0 && io->op == DMAIO_OP_READ && !file_spec[r->fi].can_read)
		add_err(r, -EBADF);
	if (r->fi >= 0 && io->op == DMAIO_OP_WRITE && !file_spec[r->fi].can_write)
		add_err(r, -EBADF);
}

static bool overlap(uint64_t a, uint64_t alen, uint64_t b, uint64_t blen)
{
	return alen && blen && a < b + blen && b < a + alen;
}

/* Where range @r writes (its destination) and reads (its source): object kind 0 file, 1 buffer. */
static void dst_of(const struct range *r, int *kind, int *idx, uint64_t *off)
{
	bool rd = r->io.op == DMAIO_OP_READ;

	*kind = rd ? 1 : 0;
	*idx = rd ? r->bi : r->fi;
	*off = rd ? r->io.buf_off : r->io.file_off;
}

static void src_of(const struct range *r, int *kind, int *idx, uint64_t *off)
{
	bool rd = r->io.op == DMAIO_OP_READ;

	*kind = rd ? 0 : 1;
	*idx = rd ? r->fi : r->bi;
	*off = rd ? r->io.file_off : r->io.buf_off;
}

/* The ranges whose bytes no other accepted range of the batch writes or reads into: their
 * outcome is defined (ranges of one queue are not ordered among themselves). A read of a file
 * the batch writes is not: the file's size may change under it. */
static void mark_certain(struct range *rs, int n)
{
	for (int i = 0; i < n; i++) {
		int dk, di, sk, si;
		uint64_t doff, soff;

		if (!rs[i].accepted)
			continue;
		rs[i].certain = rs[i].res >= 0;
		dst_of(&rs[i], &dk, &di, &doff);
		src_of(&rs[i], &sk, &si, &soff);
		for (int j = 0; j < n && rs[i].certain; j++) {
			int ok, oi;
			uint64_t ooff;

			if (j == i || !rs[j].accepted || !rs[j].io.len)
				continue;
			dst_of(&rs[j], &ok, &oi, &ooff);
			if ((ok == dk && oi == di && overlap(doff, rs[i].io.len, ooff, rs[j].io.len)) ||
			    (ok == sk && oi == si && overlap(soff, rs[i].io.len, ooff, rs[j].io.len)) ||
			    (rs[i].io.op == DMAIO_OP_READ && ok == 0 && oi == rs[i].fi))
				rs[i].certain = false;
		}
	}
}

/* The first byte of @now that differs from @was outside the ranges @tmp was patched with. */
static void guard_check(const char *what, int i, unsigned char *tmp, const unsigned char *now,
			const unsigned char *was, uint64_t n)
{
	if (!memcmp(tmp, was, n))
		return;
	for (uint64_t k = 0; k < n; k++)
		FUZZ_CHECK(tmp[k] == was[k], "%s %d: byte %llu outside every range changed (0x%02x, "
			   "was 0x%02x)", what, i, (unsigned long long)k, now[k], was[k]);
}

/* After the batch: the guards and the reference bytes. @size0: each file's size before. */
static void check_data(struct range *rs, int n, const uint64_t *size0)
{
	static unsigned char *tmp;
	uint64_t size_min[NFILES], size_max[NFILES], now[NFILES];

	if (!tmp && !(tmp = malloc(FILE_ROOM)))
		FUZZ_DIE("out of memory");
	for (int i = 0; i < NFILES; i++)
		size_min[i] = size_max[i] = size0[i];
	for (int i = 0; i < n; i++) {
		const struct range *r = &rs[i];
		uint64_t len = r->res >= 0 ? (uint64_t)r->res : r->io.len;

		if (!r->accepted || !len || r->io.op != DMAIO_OP_WRITE)
			continue;
		/* each file's size: at least the end of every write that succeeded, at most the
		 * end of every write (one that failed may have moved part of its bytes) */
		if (r->res >= 0 && r->io.file_off + len > size_min[r->fi])
			size_min[r->fi] = r->io.file_off + len;
		if (r->io.file_off + len > size_max[r->fi])
			size_max[r->fi] = r->io.file_off + len;
	}
	/* the guards: every byte no range may have written is what it was. tmp: the bytes now,
	 * with the snapshot's copied over what each range may have written (its bytes moved when
	 * it succeeded, its whole range if not) */
	for (int f = 0; f < NFILES + NBUFS; f++) {
		bool file = f < NFILES;
		int idx = file ? f : f - NFILES;
		unsigned char *cur = file ? g.fnow[idx] : g.map[idx];
		const unsigned char *was = file ? g.fsnap[idx] : g.bsnap[idx];
		uint64_t size;

		if (file) {
			now[idx] = file_read(idx, g.fnow[idx]);
			FUZZ_CHECK(now[idx] >= size_min[idx] && now[idx] <= size_max[idx],
				   "file %d: size %llu, expected %llu to %llu", idx,
				   (unsigned long long)now[idx], (unsigned long long)size_min[idx],
				   (unsigned long long)size_max[idx]);
			size = now[idx] > size0[idx] ? now[idx] : size0[idx];
		} else {
			size = buf_size[idx];
		}
		memcpy(tmp, cur, size);
		for (int i = 0; i < n; i++) {
			const struct range *r = &rs[i];
			uint64_t len = r->res >= 0 ? (uint64_t)r->res : r->io.len;
			bool rd = r->io.op == DMAIO_OP_READ;

			if (!r->accepted || !len || rd == file || (rd ? r->bi : r->fi) != idx)
				continue;
			if (rd)
				memcpy(tmp + r->io.buf_off, was + r->io.buf_off, len);
			else
				memcpy(tmp + r->io.file_off, was + r->io.file_off, len);
		}
		guard_check(file ? "file" : "buffer", idx, tmp, cur, was, size);
	}
	/* the ranges whose outcome is defined: the reference bytes */
	for (int i = 0; i < n; i++) {
		const struct range *r = &rs[i];
		const struct dmaio_io *io = &r->io;

		if (!r->accepted || !r->certain)
			continue;
		if (io->op == DMAIO_OP_READ) {
			uint64_t avail = size0[r->fi] > io->file_off ? size0[r->fi] - io->file_off : 0;
			uint64_t want = avail < io->len ? avail : io->len;

			FUZZ_CHECK((uint64_t)r->res == want, "read %llu of file %d at %llu (size %llu) "
				   "into buffer %d at %llu: %lld bytes, expected %llu",
				   (unsigned long long)io->len, r->fi, (unsigned long long)io->file_off,
				   (unsigned long long)size0[r->fi], r->bi,
				   (unsigned long long)io->buf_off, (long long)r->res,
				   (unsigned long long)want);
			FUZZ_CHECK(!want || !memcmp(g.map[r->bi] + io->buf_off,
						    g.fsnap[r->fi] + io->file_off, want),
				   "read of file %d [%llu, +%llu) into buffer %d at %llu: wrong bytes",
				   r->fi, (unsigned long long)io->file_off, (unsigned long long)want,
				   r->bi, (unsigned long long)io->buf_off);
		} else {
			FUZZ_CHECK((uint64_t)r->res == io->len, "write of %llu bytes: %lld",
				   (unsigned long long)io->len, (long long)r->res);
			FUZZ_CHECK(!io->len || !memcmp(g.fnow[r->fi] + io->file_off,
						       g.bsnap[r->bi] + io->buf_off, io->len),
				   "write of buffer %d [%llu, +%llu) to file %d at %llu: wrong bytes",
				   r->bi, (unsigned long long)io->buf_off, (unsigned long long)io->len,
				   r->fi, (unsigned long long)io->file_off);
		}
	}
}

/* One range from the input. */
static void make_range(struct fz *in, struct range *r)
{
	uint8_t a = fz_u8(in), b = fz_u8(in), c = fz_u8(in), w = fz_u8(in);
	uint16_t foff = fz_u16(in), boff = fz_u16(in);
	struct dmaio_io *io = &r->io;
	uint64_t bsize;

	memset(r, 0, sizeof(*r));
	io->struct_size = sizeof(*io);
	io->op = (a & 1) ? DMAIO_OP_WRITE : DMAIO_OP_READ;
	r->fi = (a >> 1) % (NFILES + 1);
	if (r->fi == NFILES)
		r->fi = -1;
	r->bi = (a >> 4) % (NBUFS + 1);
	if (r->bi == NBUFS)
		r->bi = -1;
	if (a & 0x80) /* rare: another operation */
		io->op = b & 3 ? (b & 3) + 1 : 0;
	io->file = r->fi >= 0 ? g.file[r->fi] : NULL;
	io->buf = r->bi >= 0 ? g.buf[r->bi] : NULL;
	bsize = r->bi >= 0 ? buf_size[r->bi] : 4096;
	io->buf_off = boff % (bsize + 16);
	io->file_off = foff % (FILE_ROOM / 2);
	/* the length: inside the buffer (the usual), up to its end, a little past it, or 0 */
	switch (b >> 6) {
	case 0: io->len = io->buf_off < bsize ? (w * 97u + (b & 0x3f)) % (bsize - io->buf_off + 1) : 0; break;
	case 1: io->len = io->buf_off < bsize ? bsize - io->buf_off : 0; break;
	case 2: io->len = (uint64_t)w * 64 + (b & 0x3f); break;
	default: io->len = 0; break;
	}
	/* the flags: a forced path (a value past the last one too), no fallback, an unknown bit */
	if (c & 0x10)
		io->flags |= DMAIO_RW_PATH(c & 0x08 ? DMAIO_PATH_COUNT + (c & 7u) : c & 7u);
	if (c & 0x20)
		io->flags |= DMAIO_RW_NO_FALLBACK;
	if ((c & 0xc0) == 0xc0)
		io->flags |= 1u << (17 + (w & 7));
	if ((c & 0xc0) == 0x80)
		io->pad0 = w | 1;
	/* wild: raw 64-bit values (overflows, INT64_MAX edges) */
	if ((b & 0x3c) == 0x3c) {
		switch (w & 3) {
		case 0: io->file_off = fz_u64(in); break;
		case 1: io->buf_off = fz_u64(in); break;
		case 2: io->len = fz_u64(in); break;
		default: io->file_off = (uint64_t)INT64_MAX - (w >> 2); break;
		}
	}
	/* a write stays below FILE_ROOM (the file is read back whole): far ones move no byte */
	if (io->op == DMAIO_OP_WRITE && io->file_off <= (uint64_t)INT64_MAX &&
	    io->len <= (uint64_t)INT64_MAX - io->file_off && io->file_off + io->len > FILE_ROOM / 2 + 65536)
		io->len = 0;
	io->user_data = ++g.seq;
}

/* One completion: of an accepted range not completed before, within its length, a failure only
 * where one is allowed. */
static void record(struct range *rs, int n, const struct dmaio_done *d)
{
	struct range *r = NULL;

	for (int i = 0; i < n; i++)
		if (rs[i].accepted && rs[i].io.user_data == d->user_data)
			r = &rs[i];
	FUZZ_CHECK(r, "a completion of user_data %llu that no queued range has",
		   (unsigned long long)d->user_data);
	FUZZ_CHECK(!r->seen, "range %llu completed twice", (unsigned long long)d->user_data);
	r->seen = true;
	r->res = d->res;
	r->done = d->done;
	FUZZ_CHECK(d->res <= (int64_t)r->io.len && d->done <= r->io.len,
		   "range of %llu bytes: res %lld done %llu", (unsigned long long)r->io.len,
		   (long long)d->res, (unsigned long long)d->done);
	FUZZ_CHECK(d->res < 0 || d->done == (uint64_t)d->res, "res %lld, done %llu",
		   (long long)d->res, (unsigned long long)d->done);
	FUZZ_CHECK(d->res >= 0 || (d->res == -EOPNOTSUPP && (r->io.flags & DMAIO_RW_NO_FALLBACK)),
		   "range (op %u file %d at %llu buffer %d at %llu len %llu flags 0x%x) failed: "
		   "%lld (%s)", r->io.op, r->fi, (unsigned long long)r->io.file_off, r->bi,
		   (unsigned long long)r->io.buf_off, (unsigned long long)r->io.len, r->io.flags,
		   (long long)d->res, strerror((int)-d->res));
}

/* Reap at least one completion (all of them with @all), waiting up to 20 s for each: a range
 * that never completes fails here. */
static void reap(struct dmaio_queue *q, struct range *rs, int n, int *pending, bool all)
{
	struct {
		struct dmaio_done d;
		uint64_t extra[2];
	} done[8];
	/* the stride: the 1.0 size, or larger (the library zeroes what it does not know) */
	uint32_t stride = (g.seq & 1) ? sizeof(done[0]) : sizeof(struct dmaio_done);

	do {
		int k;

		memset(done, 0xa5, sizeof(done));
		done[0].d.struct_size = stride;
		k = dmaio_queue_reap(q, &done[0].d, (uint32_t)(sizeof(done) / stride), 1, 20000);
		FUZZ_CHECK(k > 0, "reap with %d ranges pending: %d", *pending, k);
		FUZZ_CHECK(k <= *pending, "reaped %d with %d pending", k, *pending);
		for (int j = 0; j < k; j++) {
			const struct dmaio_done *d =
				(const struct dmaio_done *)((const char *)done + (size_t)stride * j);

			FUZZ_CHECK(d->struct_size == stride, "completion %d: struct_size %u", j,
				   d->struct_size);
			if (stride > sizeof(struct dmaio_done))
				for (size_t b = sizeof(*d); b < stride; b++)
					FUZZ_CHECK(((const unsigned char *)d)[b] == 0,
						   "byte %zu past the library's dmaio_done not zeroed", b);
			record(rs, n, d);
			(*pending)--;
		}
	} while (all && *pending > 0);
}

static void run_batch(struct fz *in, struct dmaio_queue *q)
{
	uint8_t hdr = fz_u8(in), shape = fz_u8(in);
	int n = 1 + hdr % MAX_BATCH;
	struct range rs[MAX_BATCH];
	struct dmaio_progress p0 = { .struct_size = sizeof(p0) }, p1 = { .struct_size = sizeof(p1) };
	uint64_t size0[NFILES];
	uint32_t stride = DMAIO_SIZE_IO;
	unsigned char *arr;
	int dirty = -1, odd = -1, pending = 0;
	bool valid = true;
	uint32_t sent = 0;

	for (int i = 0; i < n; i++)
		make_range(in, &rs[i]);
	/* the layout: the 1.0 size, wider (its tail zero, or one element's not), one element of
	 * another size, or below the 1.0 size */
	switch (shape & 7) {
	case 1: stride = DMAIO_SIZE_IO + 8; break;
	case 2: stride = DMAIO_SIZE_IO + 8, dirty = (shape >> 3) % n; break;
	case 3: odd = n > 1 ? 1 + (shape >> 3) % (n - 1) : -1; break; /* not the first: its size is the stride */
	case 4: stride = DMAIO_SIZE_IO - 8 * (1 + (shape >> 3) % 4); break;
	default: break;
	}
	arr = calloc((size_t)n, stride); /* the caller's memory ends there: ASan sees any read past */
	if (!arr)
		FUZZ_DIE("out of memory");
	for (int i = 0; i < n; i++) {
		struct dmaio_io *e = (struct dmaio_io *)(arr + (size_t)stride * i);

		memcpy(e, &rs[i].io, stride < DMAIO_SIZE_IO ? stride : DMAIO_SIZE_IO);
		e->struct_size = i == odd ? stride + 8 : stride; /* one element of another size */
		rs[i].io.struct_size = e->struct_size;
		if (i == dirty)
			arr[(size_t)stride * i + DMAIO_SIZE_IO + (shape >> 6)] = 0x5a;
	}
	for (int i = 0; i < n; i++) {
		classify(&rs[i], stride, i == dirty);
		if (stride < DMAIO_SIZE_IO) /* the library reads only the 1.0 fields it has */
			rs[i].nerr = 0, add_err(&rs[i], -EINVAL);
		if (rs[i].nerr)
			valid = false;
	}

	for (int i = 0; i < NFILES; i++)
		size0[i] = file_read(i, g.fsnap[i]);
	for (int i = 0; i < NBUFS; i++)
		memcpy(g.bsnap[i], g.map[i], buf_size[i]);
	FUZZ_CHECK(dmaio_queue_get_progress(q, &p0) == 0, "progress");

	while (sent < (uint32_t)n) {
		int r = dmaio_queue_submit(q, (const struct dmaio_io *)(arr + (size_t)stride * sent),
					   (uint32_t)n - sent);

		if (r == -EAGAIN && valid) {
			/* full: make room, then the rest (the queue was empty before the batch) */
			FUZZ_CHECK(pending > 0, "an empty queue full (submit -EAGAIN)");
			reap(q, rs, n, &pending, false);
			continue;
		}
		if (r < 0) {
			bool named = false;

			FUZZ_CHECK(sent == 0, "the rest of an accepted batch refused: %d", r);
			FUZZ_CHECK(!valid, "a valid batch of %d ranges refused: %d (%s)", n, r,
				   strerror(-r));
			for (int i = 0; i < n; i++)
				for (int e = 0; e < rs[i].nerr; e++)
					named |= rs[i].errs[e] == r;
			FUZZ_CHECK(named, "refused with %d (%s), which no invalid range of the batch "
				   "gives", r, strerror(-r));
			break;
		}
		FUZZ_CHECK(valid, "a batch with an invalid range accepted (%d of %d)", r, n);
		FUZZ_CHECK(r > 0 && (uint32_t)r <= n - sent, "submit of %u ranges queued %d",
			   n - sent, r);
		for (int i = 0; i < r; i++)
			rs[sent + i].accepted = true;
		sent += (uint32_t)r;
		pending += r;
	}
	if (pending > 0)
		reap(q, rs, n, &pending, true);
	if (g.verbose) { /* what an input does, for a person replaying it */
		fprintf(stderr, "batch of %d (stride %u): %s, %u queued:", n, stride,
			valid ? "valid" : "invalid", sent);
		for (int i = 0; i < n; i++)
			fprintf(stderr, " [%s f%d b%d %llu %llu +%llu 0x%x: %lld%s]",
				rs[i].io.op == DMAIO_OP_READ ? "R" : rs[i].io.op == DMAIO_OP_WRITE ? "W" : "?",
				rs[i].fi, rs[i].bi, (unsigned long long)rs[i].io.file_off,
				(unsigned long long)rs[i].io.buf_off, (unsigned long long)rs[i].io.len,
				rs[i].io.flags, rs[i].seen ? (long long)rs[i].res : 0LL,
				rs[i].nerr ? " invalid" : "");
		fputc('\n', stderr);
	}
	for (int i = 0; i < n; i++)
		FUZZ_CHECK(!rs[i].accepted || rs[i].seen, "range %d never completed", i);

	FUZZ_CHECK(dmaio_queue_get_progress(q, &p1) == 0, "progress");
	FUZZ_CHECK(p1.submitted - p0.submitted == sent && p1.reaped - p0.reaped == sent &&
			   p1.completed - p0.completed == sent,
		   "progress: %llu submitted, %llu completed, %llu reaped, %u expected",
		   (unsigned long long)(p1.submitted - p0.submitted),
		   (unsigned long long)(p1.completed - p0.completed),
		   (unsigned long long)(p1.reaped - p0.reaped), sent);
	{
		struct dmaio_done d = { .struct_size = sizeof(d) };
		int k = dmaio_queue_reap(q, &d, 1, 0, 0);

		FUZZ_CHECK(k == 0, "reap after every range was reaped: %d", k);
		k = dmaio_queue_reap(q, &d, 1, 1, 0);
		FUZZ_CHECK(k == -ENODATA, "reap (min 1) of an empty queue: %d", k);
	}
	mark_certain(rs, n);
	check_data(rs, n, size0);
	free(arr);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz in = { data, size };
	uint8_t h;
	struct dmaio_queue *q;

	if (!g.ctx)
		setup();
	h = fz_u8(&in);
	q = g.q[h % NQUEUES];
	reset(fz_u8(&in));
	for (int b = 0; b < MAX_BATCHES && in.n > 0; b++)
		run_batch(&in, q);
	/* the argument checks of the calls around the batches */
	FUZZ_CHECK(dmaio_queue_submit(NULL, NULL, 0) == -EINVAL, "submit to no queue");
	FUZZ_CHECK(dmaio_queue_submit(q, NULL, 1) == -EINVAL, "submit of NULL ranges");
	FUZZ_CHECK(dmaio_queue_submit(q, NULL, 0) == 0, "submit of no range");
	return 0;
}
