/* SPDX-License-Identifier: MIT */
/* The cost model of the path choice: a path's shape of a request priced with the machine's
 * costs, corrected by what finished requests of the same kind measured. See cost.h. */
#include <math.h>

#include "cost.h"
#include "../paths/path.h"
#include "../sys/sys.h"

/* Measured costs and the priors derived from them. The storage is assumed twice as slow per
 * byte as a memory copy until requests say otherwise (the learned ratio of each path carries
 * the storage's real cost: every path that moves bytes through it is measured against this).
 * A worker hand-off is a futex wake, two context switches and the call's own entry: about
 * twenty syscalls' worth; an io_uring op a few. A table walk visits one entry per 4 KiB page,
 * a few memory reads: 1/256 of a syscall (1 ns at 250 ns a syscall; RW_FILE on our 6.12 test
 * kernel measured 3.5 ns a page under TCG, whose syscalls cost several microseconds). */
void dmaio_cost_params_measured(double copy_ns, double sys_ns, struct dmaio_cost_params *p)
{
	p->sys_ns = sys_ns;
	p->op_ns = 4 * sys_ns;
	p->call_ns = 20 * sys_ns;
	p->copy_ns = copy_ns;
	p->dev_ns = 2 * copy_ns;
	p->walk_ns = sys_ns / 4096 / 256;      /* an entry per 4 KiB page: a few memory reads */
	p->map_dmabuf_ns = 2 * sys_ns / 4096;  /* a page entered at mmap: two syscalls' worth */
	p->map_memfd_ns = sys_ns / 4096 / 64;  /* entered on first touch: counted in copies */
	p->reg_ns = sys_ns / 4096 / 256;       /* the device's table: an entry per page, as a walk */
}

/* Fixed: 250 ns a syscall, 10 GB/s copies (tests; DMAIO_COST=fixed). */
void dmaio_cost_params_fixed(struct dmaio_cost_params *p)
{
	dmaio_cost_params_measured(0.1, 250, p);
}

int dmaio_cost_mode(const struct dmaio_req *r, int cached_pct)
{
	return r->write ? 2 : cached_pct >= 90 ? 1 : 0;
}

#define MODE_SETUP 3

static unsigned log_bucket(uint64_t n, const uint64_t *limits, unsigned count)
{
	unsigned i = 0;

	while (i < count && n > limits[i])
		i++;
	return i;
}

/* provider class: the buffer kind, a heap by its place in the heap list */
static unsigned prov_class(const struct dmaio_req *r)
{
	const struct dmaio_buf *b = r->buf;

	if (b->kind == DMAIO_BUF_HEAP && b->heap && r->ctx->heaps)
		return 8 + (unsigned)((b->heap - r->ctx->heaps) & 7);
	return (unsigned)b->kind & 7;
}

static unsigned buf_bucket(const struct dmaio_buf *b)
{
	static const uint64_t lim[] = { 32ull << 20, 256ull << 20, 2ull << 30 };

	return log_bucket(b->alloc_size, lim, 3);
}

/* Buffer and file offsets that differ modulo the page size: memory that moves straight to or
 * from the file (O_DIRECT into the buffer's pages) is not page-aligned where the file is, and
 * every block of it spans two pages. What that costs is the device's and its driver's: on our
 * host (virtio-blk) a 3 MiB O_DIRECT write from memory 512 or 2048 bytes past a page boundary
 * took 44-46 ms against 2.1-2.3 ms page-aligned, reads 1.1-1.4x (bench/dmaio-bench-dio-align);
 * 1080p NV12 frames (3110400 bytes) written one
 * after another from buffers at offset 0 are so 7 times in 8. Such requests are a kind of
 * their own, learned apart. */
static bool sub_page(const struct dmaio_req *r)
{
	return ((r->buf_off - r->file_off) & ((uint64_t)dmaio_page_size() - 1)) != 0;
}

/* A write to a file opened O_SYNC / O_DSYNC completes once durable, on every path (every
 * descriptor the library opens for the file carries the flag): its time is the storage's even
 * through the page cache. A kind of its own. */
#define KEY_DURABLE (1u << 6)
#define KEY_SKEW (1u << 7)
/* A kind of writes' share of the syncs through the library that made them durable
 * (dmaio_cost_learn_sync()), per the writes' model */
#define KEY_SYNCED (1u << 5)
/* A kind's CPU ratio, for a path whose work runs in blocking calls on the worker threads (the
 * kernel's in RW_FILE, splice): their threads' CPU time in the calls, measured, over what the
 * model says the CPU spends (dmaio_cost_learn_cpu()). The model sees the calls' entry and
 * RW_FILE's table walk, not the kernel's own work in them: a 1080p frame written from a
 * system-heap buffer through RW_FILE on 6.12 cost 12-14.5 ms of CPU where bounce-direct, its
 * copy priced, cost 8-11 (bench/RESULTS.md, session 32), and a queue with time to spare took
 * RW_FILE for every frame as the path that spends the least. */
#define KEY_CPU (1u << 4)
#define KEY_RANGE_SHIFT 14
#define KEY_RANGE_MASK (7u << KEY_RANGE_SHIFT)
#define KEY_RANGE_MAX 4u /* the last bucket of make_key's range limits */

static bool durable(const struct dmaio_req *r)
{
	return r->write && r->file->sync_flags;
}

/* A write whose completion comes before the storage sees its bytes: through the page cache
 * (buffered, sendfile) to a file without O_SYNC / O_DSYNC; writeback comes later, in the
 * kernel's flusher threads or the caller's own fsync(). */
static bool unseen_id(int id)
{
	return id == DMAIO_PATH_BUFFERED || id == DMAIO_PATH_SENDFILE;
}

bool dmaio_cost_write_unseen(const struct dmaio_req *r, int path)
{
	return r->write && !durable(r) && unseen_id(path);
}

/* One key per path, mode, provider, range size, buffer size, file system, page congruence and
 * durability. */
static uint32_t make_key(const struct dmaio_req *r, int path, int mode, uint64_t len)
{
	static const uint64_t lim[] = { 8 << 10, 128 << 10, 2 << 20, 32 << 20 };
	uint32_t fs = (r->file->fs_magic * 2654435761u) >> 29, skew = 0;

	if (r->file->is_blk)
		fs |= 8;
	if (mode == MODE_SETUP) /* a buffer's mapping: the same whatever the file */
		fs = 0;
	else
		skew = sub_page(r);
	return 1u << 31 | (uint32_t)path << 24 | (uint32_t)mode << 22 | prov_class(r) << 18 |
	       log_bucket(len, lim, KEY_RANGE_MAX) << KEY_RANGE_SHIFT | buf_bucket(r->buf) << 12 |
	       fs << 8 | (skew ? KEY_SKEW : 0) |
	       (mode != MODE_SETUP && durable(r) ? KEY_DURABLE : 0);
}

/* The engine's bounce memory: a key of its own (no path, the setup mode, a range bucket no
 * range has), one per area kind */
#define KEY_AREA(kcopy) \
	(1u << 31 | (uint32_t)MODE_SETUP << 22 | KEY_RANGE_MASK | (kcopy ? 1u << 12 : 0))

static struct dmaio_cost_cell *cell_find(struct dmaio_cost *c, uint32_t key, bool claim)
{
	unsigned h = (key * 2654435761u) >> 23; /* 9 bits: DMAIO_COST_CELLS */

	for (unsigned i = 0; i < 16; i++) {
		struct dmaio_cost_cell *cell = &c->cells[(h + i) % DMAIO_COST_CELLS];
		uint32_t k = __atomic_load_n(&cell->key, __ATOMIC_ACQUIRE), zero = 0;

		if (k == key)
			return cell;
		if (k)
			continue;
		if (!claim)
			return NULL;
		if (__atomic_compare_exchange_n(&cell->key, &zero, key, false, __ATOMIC_ACQ_REL,
						__ATOMIC_ACQUIRE) || zero == key)
			return cell;
	}
	return NULL; /* full around here: not learned */
}

static void cell_get(const struct dmaio_cost *c, uint32_t key, uint32_t *samples, float *lr)
{
	const struct dmaio_cost_cell *cell = cell_find((struct dmaio_cost *)c, key, false);
	uint64_t v = cell ? __atomic_load_n(&cell->val, __ATOMIC_RELAXED) : 0;
	uint32_t bits = (uint32_t)v;

	*samples = (uint32_t)(v >> 32);
	memcpy(lr, &bits, sizeof(*lr));
	if (!*samples)
		*lr = 0;
}

#define KEY_PATH_SHIFT 24
#define KEY_PATH_MASK (0x7fu << KEY_PATH_SHIFT)
_Static_assert(DMAIO_COST_KEY_PATH(KEY_PATH_MASK) == 0x7fu, "a cost key's path");
#define KEY_MODE(k) (((k) >> 22) & 3u)

/* What a path not measured yet in a kind starts from: the least log2 ratio the other paths of
 * the kind learned. They met the same storage and the same buffer, which the prior knows only
 * from a best-case copy (the storage "twice as slow": 55 GB/s on our host, where it reads at
 * 4.4); left at 1 while its siblings learned 5-12x, every path not yet measured looked the
 * cheapest and was taken in turn, and a 4 GiB model load spread over four paths. The least:
 * a path that may be better is still tried. A page-cache write's ratio (its completion comes
 * before the storage works) teaches its siblings nothing. Of the siblings measured at least
 * SIBLING_SURE times when there are any: one sample can be a mix's share. A model load's
 * explored `bounce-direct` (a burst of three 16 MiB reads, waiting for bounce memory among
 * `udmabuf-direct` ones) learned 11.96x from its single sum where `udmabuf-direct`, measured
 * 14 times, stood at 19.48x; `buffered`, never measured, was priced from the 11.96x below
 * `udmabuf-direct`, became the pick of the unaligned tensors' kind and read 87.9% of the
 * model cold, at 0.14-0.20x of the baseline (bench/RESULTS.md, session 31). */
#define SIBLING_SURE 3u
static bool sibling_lr(const struct dmaio_cost *c, uint32_t key, float *out)
{
	uint32_t have = 0; /* the samples behind *out, 0: none */

	for (uint32_t id = 1; id < DMAIO_PATH_COUNT; id++) {
		uint32_t n, k = (key & ~KEY_PATH_MASK) | id << KEY_PATH_SHIFT;
		float lr;

		if (k == key || (KEY_MODE(key) == 2 && !(key & KEY_DURABLE) && unseen_id((int)id)))
			continue;
		cell_get(c, k, &n, &lr);
		if (!n || (have >= SIBLING_SURE && n < SIBLING_SURE))
			continue;
		if (!have || (n >= SIBLING_SURE && have < SIBLING_SURE) || lr < *out) {
			*out = lr;
			have = n;
		}
	}
	return have != 0;
}

/* Fold one measured log2 ratio in: the mean of the first 8, then a moving average of 1/8
 * weight (a machine's costs drift: other load, the page cache, a kernel's own caches; the
 * pick's samples of a page-cache write weigh their time instead, PC_TAU_NS below). The
 * mean is of the ratios themselves, not of their logarithms: an estimate is of a time, and
 * times add. A queue's burst of 16 reads of 1 MiB is learned as two sums of 8; the first 8 to
 * finish were charged a sixteenth of the time each while all were in flight, the last ones
 * more, and on our host udmabuf-direct's sums measured 5x and 25x in turn, bounce-direct's 8x
 * and 11x. Their logarithms' mean (11x against 9.6x: a geometric mean is below the arithmetic
 * one by more the more its samples spread) ranked udmabuf-direct the faster, when a pass took
 * it 1.3x as long (15x against 9.7x), and auto stayed at 0.68x of bounce-direct. The
 * first sample of a kind (no path of it measured yet) is taken whole: it calibrates the
 * storage against a prior that knows only a best-case copy (clamped, a 16 MiB range read alone
 * learned 2x where the truth was 12x, and its siblings started from that). Every other sample
 * moves the ratio at most 2x either way, a path's first from its siblings' ratio: a request that met a
 * one-time cost (a page-cache miss the residency did not show, another process's burst) must
 * not rule a path out, since a path not chosen is never measured again. Once a path has 8
 * samples, one counts at most 2x its ratio (cell_add: a device's stall). */
/* cur moved toward obs by 1/w of the way, at most 2x either way */
static double mean_step(double cur, double obs, double w)
{
	return fmin(fmax(cur + (obs - cur) / w, cur / 2), cur * 2);
}

/* A burst's sum (dmaio_cost_learn_burst()) more than 2x below a settled ratio moves it half of
 * the way a sample, not an eighth: see there */
#define BURST_DROP_W 2u

/* How a sample is learned: a sum of the pick's requests, an exploration's sum (a burst shorter
 * than LEARN_BATCH, a request alone), or an exploration's burst of LEARN_BATCH or more */
enum learn_how { LEARN_PICK, LEARN_EXPLORED, LEARN_BURST };

/* A page-cache write's time is the state of the file's dirty pages more than its own work: how
 * many are dirty, and whether writeback is under way behind it (the kernel's flusher, the
 * dirty-page throttling). That state moves over seconds, and a sync through the library resets
 * it; eight samples of 8 requests are a few hundred microseconds of 4 KiB writes. Our 6.12 VM's
 * 4 KiB writes into a 512 MiB udmabuf buffer, forced `buffered` for a pass of 4.9 s, came out of
 * it priced at 3.44x (the pass before: 1.63x), where the pass as a whole took what the others
 * did: the writeback had run during its last part (its sync took 270 ms, the others' 830), and
 * the last 64 requests were the ratio. The next pass began on `udmabuf-direct` (77.8 us a write
 * against 78.5: 1.8x slower forced), and with four pairs a cell the same cell went 0.52x of
 * `buffered` once (bench/RESULTS.md, session 41). So the pick's samples of a settled page-cache
 * write kind count by their time, not their number: a sample weighs its measured time over
 * PC_TAU_NS (never more than a sample of any other kind, 1/8), and the ratio is what the kind's
 * last second or so of requests measured. An exploration's samples count as any path's: they
 * are few, and they are how a kind priced out of the pick comes back. */
#define PC_TAU_NS 1e9
#define PC_W_MAX 65536.0

/* key is of writes through the page cache that complete before the storage sees them */
static bool unseen_key(uint32_t key)
{
	return KEY_MODE(key) == 2 && !(key & (KEY_DURABLE | KEY_SYNCED | KEY_CPU)) &&
	       unseen_id((int)DMAIO_COST_KEY_PATH(key));
}

/* span_ns: the sample's measured time (LEARN_PICK: a sum of the pick's requests) */
static void cell_add_w(struct dmaio_cost *c, uint32_t key, float obs, enum learn_how how,
		       double span_ns)
{
	struct dmaio_cost_cell *cell = cell_find(c, key, true);
	uint64_t old, nv;
	float from = 0;
	/* a mapping's cost (path 0) keeps the cap; bounce memory's is timed alone, whole; and a
	 * kind's first sync, whole: another path's says nothing of it (a direct write's sync
	 * flushes the device's cache, a page-cache write's writes its bytes back: on our host
	 * 0.01x against 6.5x; started from the direct writes' and moved 2x a sample, the page
	 * cache's 512 MiB of 1 MiB writes were priced without their writeback and went 0.28x) */
	bool first_of_kind = key == KEY_AREA(false) || key == KEY_AREA(true) ||
			     (key & (KEY_SYNCED | KEY_CPU));
	/* A settled path's sample counts at most 2x its ratio (+12.5% a sample). The device's
	 * stalls (a journal commit, the host's writeback, a cache flush) hold every op in flight
	 * at once: the 32 requests of a queue finish together, and their 4 sums of 8 each
	 * measured 40-115x where the path's others measured 2-3x. Each moved the ratio 2x, so
	 * one stall of a few milliseconds priced a path 16x dearer; in a write pass only the
	 * direct paths meet them (a page-cache write's come in its sync, learned apart), and
	 * our host's 4 KiB writes of a 512 MiB file from a memfd buffer, auto alone in its
	 * process, went `buffered` and `bounce-direct` at 0.75-0.83x of `udmabuf-direct` forced
	 * in 5 of 6 runs (bench/RESULTS.md, session 30). A rise that lasts still comes through:
	 * 2x in 6 samples, 10x in 20 (160 requests). Syncs and mappings are learned whole, and
	 * so is a CPU ratio's first sample (a thread's own CPU time: no device stalls in it). */
	bool winsor = (KEY_PATH_MASK & key) && !(key & (KEY_SYNCED | KEY_CPU));
	bool burst = how == LEARN_BURST;
	/* a settled kind's weight: 1/8 a sample, or a page-cache write's by its time (above) */
	double settled_w = how == LEARN_PICK && span_ns > 0 && unseen_key(key)
				   ? fmax(8, fmin(PC_W_MAX, PC_TAU_NS / span_ns))
				   : 8;

	if (!cell)
		return;
	if ((KEY_PATH_MASK & key) && !(key & (KEY_SYNCED | KEY_CPU)))
		first_of_kind = !sibling_lr(c, key, &from);
	old = __atomic_load_n(&cell->val, __ATOMIC_RELAXED);
	do {
		uint32_t n = (uint32_t)(old >> 32), bits = (uint32_t)old;
		float lr;

		memcpy(&lr, &bits, sizeof(lr));
		if (!n)
			lr = from;
		if (!n && first_of_kind)
			lr = obs;
		else if (n + 1 >= 8 && winsor && burst && obs < lr - 1)
			lr = (float)log2(mean_step(exp2(lr), exp2(obs), BURST_DROP_W));
		else
			lr = (float)log2(mean_step(exp2(lr),
						   exp2(n + 1 >= 8 && winsor ? fminf(obs, lr + 1) : obs),
						   n + 1 < 8 ? n + 1 : settled_w));
		memcpy(&bits, &lr, sizeof(bits));
		nv = (uint64_t)(n < UINT32_MAX ? n + 1 : n) << 32 | bits;
	} while (!__atomic_compare_exchange_n(&cell->val, &old, nv, true, __ATOMIC_RELAXED,
					      __ATOMIC_RELAXED));
	__atomic_store_n(&cell->last, __atomic_load_n(&c->explore_tick, __ATOMIC_RELAXED),
			 __ATOMIC_RELAXED);
	__atomic_add_fetch(&c->gen, 1, __ATOMIC_RELEASE); /* estimates made before are stale */
}

static void cell_add(struct dmaio_cost *c, uint32_t key, float obs)
{
	cell_add_w(c, key, obs, LEARN_EXPLORED, 0);
}

/* Automatic choices made since key's ratio last learned a sample (UINT32_MAX: none). */
static uint32_t cell_age(const struct dmaio_cost *c, uint32_t key)
{
	const struct dmaio_cost_cell *cell = cell_find((struct dmaio_cost *)c, key, false);
	uint32_t now = __atomic_load_n(&c->explore_tick, __ATOMIC_RELAXED);

	return cell ? now - __atomic_load_n(&cell->last, __ATOMIC_RELAXED) : UINT32_MAX;
}

uint32_t dmaio_cost_age(const struct dmaio_ctx *c, uint32_t key)
{
	return cell_age(&c->cost, key);
}

uint64_t dmaio_cost_gen(const struct dmaio_ctx *c)
{
	return __atomic_load_n(&c->cost.gen, __ATOMIC_ACQUIRE);
}

/* A kind's exploration budget: a cell of its own (the kind's key without a path; no path's
 * ratio is kept under path 0 outside the setup mode), its two credits in nanoseconds as two
 * floats: time (the high half), CPU (the low half). */
bool dmaio_cost_explore_credit(struct dmaio_ctx *c, uint32_t key, const double earn_ns[2],
			       const double cap_ns[2], const double spend_ns[2], bool overdraw)
{
	struct dmaio_cost_cell *cell = cell_find(&c->cost, key & ~KEY_PATH_MASK, true);
	uint64_t old, nv;
	bool granted;

	if (!cell)
		return false; /* full around here: nothing explored rather than unbounded */
	old = __atomic_load_n(&cell->val, __ATOMIC_RELAXED);
	do {
		uint32_t bits[2] = { (uint32_t)(old >> 32), (uint32_t)old };
		float credit[2];

		granted = true;
		for (int i = 0; i < 2; i++) {
			memcpy(&credit[i], &bits[i], sizeof(credit[i]));
			credit[i] = (float)fmin((double)credit[i] + earn_ns[i],
						fmax(cap_ns[i], (double)credit[i]));
			granted &= spend_ns[i] >= 0 &&
				   (overdraw ? credit[i] >= 0 : spend_ns[i] <= credit[i]);
		}
		for (int i = 0; i < 2; i++) {
			if (granted)
				credit[i] -= (float)spend_ns[i];
			memcpy(&bits[i], &credit[i], sizeof(bits[i]));
		}
		nv = (uint64_t)bits[0] << 32 | bits[1];
	} while (!__atomic_compare_exchange_n(&cell->val, &old, nv, true, __ATOMIC_RELAXED,
					      __ATOMIC_RELAXED));
	return granted;
}

void dmaio_cost_explore_settle(struct dmaio_ctx *c, uint32_t key, double service_ns,
			       double pick_ns, double granted_ns)
{
	double over = service_ns - pick_ns - granted_ns;
	struct dmaio_cost_cell *cell;
	uint64_t old, nv;

	if (c->cost.fixed || !key || !(over > 0))
		return;
	cell = cell_find(&c->cost, key & ~KEY_PATH_MASK, false);
	if (!cell)
		return;
	old = __atomic_load_n(&cell->val, __ATOMIC_RELAXED);
	do {
		uint32_t bits = (uint32_t)(old >> 32);
		float credit;

		memcpy(&credit, &bits, sizeof(credit));
		credit = (float)((double)credit - over);
		memcpy(&bits, &credit, sizeof(bits));
		nv = (uint64_t)bits << 32 | (uint32_t)old;
	} while (!__atomic_compare_exchange_n(&cell->val, &old, nv, true, __ATOMIC_RELAXED,
					      __ATOMIC_RELAXED));
}

static double map_per_byte(const struct dmaio_req *r)
{
	const struct dmaio_cost_params *p = &r->ctx->cost.p;
	double prior = r->buf->memfd >= 0 ? p->map_memfd_ns : p->map_dmabuf_ns;
	uint32_t n;
	float lr;

	if (r->ctx->cost.fixed)
		return prior;
	cell_get(&r->ctx->cost, make_key(r, 0, MODE_SETUP, 0), &n, &lr);
	return n ? prior * exp2(lr) : prior;
}

/* Bounce memory made: zeroed and faulted in (a write pass and a page entry per page), pinned
 * as a registration; the prior is that, at the measured copy speed. What it took is learned
 * (dmaio_cost_learn_area): on our VM host 16 MiB took 44 ms one day (the host's own first
 * touch of the memory: 26x the prior) and 1-2 ms another. */
static double area_prior(const struct dmaio_cost_params *p)
{
	return p->copy_ns + p->map_memfd_ns + p->reg_ns;
}

static double area_per_byte(const struct dmaio_req *r)
{
	double prior = area_prior(&r->ctx->cost.p);
	uint32_t n;
	float lr;

	if (r->ctx->cost.fixed)
		return prior;
	cell_get(&r->ctx->cost, KEY_AREA(r->buf->revocable), &n, &lr);
	return n ? prior * exp2(lr) : prior;
}

void dmaio_cost_learn_area(struct dmaio_ctx *c, bool kcopy, uint64_t ns, uint64_t bytes)
{
	double prior = area_prior(&c->cost.p);

	if (c->cost.fixed || !bytes || prior <= 0)
		return;
	cell_add(&c->cost, KEY_AREA(kcopy),
		 (float)log2(fmin(fmax((double)ns / (double)bytes / prior, 1.0 / 64), 1024)));
}

/* The least log2 ratio the direct writes (udmabuf-direct, bounce-direct) learned in the kind
 * of key, with its range bucket replaced by rb and, when aligned, its page skew cleared */
static bool direct_write_lr(const struct dmaio_cost *c, uint32_t key, unsigned rb, bool aligned,
			    float *out)
{
	static const int direct[] = { DMAIO_PATH_UDMABUF_DIRECT, DMAIO_PATH_BOUNCE_DIRECT };
	bool have = false;

	key = (key & ~(KEY_PATH_MASK | KEY_RANGE_MASK)) | rb << KEY_RANGE_SHIFT;
	if (aligned)
		key &= ~KEY_SKEW;
	for (unsigned i = 0; i < 2; i++) {
		uint32_t n, k = key | (uint32_t)direct[i] << KEY_PATH_SHIFT;
		float lr;

		cell_get(c, k, &n, &lr);
		if (n && (!have || lr < *out)) {
			*out = lr;
			have = true;
		}
	}
	return have;
}

/* What the storage's side of a page-cache write costs, as a log2 ratio to the write's model.
 * Writeback moves the dirty pages of a file in file order, from page-aligned memory, and the
 * block layer merges the contiguous ones into large writes, whatever the ranges the caller
 * wrote them in: 4 KiB ranges in random order, written whole and then fdatasync()ed, reached
 * 110-154 MB/s through `buffered` in the VM against 37-68 for every direct path, which moves
 * each range as a write of its own (bench/RESULTS.md, C22). So the storage's cost per byte is
 * that of the largest direct writes learned in the same kind (provider, buffer size, file
 * system; page-aligned), down to the write's own range size; when none is learned, the
 * direct writes of its own range and skew. The price assumes the writes meet their
 * neighbours in the page cache: scattered writes to a large file are written back as small
 * writes, though many at once.
 *
 * A write smaller than 128 KiB (range buckets 0 and 1) with only direct writes of its own
 * size learned is the exception: what those measure is mostly their op (a syscall or an
 * io_uring op, its latency, one per range), which writeback, merged, does not pay. Their
 * ratio prices its storage bytes alone (`storage`: their share of its model; not its op, nor
 * its copy, which its own ratio prices). Priced whole, our 7.3 VM's 4 KiB writes made durable
 * by the application's own fdatasync() (nothing synced through the library, nothing larger
 * written) went `bounce-direct` (88-103 us a write) where `buffered` forced took 42-53, and
 * the bench's 4 KiB write cells with --choice-own-sync went 0.18-0.61x of `buffered`; with
 * its storage bytes priced as modelled (no ratio), they went the same way (0.26-0.47x) in a
 * boot whose probe priced a copy 10x dearer: the ratio carries the scale (bench/RESULTS.md,
 * session 37). The choice errs the other way when small writes are scattered over a large
 * file (their writeback as small as they are): a page-cache write then costs about a direct
 * one and its copy, where the direct path chosen wrongly cost 2-5x. The log ratio to the
 * write's whole model, in *out. */
#define WB_MERGED 2u /* the first range bucket whose own direct writes price it whole */

static bool writeback_lr(const struct dmaio_cost *c, uint32_t key, double storage, float *out)
{
	unsigned own = (key & KEY_RANGE_MASK) >> KEY_RANGE_SHIFT;

	for (unsigned rb = KEY_RANGE_MAX + 1; rb-- > own + 1;)
		if (direct_write_lr(c, key, rb, true, out))
			return true;
	if (!direct_write_lr(c, key, own, true, out) && !direct_write_lr(c, key, own, false, out))
		return false;
	if (own < WB_MERGED)
		*out = (float)log2(fmax(exp2(*out) * storage, 1.0 / 64));
	return true;
}

void dmaio_cost_estimate(const struct dmaio_req *r, const struct dmaio_path_ops *path, int mode,
			 const struct dmaio_cost_shape *sh, struct dmaio_cost_est *e)
{
	const struct dmaio_cost_params *p = &r->ctx->cost.p;
	uint64_t ov = MIN(sh->overlap, MIN(sh->dev, sh->copy));
	float lr = 0;

	e->ops_ns = (double)sh->ops * p->op_ns + (double)sh->calls * p->call_ns;
	/* overlapped bytes: the slower side, and half the other (the copy takes the CPU that
	 * also submits and completes the storage's work) */
	e->bytes_ns = (double)(sh->dev - ov) * p->dev_ns + (double)(sh->copy - ov) * p->copy_ns +
		      (double)ov * (fmax(p->dev_ns, p->copy_ns) + fmin(p->dev_ns, p->copy_ns) / 2);
	e->walk_ns = (double)sh->walk * p->walk_ns;
	/* a mapping made already is paid for; bounce memory not made yet is zeroed and faulted in
	 * once (a write pass and a page entry per page; pinned as a registration) */
	e->setup_ns = (double)sh->reg * p->reg_ns;
	if (sh->area)
		e->setup_ns += (double)sh->area * area_per_byte(r);
	if (!__atomic_load_n(&r->buf->addr, __ATOMIC_RELAXED))
		e->setup_ns += (double)sh->map * map_per_byte(r);
	/* What the CPU spends, for the choice between estimates alike (choose.c): the ops and
	 * calls, the copies, the walks and the setup; and a page the storage moves through the
	 * page cache is allocated, written back or read in and later reclaimed besides its copy,
	 * counted as one more copy (at least: a buffered write cost filesink 1.3 ms of CPU per MB
	 * on our host, whose measured copy takes 0.01 ms a MB; bench/RESULTS.md "GStreamer") */
	e->cpu_ns = e->ops_ns + (double)(sh->copy + sh->pcache) * p->copy_ns + e->walk_ns +
		    e->setup_ns;
	e->key = make_key(r, path->id, mode, r->len - r->start);
	/* a path whose work runs in blocking calls: what their threads' CPU measured (KEY_CPU),
	 * the setup apart (the caller's). The base it is learned against counts the bytes the
	 * calls move as a copy each: the kernel's work goes with them, and a ratio to the calls'
	 * entries and walks alone swung with how a range split (1080p frames through RW_FILE:
	 * modelled at 27.5-46.9 us a frame by their edges, measured at 3.7-4.7 ms, and the mean
	 * of those ratios priced a frame at 18.8 ms; bench/RESULTS.md, session 33). */
	e->call_cpu_ns = sh->calls ? e->cpu_ns - e->setup_ns +
					     (double)(r->len - r->start) * p->copy_ns : 0;
	e->cpu_ratio = 1;
	e->cpu_samples = 0;
	if (sh->calls && !r->ctx->cost.fixed) {
		float clr;

		cell_get(&r->ctx->cost, e->key | KEY_CPU, &e->cpu_samples, &clr);
		if (e->cpu_samples) {
			e->cpu_ratio = exp2(clr);
			e->cpu_ns = e->call_cpu_ns * e->cpu_ratio + e->setup_ns;
		}
	}
	e->samples = 0;
	e->explored = false;
	e->burst = 0;
	e->pick_ns = e->granted_ns = 0;
	e->calls = sh->calls;
	e->ops = sh->ops + sh->calls;
	e->age = UINT32_MAX;
	e->wb_guessed = false;
	if (!r->ctx->cost.fixed) {
		cell_get(&r->ctx->cost, e->key, &e->samples, &lr);
		if (e->samples)
			e->age = cell_age(&r->ctx->cost, e->key);
		/* (a page-cache write not measured yet starts from its writeback's price, below:
		 * its siblings learned what the storage costs them) */
		if (!e->samples && !dmaio_cost_write_unseen(r, path->id))
			sibling_lr(&r->ctx->cost, e->key, &lr);
	}
	/* A write through the page cache completes before the storage sees it (writeback comes
	 * later, in the kernel's flusher threads), so its completions never show the storage's
	 * cost and teach that it is cheap: 31 of 60 4K camera frames went `buffered` that way.
	 * It is priced with the storage cost of its writeback (writeback_lr()) when that is more
	 * than its own. (To a file opened O_SYNC or O_DSYNC it completes once durable: its time
	 * is its cost, learned as any path's.) */
	if (!r->ctx->cost.fixed && r->write && !durable(r)) {
		uint32_t n;
		float wb;
		double model = e->ops_ns + e->bytes_ns + e->walk_ns;

		/* what syncs through the library measured of the kind (a write's own time and its
		 * share of the sync that makes it durable add up); else, for a page-cache write,
		 * the direct writes' storage cost */
		cell_get(&r->ctx->cost, e->key | KEY_SYNCED, &n, &wb);
		if (n) {
			lr = (float)log2(exp2(lr) + exp2(wb));
		} else if (dmaio_cost_write_unseen(r, path->id) &&
			   writeback_lr(&r->ctx->cost, e->key,
					model > 0 ? (double)sh->dev * p->dev_ns / model : 1, &wb) &&
			   wb > lr) {
			lr = wb;
			e->wb_guessed = true;
		}
	}
	e->ratio = exp2(lr);
	e->est_ns = (e->ops_ns + e->bytes_ns + e->walk_ns) * e->ratio + e->setup_ns;
}

void dmaio_cost_learn_setup(struct dmaio_req *r, bool was_mapped, uint64_t ns)
{
	const struct dmaio_cost_params *p = &r->ctx->cost.p;
	double prior = r->buf->memfd >= 0 ? p->map_memfd_ns : p->map_dmabuf_ns;

	r->setup_ns = ns;
	if (r->ctx->cost.fixed || was_mapped || !__atomic_load_n(&r->buf->addr, __ATOMIC_RELAXED) ||
	    !r->buf->alloc_size || prior <= 0)
		return;
	/* this begin made the buffer's mapping: its time per byte against the prior */
	cell_add(&r->ctx->cost, make_key(r, 0, MODE_SETUP, 0),
		 (float)log2(fmax((double)ns / (double)r->buf->alloc_size / prior, 1.0 / 64)));
}

/* key's entry of the file (dev, ino) in c's table, claimed (the table full: the file written
 * longest ago forgotten whole, its sync, if it ever comes, learning nothing rather than
 * charging its time to part of its writes). Under io_lock. */
static struct dmaio_cost_unsynced *unsynced_entry(struct dmaio_cost *c, uint64_t dev,
						  uint64_t ino, uint32_t key, uint32_t tick)
{
	struct dmaio_cost_unsynced *u = NULL, *old = NULL;

	for (size_t i = 0; i < ARRAY_SIZE(c->unsynced) && !u; i++)
		if (c->unsynced[i].key == key && c->unsynced[i].dev == dev &&
		    c->unsynced[i].ino == ino)
			u = &c->unsynced[i];
	for (size_t i = 0; i < ARRAY_SIZE(c->unsynced) && !u; i++) {
		if (!c->unsynced[i].key)
			u = &c->unsynced[i];
		else if (!old || tick - c->unsynced[i].tick > tick - old->tick)
			old = &c->unsynced[i];
	}
	if (!u) {
		uint64_t odev = old->dev, oino = old->ino;

		for (size_t i = 0; i < ARRAY_SIZE(c->unsynced); i++)
			if (c->unsynced[i].dev == odev && c->unsynced[i].ino == oino)
				memset(&c->unsynced[i], 0, sizeof(c->unsynced[i]));
		u = old;
	}
	if (!u->key) {
		u->key = key;
		u->dev = dev;
		u->ino = ino;
	}
	u->tick = tick;
	return u;
}

void dmaio_cost_write_done(struct dmaio_req *r, uint64_t done)
{
	struct dmaio_cost *c = &r->ctx->cost;
	uint32_t tick = __atomic_load_n(&c->explore_tick, __ATOMIC_RELAXED);
	struct dmaio_cost_unsynced *u;

	if (c->fixed || !done || durable(r) || r->res < 0 || !r->cost_key ||
	    r->cost_model_ns <= 0)
		return;
	pthread_mutex_lock(&r->ctx->io_lock);
	u = unsynced_entry(c, r->file->dev, r->file->ino, r->cost_key, tick);
	u->model_ns += r->cost_model_ns;
	u->bytes += done;
	pthread_mutex_unlock(&r->ctx->io_lock);
}

void dmaio_cost_learn_sync(struct dmaio_ctx *ctx, uint64_t dev, uint64_t ino, bool synced,
			   uint64_t sync_ns, int64_t dirty_bytes)
{
	struct dmaio_cost *c = &ctx->cost;
	struct dmaio_cost_unsynced got[ARRAY_SIZE(c->unsynced)];
	double model = 0, w[ARRAY_SIZE(c->unsynced)], wsum = 0, t;
	uint64_t bytes = 0;
	size_t n = 0;

	if (c->fixed)
		return;
	pthread_mutex_lock(&ctx->io_lock);
	for (size_t i = 0; i < ARRAY_SIZE(c->unsynced); i++) {
		struct dmaio_cost_unsynced *u = &c->unsynced[i];

		if (!u->key || u->dev != dev || u->ino != ino)
			continue;
		got[n++] = *u;
		model += u->model_ns;
		bytes += u->bytes;
		memset(u, 0, sizeof(*u));
	}
	pthread_mutex_unlock(&ctx->io_lock);
	if (!synced || !n || model <= 0)
		return; /* a failed sync: its writes forgotten, nothing learned */
	/* The writes' part of the sync: all of it, unless the kernel counts more dirty bytes in
	 * the file than they wrote (another writer): their share of those. */
	t = (double)sync_ns;
	if (dirty_bytes > 0 && (uint64_t)dirty_bytes > bytes)
		t *= (double)bytes / (double)dirty_bytes;
	/* Shared among the kinds by what their syncs took before, per their model (a kind whose
	 * sync is not measured yet at this sync's mean): a page-cache write's sync writes its
	 * bytes back, a direct write's only flushes the device's cache, which our VM's disk does
	 * to its host's file. Both are part of a write's cost: charged to the page-cache writes
	 * alone, the syncs priced our VM's 4 KiB writes into a 16 MiB udmabuf buffer at 80 us
	 * through the page cache against 66 us for bounce-direct, and forced, with their syncs,
	 * those went at 65 and 51 MB/s (bench/RESULTS.md, session 26). */
	for (size_t i = 0; i < n; i++) {
		uint32_t ns;
		float lr;

		cell_get(c, got[i].key | KEY_SYNCED, &ns, &lr);
		w[i] = got[i].model_ns * (ns ? exp2(lr) : fmax(t / model, 1.0 / 64));
		wsum += w[i];
	}
	for (size_t i = 0; i < n; i++) {
		double x = fmin(fmax(t * w[i] / wsum / got[i].model_ns, 1.0 / 64), 1024);

		DBG(ctx, "  sync share: key %08x (path %u), %llu bytes, model %.1f us: %.0f%% of %.1f us, "
		    "x%.2f", got[i].key, DMAIO_COST_KEY_PATH(got[i].key),
		    (unsigned long long)got[i].bytes, got[i].model_ns / 1e3, 100 * w[i] / wsum,
		    t / 1e3, x);
		cell_add(c, got[i].key | KEY_SYNCED, (float)log2(x));
	}
}

/* samples sums of key's kind at service_ns / model_ns (clamped), learned as how says */
static void learn_ratio(struct dmaio_ctx *c, uint32_t key, double service_ns, double model_ns,
			unsigned samples, enum learn_how how)
{
	double ratio;

	if (c->cost.fixed || !key || model_ns <= 0)
		return;
	ratio = fmin(fmax(service_ns / model_ns, 1.0 / 64), 1024);
	for (unsigned i = 0; i < samples; i++)
		cell_add_w(&c->cost, key, (float)log2(ratio), how, service_ns / samples);
}

void dmaio_cost_learn_sum(struct dmaio_ctx *c, uint32_t key, double service_ns, double model_ns)
{
	learn_ratio(c, key, service_ns, model_ns, 1, LEARN_PICK);
}

void dmaio_cost_learn_explored(struct dmaio_ctx *c, uint32_t key, double service_ns,
			       double model_ns)
{
	learn_ratio(c, key, service_ns, model_ns, 1, LEARN_EXPLORED);
}

/* An exploration's burst is a run as deep as the queue, measured as the path runs when it is
 * the pick (choose.c, "in bursts"). Where its sum says the path costs less than half of what
 * it learned before, the ratio moves half of the way a sample (at most 2x, mean_step()): at
 * an eighth, a path taught 8-13x by one bad stretch (our 7.3 VM's 4 KiB buffered writes after
 * the bench's check pass, session 35) came down to 5-8x from a burst of 32 (four samples) at
 * 1.3x, still out of the pick's margin, and the pass went on the slower path until the next
 * exploration, once in 8192 choices; at a half, 1.6-2x, and the path is taken. The other way
 * a burst is learned as any sum: a device stall holds every op in flight, and one burst's
 * must not price a path out (cell_add(): at most +12.5% a sample once settled). */
void dmaio_cost_learn_burst(struct dmaio_ctx *c, uint32_t key, double service_ns, double model_ns,
			    unsigned samples)
{
	learn_ratio(c, key, service_ns, model_ns, samples, LEARN_BURST);
}

void dmaio_cost_learn_cpu(struct dmaio_ctx *c, uint32_t key, double cpu_ns, double model_ns)
{
	if (c->cost.fixed || !key || model_ns <= 0 || cpu_ns <= 0)
		return;
	/* the model of a call is its entry alone, a few microseconds: the kernel's work in it
	 * can be thousands of times that (a 3 MiB RW_FILE write, modelled at 6 us) */
	cell_add(&c->cost, key | KEY_CPU,
		 (float)log2(fmin(fmax(cpu_ns / model_ns, 1.0 / 64), 1 << 20)));
}

void dmaio_cost_learn(struct dmaio_req *r, uint64_t service_ns)
{
	dmaio_cost_learn_sum(r->ctx, r->cost_key, (double)service_ns, r->cost_model_ns);
}
