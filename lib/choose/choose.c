/* SPDX-License-Identifier: MIT */
/* Path choice: the path table, and the choice of the path with the lowest estimated cost
 * (cost.c) among those that can serve, from cached facts only (no syscalls). */
#include <math.h>
#include <string.h>

#include "choose.h"
#include "cost.h"
#include "../paths/path.h"
#include "../sys/sys.h"

/* Adding a path: a file in paths/ and a line here. Order breaks ties of estimates. */
static const struct dmaio_path_ops *const path_table[] = {
	&dmaio_path_rw_file,
	&dmaio_path_uring_dmabuf,
	&dmaio_path_udmabuf_direct,
	&dmaio_path_bounce_direct,
	&dmaio_path_buffered,
	&dmaio_path_sendfile,
};

const struct dmaio_path_ops *dmaio_path_by_id(int id)
{
	for (size_t i = 0; i < ARRAY_SIZE(path_table); i++)
		if (path_table[i]->id == id)
			return path_table[i];
	return NULL;
}

/* The one table of path names is the path table's (each path's ops->name), plus "auto". */
const char *dmaio_choose_path_name(uint32_t id)
{
	const struct dmaio_path_ops *p;

	if (id == DMAIO_PATH_AUTO)
		return "auto";
	p = id < DMAIO_PATH_COUNT ? dmaio_path_by_id((int)id) : NULL;
	return p ? p->name : NULL;
}

int dmaio_choose_path_by_name(const char *name)
{
	if (!strcmp(name, "auto"))
		return DMAIO_PATH_AUTO;
	for (size_t i = 0; i < ARRAY_SIZE(path_table); i++)
		if (!strcmp(path_table[i]->name, name))
			return path_table[i]->id;
	return -EINVAL;
}

bool dmaio_choose_may_fall_back(const struct dmaio_req *r, const struct dmaio_path_ops *p)
{
	return !(r->forced == p->id && (r->flags & DMAIO_RW_NO_FALLBACK));
}

/* Can p serve the rest of r, and at what estimated cost: 0 with *e filled, or its refusal. */
static int price(const struct dmaio_req *r, const struct dmaio_path_ops *p, int cached_pct,
		 int mode, struct dmaio_cost_est *e, const char **why)
{
	struct dmaio_cost_shape sh;
	int s = p->serve(r, cached_pct, &sh, why);

	if (!s)
		dmaio_cost_estimate(r, p, mode, &sh, e);
	return s;
}

/* The model's pick among the candidates that can serve (status 0): the lowest estimate, except
 * that among the estimates within CPU_MARGIN of it the one that spends the least CPU wins (ties
 * to the table's order). Two paths bound by the same storage (O_DIRECT from the buffer's pages,
 * or through bounce memory) take the same time, and their learned ratios differ by the noise of
 * a shared device (the same path forced twice differs by 30% on our host): the one without the
 * copy is then the better choice for the machine. -1 when none can serve. */
#define CPU_MARGIN 1.10
/* A queue that was idle most of the time (a frame writer at 60 fps: a 3 MB frame takes 2 ms)
 * does not wait for its requests: it has time to spare and the CPU is what a path costs it.
 * A path that takes m times the lowest estimate makes the queue busy m times as long; if the
 * caller did wait on every request after all, that would cost it (m - 1) x busy of its time, so
 * the margin is m = 1 + SPARE_COST / busy, at most SPARE_MAX: never more than 10% of the
 * caller's time for the CPU. On our host 1080p frames from memfd buffers took 2.6-3.6 ms
 * O_DIRECT from their own pages and 1.6 ms through huge-page bounce memory (which costs the
 * copy: 0.92 against 0.62 ms of CPU per frame); at 60 fps the queue is busy about 15% of the
 * time, a margin of 1.7x, and they mostly go through the bounce memory (bench/RESULTS.md,
 * session 19). */
#define SPARE_COST 0.10
#define SPARE_MAX 2.0
static double margin_of(const struct dmaio_req *r)
{
	if (r->busy <= 0)
		return CPU_MARGIN;
	return fmax(CPU_MARGIN, fmin(SPARE_MAX, 1 + SPARE_COST / r->busy));
}

static int pick(const int *status, const struct dmaio_cost_est *est, size_t n, double margin,
		bool *by_cpu)
{
	int low = -1, p = -1;

	for (size_t i = 0; i < n; i++)
		if (!status[i] && (low < 0 || est[i].est_ns < est[low].est_ns))
			low = (int)i;
	if (low < 0)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (!status[i] && est[i].est_ns <= est[low].est_ns * margin &&
		    (p < 0 || est[i].cpu_ns < est[p].cpu_ns))
			p = (int)i;
	*by_cpu = p != low;
	return p;
}

/* Exploration: a path that is not chosen is never measured again, so one bad sample (a request
 * that met a one-time cost, a burst of another process) or a machine that changed would keep it
 * out for good. Every EXPLORE_EVERY-th automatic choice takes instead the candidate with the
 * fewest measurements among those whose estimate is within EXPLORE_MARGIN of the pick's (or the
 * pick's own margin when a queue with time to spare widened it: a path that could be taken
 * for its CPU must be measured again, or one noisy stretch of the storage keeps it out; a
 * 1080p frame writer so stayed on bounce-direct): at most 1/16 of the requests, each at most
 * 1.5x the estimate, so never more than about 3% on average (up to 2x where the caller does not
 * wait). Only a candidate that could become the pick is explored: one that spends more CPU
 * than the pick only when its estimate, that far off, would be below the pick's by the margin
 * (within 1.5 / margin): a 1080p frame writer, whose queue has time to spare (a margin of
 * 1.7x), explored bounce-direct (a 3 MB copy a frame, and on first use the engine's 16 MiB of
 * bounce memory faulted, zeroed and pinned: 44 ms of CPU on our VM host) for a path it would
 * not have taken at any speed up to 1.7x faster; auto spent 1.85x the CPU of udmabuf-direct
 * forced. A path measured once or twice is tried up to EXPLORE_FAR: its
 * ratio is one or two samples', and one sample can be another request's wait (a
 * bounce-direct frame write measured once at 212x its model, 12 times what it costs alone,
 * was out of the margin for good, and the frames stayed on a path 4x slower); that costs at
 * most EXPLORE_FEW requests per path and kind at 4x. A candidate measured often is explored
 * less often: every EXPLORE_EVERY-th choice below EXPLORE_SETTLED samples, then twice as
 * rarely for each doubling of its samples (8: 1 in 32, 16: 64, 32: 128), down to 1 in
 * EXPLORE_EVERY << EXPLORE_BACKOFF (64 samples and more: 256): a path measured 64 times at
 * 1.3x its rival needs no new sample every 16 requests, and at 1 in 16 the exploration of the
 * paths that lose cost the choice matrix's 16 MiB buffers (16 ranges of 1 MiB a pass) their
 * share of slower ranges and twice auto's CPU. Not so a candidate that spends less CPU than the
 * pick: it lost the pick on time alone, and a stretch of slow samples (a burst of another
 * process) leaves it there while the pick is what it measures; explored 1 in 256, our VM's
 * 4 KiB reads went bounce-direct in runs of 256 with udmabuf-direct, 10% faster and less CPU,
 * explored once in each (an exploration is learned with its burst, below, queue.c). And within a
 * budget of time per kind of request: every automatic choice earns the kind EXPLORE_SHARE
 * of its pick's estimate, of its time and of its CPU (at most EXPLORE_FAR picks' time is
 * saved), and an exploration spends the time it is estimated to add to the pick's, and where
 * the queue has time to spare (what a path costs it is the CPU) the CPU; one the credits do
 * not cover is not made. When it is learned, the time it took beyond the pick's estimate and
 * its grant is taken from the account too (below zero: the kind earns it back before it
 * explores again): an estimate is what the exploration is there to check, and a burst of 32
 * on a path 3-4x slower than estimated cost our VM's 64 KiB writes into a 16 MiB buffer 0.50x
 * of the best path (bench/RESULTS.md, session 25). A path the kind never measured is priced
 * at EXPLORE_FAR x the pick (its estimate is its siblings' guess, and the window it could
 * still be explored in ends there): a 4 GiB model load's 16 MiB reads explored `buffered`
 * (0 samples, estimated 1.3x) as a burst of 8 once that was earned, some 80 choices in; cold,
 * they ran 14x the pick (50 ms each against 3.5), twice in a load of 1 s (two kinds, aligned
 * and not), and the load went 0.70x of the baseline (session 30); priced at 4x, the kind
 * earns it after 96 choices a request of the burst, and a load is not explored, 0.93-1.03x
 * (session 31). The cadence alone let
 * a kind of few requests explore as often as a kind of many: our VM's 16 MiB buffers read as
 * one 16 MiB range a pass explored bounce-direct, measured once at 5.5x (its ratio moved 2x
 * from that sample), in one of 4 passes, and auto went at 0.44x of the best path; and a 4K
 * frame writer on a shared disk explored bounce-direct (a 12 MB copy a frame) in 13 of 300
 * frames, at 1.31x the CPU of udmabuf-direct. Not with
 * DMAIO_COST=fixed (tests see one choice), nor for a forced path's fallback. A write through
 * the page cache is explored as any path: its price is the larger of its own completions'
 * ratio and its writeback's (cost.c), and a sample teaches the first. Left out of exploration
 * (as it was before its writeback was priced, when its completions were all its price), a
 * ratio it learned in a bad stretch stood for good: our VM's 512 MiB buffers learned 6.9x
 * for their 4 KiB buffered writes in the bench's check pass (which follows a read-back of
 * the whole file), and auto wrote them `bounce-direct` at 0.24x of `buffered`, which learned 1.8x
 * when forced (bench/RESULTS.md, session 24). */
#define EXPLORE_EVERY 16u
#define EXPLORE_MARGIN 1.5
#define EXPLORE_FEW 3u
#define EXPLORE_FAR 4.0
#define EXPLORE_SETTLED 8u
#define EXPLORE_BACKOFF 4u
#define EXPLORE_SHARE (1.0 / 32)
#define EXPLORE_AGED (DMAIO_COST_STALE / 2)
/* In bursts: a queue explores a run of requests as deep as it is (the requests its ring holds
 * at once, at most those it has), learned as one sum and paid for from the budget as one
 * exploration (the run's time). Explored one at a time, a request's time was its share of
 * the time the pick's ops around it were in flight (queue.c, the service clock), right when
 * all wait on one resource; a lone request of another path waits on its own (the buffer's
 * lock and table walk for RW_FILE, the kernel's workers for a buffered write), and its share
 * was off by 2-5x either way: in our VM's 4 KiB writes into a 512 MiB system-heap buffer, an
 * explored buffered write among bounce-direct ones was charged 150-217 us (31-60 us as the
 * pick), an explored rw-file one 181-219 us (430-620 us forced), and auto mixed buffered with
 * bounce-direct at 0.41x of the best path (bench/RESULTS.md, session 24). A run as deep as
 * the queue is measured as the path runs when it is the pick. The cadence and the budget are
 * of requests: a burst of b comes at most once in b x EXPLORE_EVERY choices, and spends b
 * requests' time. A synchronous call's single request is a burst of one.
 *
 * Stale: a path measured, but not in the last DMAIO_COST_STALE automatic choices of the
 * context, is explored up to EXPLORE_FAR, as one measured once or twice: what it learned
 * describes a machine that may be gone, and beyond EXPLORE_MARGIN it was never measured
 * again. Our VM's bench learned its 4 KiB buffered writes into a 512 MiB udmabuf buffer at
 * 8.8x in the check pass that follows a read-back of the whole file (110-160 us a request),
 * 1.9x udmabuf-direct's estimate, and auto wrote them udmabuf-direct at 0.33-0.58x of
 * buffered, which measured 2.2-3.0x (50 us a request) when forced (bench/RESULTS.md,
 * session 25). Aging: from EXPLORE_AGED choices without a sample, the window widens with
 * the age, from EXPLORE_MARGIN to EXPLORE_FAR at DMAIO_COST_STALE (geometrically: a path
 * twice as far off waits the same number of choices more), and the backoff of a candidate
 * measured often is not applied: its samples are old, and the age is its own backoff (once
 * explored and learned, it is fresh again: at most one exploration of it in EXPLORE_AGED
 * choices). All or nothing at DMAIO_COST_STALE, with the backoff of 1 in 256 cadences on
 * top (a burst of 32: once in 8192 choices), our 7.3 VM's 4 KiB writes into a 512 MiB CMA
 * buffer wrote the first 512 MiB of a pass bounce-direct (36 MB/s; buffered, taught 8-13x
 * in the bench's check pass, went 101-108 MB/s forced): explored after 439-8780 choices in
 * four traced processes, never in one (auto 0.66x of buffered; bench/RESULTS.md, session
 * 35). The cadence and the budget hold as for any exploration: a path that stays 2x the
 * pick costs its kind a burst of 32 of it in some 2900 choices, 1.1% of the time. */
static unsigned burst_len(const struct dmaio_req *r, const struct dmaio_cost_est *e)
{
	uint64_t b;

	if (!r->burst_room || r->burst_queued <= 1)
		return 1;
	b = r->burst_room / MAX(e->ops, 1u);
	return (unsigned)MAX(MIN(b, (uint64_t)r->burst_queued), 1u);
}

/* The burst under way (r->burst_key), when the path it is on can serve r and r is of its kind:
 * its index; else -1 (the burst ends: queue.c). */
static int burst_on(const struct dmaio_req *r, const int *status, const struct dmaio_cost_est *est,
		    size_t n)
{
	for (size_t i = 0; i < n && r->burst_key && !r->ctx->cost.fixed; i++)
		if (!status[i] && est[i].key == r->burst_key)
			return (int)i;
	return -1;
}

/* How far off a candidate's estimate may be for it to be explored, before the pick's margin
 * (explore()): EXPLORE_FAR for one measured once or twice; for one measured more, from
 * EXPLORE_MARGIN while fresh to EXPLORE_FAR once stale (above, "Aging"); a path the kind never
 * measured, EXPLORE_MARGIN (it is priced at EXPLORE_FAR x the pick instead) */
static double window_of(const struct dmaio_cost_est *e)
{
	if (!e->samples)
		return EXPLORE_MARGIN;
	if (e->samples < EXPLORE_FEW || e->age > DMAIO_COST_STALE)
		return EXPLORE_FAR;
	if (e->age <= EXPLORE_AGED)
		return EXPLORE_MARGIN;
	return EXPLORE_MARGIN * pow(EXPLORE_FAR / EXPLORE_MARGIN,
				    (double)(e->age - EXPLORE_AGED) /
					    (DMAIO_COST_STALE - EXPLORE_AGED));
}

/* Which candidate an exploration takes first: one measured fewer than EXPLORE_SETTLED times,
 * the fewest first (a path new to the kind); else the one measured the longest ago. By
 * samples alone, two stale paths with thousands each went by the few samples the explored
 * one gained: our VM's 4 KiB writes explored sendfile (16384) in all 15 bursts of a pass,
 * never buffered (16444), the faster. */
static bool explore_first(const struct dmaio_cost_est *a, const struct dmaio_cost_est *b)
{
	bool fa = a->samples < EXPLORE_SETTLED, fb = b->samples < EXPLORE_SETTLED;

	if (fa != fb)
		return fa;
	return fa ? a->samples < b->samples : a->age > b->age;
}

/* An estimate, and its CPU, without the one-time setup in it (what the path's later requests
 * will be priced at once its first one paid it) */
static double steady_est(const struct dmaio_cost_est *e)
{
	return e->est_ns - e->setup_ns;
}

static double steady_cpu(const struct dmaio_cost_est *e)
{
	return e->cpu_ns - e->setup_ns;
}

/* A path explored at the kind's first choice, off the cadence and on credit (a saver): one
 * that would be the pick were its one-time setup paid (by the pick's rule), or one the kind
 * never measured that spends less CPU than the pick once set up. Its CPU must be known: a path
 * of blocking calls (rw-file, sendfile) shows its CPU only once its calls are measured, and
 * modelled it is their entries alone, a few microseconds. A queue's engine makes its own bounce memory: our 6.12 VM's frame writer
 * (bench/RESULTS.md, session 34) had bounce-direct measured at 0.5x of its model, 6.3 ms a
 * frame, and a new queue priced it at 11.6 with the memory to make, so its skewed frames went
 * `buffered` (8-10 ms) for a whole pass, 15 ms of CPU a frame against 11. */
static bool saver(const struct dmaio_req *r, const struct dmaio_cost_est *x,
		  const struct dmaio_cost_est *p)
{
	double sx = steady_est(x), sp = steady_est(p);
	bool less_cpu = (!x->calls || x->cpu_samples) && steady_cpu(x) < steady_cpu(p);

	if (!x->samples)
		return less_cpu;
	/* the pick's rule (pick()): the least CPU within the margin of the lowest estimate */
	return x->setup_ns > 0 && (less_cpu ? sx <= sp * margin_of(r) : sx * margin_of(r) < sp);
}

static int explore(const struct dmaio_req *r, const int *status, const struct dmaio_cost_est *est,
		   size_t n, int p, unsigned *burst, double *granted)
{
	struct dmaio_ctx *c = r->ctx;
	uint32_t tick, every;
	unsigned k = 0, b = burst_len(r, &est[p]);
	double earn[2], cap[2], spend[2];
	bool overdraw = false;
	int x = -1;

	*burst = 0;
	*granted = 0;
	if (c->cost.fixed)
		return p;
	tick = __atomic_add_fetch(&c->cost.explore_tick, 1, __ATOMIC_RELAXED);
	every = EXPLORE_EVERY * b; /* the queue's depth of the pick's requests */
	for (size_t i = 0; i < n; i++) {
		double far;

		if ((int)i == p || status[i])
			continue; /* the pick, or a path that cannot serve (no estimate made) */
		if (tick % every && !saver(r, &est[i], &est[p]))
			continue; /* not at the cadence: only a saver */
		far = window_of(&est[i]);
		/* what would become the pick, were its estimate that far off: one that spends less
		 * CPU, within the pick's margin of it; one that spends more, only below the pick
		 * by the margin (the caller with time to spare would not take it otherwise). Both
		 * once its one-time setup is paid (the engine's bounce memory, the buffer's mapping
		 * or registration, made by its first request and never again): our 6.12 VM's
		 * 1080p frames from a system-heap buffer, never through bounce-direct, priced it at
		 * 25.8 ms, 5.2 of them the bounce memory to make, against rw-file's 16.5, and
		 * never explored it (1.56x); forced, it wrote the frames in 6.3-8 ms to rw-file's
		 * 12.8, with half its CPU (bench/RESULTS.md, session 33) */
		far = steady_cpu(&est[i]) < steady_cpu(&est[p]) ? fmax(far, margin_of(r))
								   : far / margin_of(r);
		if (steady_est(&est[i]) <= est[p].est_ns * far &&
		    (x < 0 || explore_first(&est[i], &est[x])))
			x = (int)i;
	}
	/* the backoff of a candidate measured often: one that spends less CPU than the pick is
	 * explored at the cadence (it lost the pick on time alone and saves CPU), unless its work
	 * runs in blocking calls on the worker threads, whose CPU shows only once measured, and
	 * then with the contention of the calls in flight (rw-file's table walk under the buffer's
	 * lock: 17-20 CPU s/GiB at 64 KiB ranges in our VM, explored 1 in 16 it took auto's CPU to
	 * twice either path's); not one aging ("Aging", above). Nor when the pick is a write
	 * through the page cache priced by its writeback's guess (cost.c writeback_lr()): that
	 * price is the direct writes' own ratio, so a direct path's samples move both estimates
	 * alike and can never make it the pick (nor the pick's samples move the guess). Explored
	 * at the cadence, our 7.3 VM's 4 KiB writes made durable by the application's own
	 * fdatasync() went `bounce-direct` in bursts of 32 every 512 choices, 2.5-3x slower than
	 * `buffered` forced and estimated 1.37x of its guess, and auto went 0.61-0.84x of
	 * `buffered` (bench/RESULTS.md, session 37) */
	if (x >= 0 && !saver(r, &est[x], &est[p]) && est[x].age <= EXPLORE_AGED &&
	    (est[x].cpu_ns >= est[p].cpu_ns || est[x].calls || est[p].wb_guessed)) {
		for (uint32_t s = est[x].samples / EXPLORE_SETTLED; s && k < EXPLORE_BACKOFF; s >>= 1)
			k++;
		if ((tick / every) % (1u << k))
			x = -1;
	}
	/* every choice earns the kind its share of the pick's time and CPU; an exploration
	 * spends the time it is estimated to add, and for a queue with time to spare (its
	 * margin wider than the waiting caller's) the CPU; a burst, its requests' (the credit
	 * kept up to a burst's worth of EXPLORE_FAR picks each) */
	if (x >= 0) {
		b = burst_len(r, &est[x]);
		overdraw = saver(r, &est[x], &est[p]);
	}
	earn[0] = est[p].est_ns * EXPLORE_SHARE;
	earn[1] = est[p].cpu_ns * EXPLORE_SHARE;
	cap[0] = cap[1] = est[p].est_ns * EXPLORE_FAR * b;
	spend[0] = spend[1] = -1;
	if (x >= 0) {
		/* a path the kind never measured is priced at the edge of the window it could
		 * still be explored in (EXPLORE_FAR x the pick): its estimate is its siblings'
		 * guess. A saver is not: it is explored at the kind's first choice, whatever the
		 * cadence, on credit (the account not below zero, the spend may take it there),
		 * for it saves on every request after; it spends its setup and the time its steady
		 * estimate adds (any time beyond is taken from the account when it is learned).
		 * Priced at 4x and at the cadence, our 6.12 VM's 1080p frame writer sent its first
		 * 96-100 frames of each context through rw-file (17 ms of CPU a frame) before it
		 * tried bounce-direct (8.9 ms), 1.19-1.42x of bounce-direct forced
		 * (bench/RESULTS.md, session 33); the model load's cold `buffered` (session 31)
		 * spends more CPU than its pick */
		double est_x = est[x].samples ? est[x].est_ns
					      : fmax(est[x].est_ns, est[p].est_ns * EXPLORE_FAR);

		spend[0] = overdraw ? b * fmax(0, steady_est(&est[x]) - est[p].est_ns) +
					      est[x].setup_ns
				    : b * fmax(0, est_x - est[p].est_ns);
		spend[1] = margin_of(r) > CPU_MARGIN ? b * fmax(0, est[x].cpu_ns - est[p].cpu_ns) : 0;
	}
	if (!dmaio_cost_explore_credit(c, est[p].key, earn, cap, spend, overdraw)) {
		if (x >= 0)
			DBG(c, "  %s: not explored (%u measured; %.1f us more time, %.1f us more "
			    "CPU than %s): over the kind's budget", path_table[x]->name,
			    est[x].samples, spend[0] / 1e3, spend[1] / 1e3, path_table[p]->name);
		return p;
	}
	if (x >= 0 && x != p) {
		*burst = b;
		*granted = spend[0];
	}
	return x < 0 ? p : x;
}

/* Memo: a queue of many small ranges of one kind (4 KiB writes into one buffer and file) priced
 * every path for every range, the same prices again and again (a few exp2/log2 and table
 * lookups per path: on our host 1.3% of a 4 KiB-write bench run's CPU samples, 0.4% with the
 * memo; in our VM, whose floating point is emulated, auto spent 10-12% more CPU per GiB than
 * the same path forced at 4 KiB, and moved 0.82-0.87x its bytes: bench/RESULTS.md, C40). A
 * queue keeps its last automatic choice's prices (r->memo), and its next request takes them
 * when every input of a price is alike: the buffer and its mapping, the file, the direction,
 * the flags, the rest of the range's length and its offsets' alignment (modulo the largest
 * alignment a path splits by), the page-cache residency asked, the engine's bounce memory made
 * or not, a read within the file's known size, and no sample learned by the cost model since
 * (each learned sample counts: dmaio_cost_gen()). A refusal or fallback drops the memo (a path
 * refused what its price said it could serve), and after MEMO_USES choices it is made again
 * whatever. The pick, the exploration and the burst are decided anew for every request, from
 * these prices. */
#define MEMO_USES 64u

static uint64_t memo_align(const struct dmaio_req *r)
{
	uint64_t a = (uint64_t)dmaio_page_size();

	a = MAX(a, (uint64_t)r->file->off_align);
	a = MAX(a, (uint64_t)r->file->roff_align);
	return MAX(a, (uint64_t)r->file->mem_align);
}

/* a read ends within the file's known size (a price clips a read at it) */
static bool memo_within(const struct dmaio_req *r)
{
	return r->write || r->file_off + r->len <= dmaio_file_size_load(r->file);
}

static bool memo_fits(const struct dmaio_choice_memo *m, const struct dmaio_req *r,
		      int cached_pct)
{
	uint64_t a = memo_align(r);

	return m->valid && m->uses < MEMO_USES && m->gen == dmaio_cost_gen(r->ctx) &&
	       m->buf_id == r->buf->id && m->file_id == r->file->id && m->write == r->write &&
	       m->flags == r->flags && m->cached_pct == cached_pct &&
	       m->len == r->len - r->start && m->buf_mod == (r->buf_off + r->start) % a &&
	       m->file_mod == (r->file_off + r->start) % a &&
	       m->mapped == (__atomic_load_n(&r->buf->addr, __ATOMIC_RELAXED) != NULL) &&
	       m->bounce_cold == r->bounce_cold && memo_within(r);
}

static void memo_keep(struct dmaio_choice_memo *m, const struct dmaio_req *r, int cached_pct,
		      uint64_t gen, const int *status, const struct dmaio_cost_est *e,
		      const char *const *w)
{
	uint64_t a = memo_align(r);

	_Static_assert(ARRAY_SIZE(path_table) <= DMAIO_CHOOSE_SLOTS, "the memo holds every path");
	m->valid = memo_within(r);
	if (!m->valid)
		return;
	m->gen = gen;
	m->buf_id = r->buf->id;
	m->file_id = r->file->id;
	m->write = r->write;
	m->flags = r->flags;
	m->cached_pct = cached_pct;
	m->len = r->len - r->start;
	m->buf_mod = (r->buf_off + r->start) % a;
	m->file_mod = (r->file_off + r->start) % a;
	m->mapped = __atomic_load_n(&r->buf->addr, __ATOMIC_RELAXED) != NULL;
	m->bounce_cold = r->bounce_cold;
	m->uses = 0;
	for (size_t i = 0; i < ARRAY_SIZE(path_table); i++) {
		m->status[i] = status[i];
		m->why[i] = w[i];
		if (!status[i])
			m->est[i] = e[i];
	}
}

const struct dmaio_path_ops *dmaio_choose(struct dmaio_req *r, int cached_pct, unsigned flags,
					  struct dmaio_cost_est *est, const char **why, int *err)
{
	size_t n = ARRAY_SIZE(path_table);
	struct dmaio_cost_est e[ARRAY_SIZE(path_table)];
	const char *w[ARRAY_SIZE(path_table)];
	int status[ARRAY_SIZE(path_table)];
	int mode = dmaio_cost_mode(r, cached_pct), p;
	bool unmapped = false, by_cpu = false, first = !r->forced && !r->tried;
	uint64_t gen = dmaio_cost_gen(r->ctx); /* before the prices: a sample learned meanwhile
						 * leaves the memo stale, never wrong */

	*err = 0;
	*why = NULL;
	if (r->forced && !(r->tried & (1u << r->forced))) {
		const struct dmaio_path_ops *fp = dmaio_path_by_id(r->forced);
		const char *fw = "forced";
		int s = fp ? price(r, fp, cached_pct, mode, est, &fw) : -EOPNOTSUPP;

		*why = fw;
		r->tried |= 1u << r->forced;
		if (!s)
			return fp;
		INFO(r->ctx, "  forced path %s cannot serve: %s", dmaio_choose_path_name((uint32_t)r->forced), fw);
		if (r->flags & DMAIO_RW_NO_FALLBACK) {
			*err = -EOPNOTSUPP;
			return NULL;
		}
		r->fallbacks++;
		r->last_refusal = s;
	}
	/* every path not tried yet, priced; or, for a queue's next request of the same kind, the
	 * prices of its last choice */
	if (first && r->memo && memo_fits(r->memo, r, cached_pct)) {
		struct dmaio_choice_memo *m = r->memo;

		m->uses++;
		for (size_t i = 0; i < n; i++) {
			status[i] = m->status[i];
			w[i] = m->why[i];
			unmapped |= status[i] == -ENODEV;
			if (status[i])
				continue;
			e[i] = m->est[i];
			if (e[i].samples) /* its age moves with every choice */
				e[i].age = dmaio_cost_age(r->ctx, e[i].key);
		}
		DBG(r->ctx, "  the prices of the last choice (the same kind, nothing learned since)");
		goto priced;
	}
	if (r->memo)
		r->memo->valid = false; /* made again below, or a fallback: stale either way */
	for (size_t i = 0; i < n; i++) {
		const struct dmaio_path_ops *tp = path_table[i];

		w[i] = "";
		if (r->tried & (1u << tp->id)) {
			status[i] = -EALREADY;
			continue;
		}
		status[i] = price(r, tp, cached_pct, mode, &e[i], &w[i]);
		if (status[i]) {
			DBG(r->ctx, "  %s: cannot: %s", tp->name, w[i]);
			unmapped |= status[i] == -ENODEV;
			continue;
		}
		DBG(r->ctx, "  %s: %.1f us = (ops %.1f + bytes %.1f + walk %.1f) x %.2f (%u measured%s)"
		    " + setup %.1f; cpu %.1f (calls' x %.2f, %u measured)", tp->name,
		    e[i].est_ns / 1e3, e[i].ops_ns / 1e3, e[i].bytes_ns / 1e3, e[i].walk_ns / 1e3,
		    e[i].ratio, e[i].samples, e[i].wb_guessed ? "; its writeback's guess" : "",
		    e[i].setup_ns / 1e3, e[i].cpu_ns / 1e3, e[i].cpu_ratio, e[i].cpu_samples);
	}
	if (first && r->memo)
		memo_keep(r->memo, r, cached_pct, gen, status, e, w);
priced:
	p = pick(status, e, n, margin_of(r), &by_cpu);
	if (p < 0) {
		/* a path that needs the mapping could have served, had the exporter given one:
		 * -ENODEV says so (dmaio_fd_read()), more than any other path's refusal */
		*err = unmapped ? -ENODEV : r->last_refusal ? r->last_refusal : -EOPNOTSUPP;
		return NULL;
	}
	if (by_cpu)
		DBG(r->ctx, "  %s: within %.0f%% of the lowest estimate (the queue busy %.0f%% of "
		    "the time), the least CPU", path_table[p]->name, (margin_of(r) - 1) * 100,
		    r->busy * 100);
	if (first && (flags & DMAIO_CHOOSE_EXPLORE)) {
		int x = burst_on(r, status, e, n);
		unsigned b = 0;
		double granted;

		if (x >= 0) {
			DBG(r->ctx, "  %s: the burst of its exploration goes on", path_table[x]->name);
			e[x].explored = true;
			e[x].pick_ns = e[p].est_ns - e[p].setup_ns;
		} else if ((x = explore(r, status, e, n, p, &b, &granted)) != p) {
			DBG(r->ctx, "  %s: explored (%u measured) instead of %s (%u), a burst of %u "
			    "requests", path_table[x]->name, e[x].samples, path_table[p]->name,
			    e[p].samples, b);
			e[x].explored = true;
			e[x].burst = b;
			e[x].pick_ns = e[p].est_ns - e[p].setup_ns;
			e[x].granted_ns = granted;
		}
		p = x;
	}
	*est = e[p];
	*why = w[p];
	r->tried |= 1u << path_table[p]->id;
	return path_table[p];
}

unsigned dmaio_choose_count(void)
{
	return ARRAY_SIZE(path_table);
}

int dmaio_choose_explain(const struct dmaio_req *r, int cached_pct, int *status,
			 struct dmaio_cost_est *est, const char **why,
			 int *ids)
{
	int mode = dmaio_cost_mode(r, cached_pct), pk;
	bool by_cpu;

	for (size_t i = 0; i < ARRAY_SIZE(path_table); i++) {
		const struct dmaio_path_ops *p = path_table[i];

		ids[i] = p->id;
		why[i] = "";
		memset(&est[i], 0, sizeof(est[i]));
		status[i] = price(r, p, cached_pct, mode, &est[i], &why[i]);
	}
	pk = pick(status, est, ARRAY_SIZE(path_table), margin_of(r), &by_cpu);
	/* a forced path that can serve is taken whatever its estimate */
	for (size_t i = 0; i < ARRAY_SIZE(path_table); i++)
		if (r->forced == path_table[i]->id && !status[i])
			pk = (int)i;
	return pk;
}
