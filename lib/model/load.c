/* SPDX-License-Identifier: MIT */
/*
 * Loading tensors into buffers: the plan (buffers and each tensor's place), then every range
 * through one queue (registered files of the shards), with progress, cancellation and optional
 * page-cache dropping. New buffers are allocated by a preparing thread, in plan order, while the
 * queue reads into the ones before, and (memfd-backed ones) faulted in there: the kernel's work
 * on new memory overlaps with the device's transfers instead of preceding them.
 * Public API of dmaio.h only.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "model.h" /* the public API, then dmaio-types.h */

/* what new buffers are called unless dmaio_load_opts.alloc->name says (DMA_BUF_SET_NAME; the
 * memfd name of memfd-backed ones) */
#define MODEL_BUF_NAME "dmaio-model"

struct place {
	int32_t buf;      /* -1: not selected; -2: selected, zero bytes (no buffer) */
	uint64_t off;
	uint64_t size;
};

struct dmaio_load {
	uint32_t ntensors;
	struct place *pl;
	unsigned nbufs;
	struct dmaio_buf **bufs;
	bool borrowed;             /* bufs are the caller's (dmaio_load_opts.bufs) */
	struct dmaio_load_stats st;
};

struct range {
	uint32_t file;
	uint32_t buf;
	uint64_t file_off;
	uint64_t buf_off;
	uint64_t len;
};

struct range_vec {
	struct range *r;
	size_t n, cap;
};

/* The preparing thread: allocates l->bufs[0..nbufs) in order, publishing each under lock. */
struct prep {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	unsigned ready;            /* l->bufs[0..ready) exist */
	int err;                   /* the first allocation's failure, or 0 */
	bool stop;                 /* the reading side gave up: allocate no more */
	bool started;              /* a thread runs (else every buffer is ready) */
	pthread_t thread;
	struct dmaio_model *m;
	const struct dmaio_load_opts *o;
	const struct dmaio_alloc_opts *ao; /* the options of every new buffer */
	struct dmaio_load *l;
	const uint64_t *sizes;
	unsigned nbufs;
	uint64_t alloc_ns;         /* time in dmaio_buf_alloc() and prefaulting */
	uint64_t wait_ns;          /* time the reading side waited for a buffer */
	struct dmaio_reason why;   /* why the allocation failed (with err) */
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* append [file_off, +len) -> (buf, buf_off), merged with the last range when both continue it,
 * split at DMAIO_LOAD_RANGE_MAX */
static int add_range(struct range_vec *v, uint32_t file, uint32_t buf, uint64_t file_off,
		     uint64_t buf_off, uint64_t len)
{
	while (len > 0) {
		struct range *last = v->n ? &v->r[v->n - 1] : NULL;

		if (last && last->file == file && last->buf == buf &&
		    last->file_off + last->len == file_off && last->buf_off + last->len == buf_off &&
		    last->len < DMAIO_LOAD_RANGE_MAX) {
			uint64_t take = MIN(len, DMAIO_LOAD_RANGE_MAX - last->len);

			last->len += take;
			file_off += take;
			buf_off += take;
			len -= take;
			continue;
		}
		if (v->n == v->cap) {
			size_t cap = v->cap ? v->cap * 2 : 64;
			struct range *r = realloc(v->r, cap * sizeof(*r));

			if (!r)
				return -ENOMEM;
			v->r = r;
			v->cap = cap;
		}
		uint64_t take = MIN(len, DMAIO_LOAD_RANGE_MAX);

		v->r[v->n++] = (struct range){ file, buf, file_off, buf_off, take };
		file_off += take;
		buf_off += take;
		len -= take;
	}
	return 0;
}

static void load_free(struct dmaio_load *l)
{
	if (!l)
		return;
	for (unsigned i = 0; i < l->nbufs && !l->borrowed; i++)
		dmaio_buf_free(l->bufs[i]);
	free(l->bufs);
	free(l->pl);
	free(l);
}

static const char *mode_name(uint32_t mode)
{
	return mode == DMAIO_LOAD_WHOLE ? "WHOLE" : mode == DMAIO_LOAD_PER_TENSOR ? "PER_TENSOR" :
	       mode == DMAIO_LOAD_PACKED ? "PACKED" : "?";
}

/* what dmaio_buf_alloc() would refuse in opts->alloc (read into *ao), checked before anything is
 * done; the name of the new buffers defaults to the load's */
static int read_alloc_opts(const struct dmaio_alloc_opts *alloc, struct dmaio_alloc_opts *ao,
			   struct dmaio_reason *why)
{
	char sn[MODEL_SHOW_MAX];
	size_t n = 0;
	int r;

	memset(ao, 0, sizeof(*ao));
	ao->struct_size = sizeof(*ao);
	if (alloc) {
		r = dmaio_abi_copy_in(ao, sizeof(*ao), alloc, DMAIO_SIZE_ALLOC_OPTS);
		if (r)
			return dmaio_reason_set(why, r, "opts->alloc: struct_size %u %s",
						alloc->struct_size,
						r == -E2BIG ? "with non-zero bytes this library does "
							      "not know" : "below the 1.0 size");
	}
	if (ao->flags & ~DMAIO_ALLOC_FLAGS_ALL)
		return dmaio_reason_set(why, -EINVAL, "opts->alloc->flags 0x%x: unknown bits 0x%x",
					ao->flags, ao->flags & ~DMAIO_ALLOC_FLAGS_ALL);
	if ((ao->flags & DMAIO_ALLOC_ALLOW_NON_DMABUF) && (ao->flags & DMAIO_ALLOC_DMABUF_ONLY))
		return dmaio_reason_set(why, -EINVAL, "opts->alloc->flags 0x%x: "
					"DMAIO_ALLOC_ALLOW_NON_DMABUF and DMAIO_ALLOC_DMABUF_ONLY "
					"contradict each other", ao->flags);
	if (ao->name) {
		size_t len = strlen(ao->name);
		bool ok = len > 0 && len < DMAIO_BUF_NAME_MAX;

		for (size_t i = 0; ok && i < len; i++)
			ok = ao->name[i] >= 0x20 && ao->name[i] <= 0x7e;
		if (!ok)
			return dmaio_reason_set(why, -EINVAL, "opts->alloc->name \"%s\": 1 to %u "
						"printable ASCII bytes",
						model_show(sn, ao->name, strlen(ao->name)),
						DMAIO_BUF_NAME_MAX - 1);
	}
	for (; ao->providers && ao->providers[n]; n++) {
		const char *p = ao->providers[n];
		size_t len = strlen(p);

		if (n >= DMAIO_ALLOC_PROVIDERS_MAX)
			return dmaio_reason_set(why, -EINVAL, "opts->alloc->providers: more than %u",
						DMAIO_ALLOC_PROVIDERS_MAX);
		if (!len || len >= DMAIO_HEAP_NAME_MAX || strchr(p, '/') || strstr(p, ".."))
			return dmaio_reason_set(why, -EINVAL, "opts->alloc->providers[%zu] \"%s\": "
						"empty, %u bytes or more, or with '/' or \"..\"", n,
						model_show(sn, p, len), DMAIO_HEAP_NAME_MAX);
	}
	if (ao->providers && !n)
		return dmaio_reason_set(why, -EINVAL, "opts->alloc->providers: an empty list");
	return 0;
}

static int check_opts(const struct dmaio_model *m, const struct dmaio_load_opts *o,
		      struct dmaio_reason *why)
{
	uint32_t path = o->rw_flags & DMAIO_RW_PATH_MASK;

	if (o->mode > DMAIO_LOAD_PACKED)
		return dmaio_reason_set(why, -EINVAL, "opts->mode %u: not a load mode (0 WHOLE, "
					"1 PER_TENSOR, 2 PACKED)", o->mode);
	if (o->flags & ~DMAIO_LOAD_FLAGS_ALL)
		return dmaio_reason_set(why, -EINVAL, "opts->flags 0x%x: unknown bits 0x%x", o->flags,
					o->flags & ~DMAIO_LOAD_FLAGS_ALL);
	if (o->rw_flags & ~DMAIO_RW_FLAGS_ALL)
		return dmaio_reason_set(why, -EINVAL, "opts->rw_flags 0x%x: unknown bits 0x%x",
					o->rw_flags, o->rw_flags & ~DMAIO_RW_FLAGS_ALL);
	if (path >= DMAIO_PATH_COUNT)
		return dmaio_reason_set(why, -EINVAL, "opts->rw_flags 0x%x: path %u names no path",
					o->rw_flags, path);
	if (o->bufs && !o->nbufs)
		return dmaio_reason_set(why, -EINVAL, "opts->bufs without opts->nbufs");
	if (!o->bufs && o->nbufs)
		return dmaio_reason_set(why, -EINVAL, "opts->nbufs %u without opts->bufs", o->nbufs);
	if (o->bufs && o->mode != DMAIO_LOAD_PACKED)
		return dmaio_reason_set(why, -EINVAL, "opts->bufs in mode %s: only PACKED loads into "
					"the caller's buffers", mode_name(o->mode));
	if (o->bufs && o->max_buf)
		return dmaio_reason_set(why, -EINVAL, "opts->bufs with opts->max_buf %llu: the "
					"caller's buffers are the limit",
					(unsigned long long)o->max_buf);
	if (o->bufs && o->alloc)
		return dmaio_reason_set(why, -EINVAL, "opts->bufs with opts->alloc: the load "
					"allocates no buffer");
	for (uint32_t i = 0; o->bufs && i < o->nbufs; i++)
		if (!o->bufs[i])
			return dmaio_reason_set(why, -EINVAL, "opts->bufs[%u] is NULL", i);
	if (o->align & (o->align - 1))
		return dmaio_reason_set(why, -EINVAL, "opts->align %u is not a power of two",
					o->align);
	if (o->depth > DMAIO_QUEUE_DEPTH_MAX)
		return dmaio_reason_set(why, -EINVAL, "opts->depth %u is above "
					"DMAIO_QUEUE_DEPTH_MAX (%u)", o->depth,
					DMAIO_QUEUE_DEPTH_MAX);
	if (o->mode == DMAIO_LOAD_WHOLE && o->align)
		return dmaio_reason_set(why, -EINVAL, "opts->align %u in mode WHOLE (the data "
					"sections keep their file phase)", o->align);
	if (o->mode == DMAIO_LOAD_WHOLE && (o->select || o->nselect))
		return dmaio_reason_set(why, -EINVAL, "opts->select in mode WHOLE (every tensor is "
					"loaded)");
	if (o->mode != DMAIO_LOAD_PACKED && o->max_buf)
		return dmaio_reason_set(why, -EINVAL, "opts->max_buf %llu in mode %s (PACKED only)",
					(unsigned long long)o->max_buf, mode_name(o->mode));
	if (!o->select && o->nselect)
		return dmaio_reason_set(why, -EINVAL, "opts->nselect %u without opts->select",
					o->nselect);
	for (uint32_t i = 0; o->select && i < o->nselect; i++)
		if (o->select[i] >= m->n)
			return dmaio_reason_set(why, -EINVAL, "opts->select[%u] %u: the model has %u "
						"tensors", i, o->select[i], m->n);
	return 0;
}

/* PACKED's buffer limit when the caller gives none: the provider's (the first one asked for) */
static uint64_t default_max_buf(struct dmaio_model *m, const char *provider)
{
	struct dmaio_sys_info si = { .struct_size = sizeof(struct dmaio_sys_info) };
	bool udmabuf = provider && strncmp(provider, "udmabuf", 7) == 0;

	if (dmaio_ctx_get_system(m->ctx, &si) == 0) {
		if (udmabuf || (!provider && si.udmabuf == DMAIO_CAP_YES))
			return si.udmabuf_size_limit ? si.udmabuf_size_limit : 64ull << 20;
	} else if (udmabuf) {
		return 64ull << 20;
	}
	return DMAIO_LOAD_DEFAULT_MAX_BUF;
}

/* the buffers and the place of each selected tensor; sizes in *sizes (nbufs of them) */
static int plan(struct dmaio_model *m, const struct dmaio_load_opts *o,
		const struct dmaio_alloc_opts *ao, struct dmaio_load *l, uint64_t **sizes_out,
		unsigned *nbufs_out, struct range_vec *rv, struct dmaio_reason *why)
{
	uint64_t *sizes = NULL;
	size_t nb = 0, cap = 0;
	uint64_t limit = 0, align = o->align ? o->align : 1, cur = 0;
	char sn[MODEL_SHOW_MAX];
	int r;

#define NEW_BUF(sz)                                                                     \
	do {                                                                              \
		if (nb == cap) {                                                          \
			size_t c2 = cap ? cap * 2 : 16;                                   \
			uint64_t *s2 = realloc(sizes, c2 * sizeof(*s2));                  \
			if (!s2) {                                                        \
				r = dmaio_reason_set(why, -ENOMEM, "out of memory");      \
				goto fail;                                                \
			}                                                                 \
			sizes = s2;                                                       \
			cap = c2;                                                         \
		}                                                                         \
		sizes[nb++] = (sz);                                                       \
	} while (0)

	if (o->mode == DMAIO_LOAD_PACKED)
		limit = o->bufs ? (uint64_t)dmaio_buf_size(o->bufs[0]) :
			o->max_buf ? o->max_buf :
			default_max_buf(m, ao->providers ? ao->providers[0] : NULL);
	if (o->mode == DMAIO_LOAD_WHOLE) {
		for (unsigned f = 0; f < m->nfiles; f++) {
			struct model_file *mf = &m->files[f];
			uint32_t b = (uint32_t)nb;

			if (mf->data_size == 0) {
				for (uint32_t i = 0; i < mf->ntensors; i++)
					l->pl[mf->first + i].buf = -2;
				continue;
			}
			/* the data section at its file phase: buffer offset = file offset mod 4 KiB */
			uint64_t ph = mf->data_offset & (DMAIO_LOAD_PHASE - 1);

			NEW_BUF(ph + mf->data_size);
			for (uint32_t i = 0; i < mf->ntensors; i++) {
				struct place *p = &l->pl[mf->first + i];
				struct model_tensor *t = &m->t[mf->first + i];

				p->buf = t->size ? (int32_t)b : -2;
				p->off = t->size ? ph + t->offset - mf->data_offset : 0;
				p->size = t->size;
			}
			r = add_range(rv, f, b, mf->data_offset, ph, mf->data_size);
			if (r < 0) {
				dmaio_reason_set(why, r, "out of memory");
				goto fail;
			}
		}
		goto done;
	}
	/* selected tensors, in model order (file, then offset) */
	for (uint32_t i = 0; i < m->n; i++) {
		struct place *p = &l->pl[i];
		struct model_tensor *t = &m->t[i];

		if (p->buf != -2) /* marked by the caller of plan() */
			continue;
		if (t->size == 0)
			continue;
		p->size = t->size;
		if (o->mode == DMAIO_LOAD_PER_TENSOR) {
			NEW_BUF(t->size);
			p->buf = (int32_t)(nb - 1);
			p->off = 0;
		} else {
			uint64_t off;

			if (t->size > limit && !o->bufs) {
				r = dmaio_reason_set(why, -EFBIG, "tensor \"%s\" (%llu bytes) is larger "
						     "than the buffer limit %llu (%s)",
						     model_show(sn, t->name, strlen(t->name)),
						     (unsigned long long)t->size,
						     (unsigned long long)limit,
						     o->max_buf ? "opts->max_buf" : "the provider's");
				goto fail;
			}
			/* at the tensor's file phase when that start is also a multiple of align
			 * (direct I/O can serve it; file-contiguous tensors stay contiguous and are
			 * read as one range), else at the next multiple of align */
			bool phased = align <= DMAIO_LOAD_PHASE && t->offset % align == 0;
			uint64_t ph = t->offset & (DMAIO_LOAD_PHASE - 1);

			if (nb == 0)
				off = UINT64_MAX;
			else if (phased)
				off = cur + ((ph - cur) & (DMAIO_LOAD_PHASE - 1));
			else
				off = round_up_u64(cur, align);
			while (off == UINT64_MAX || off > limit || t->size > limit - off) {
				if (o->bufs && nb > 0) {
					/* the caller's next buffer, until one holds the tensor */
					if (nb >= o->nbufs) {
						r = dmaio_reason_set(why, -ENOSPC, "the caller's %u "
								     "buffers cannot hold the "
								     "selected tensors: \"%s\" "
								     "(%llu bytes) does not fit",
								     o->nbufs,
								     model_show(sn, t->name,
										strlen(t->name)),
								     (unsigned long long)t->size);
						goto fail;
					}
					limit = (uint64_t)dmaio_buf_size(o->bufs[nb]);
				}
				NEW_BUF(0);
				off = UINT64_MAX; /* a fresh buffer: at the phase, or at 0 */
				if (t->size <= limit)
					off = phased && ph <= limit - t->size ? ph : 0;
				else if (!o->bufs) {
					r = dmaio_reason_set(why, -EFBIG, "tensor \"%s\" (%llu bytes) "
							     "is larger than the buffer limit %llu "
							     "(%s)", model_show(sn, t->name,
										strlen(t->name)),
							     (unsigned long long)t->size,
							     (unsigned long long)limit,
							     o->max_buf ? "opts->max_buf" :
							     "the provider's");
					goto fail;
				}
			}
			cur = off + t->size;
			sizes[nb - 1] = cur;
			p->buf = (int32_t)(nb - 1);
			p->off = off;
		}
		r = add_range(rv, t->file, (uint32_t)p->buf, t->offset, p->off, t->size);
		if (r < 0) {
			dmaio_reason_set(why, r, "out of memory");
			goto fail;
		}
	}
#undef NEW_BUF
done:
	if (nb > INT_MAX) {
		r = dmaio_reason_set(why, -E2BIG, "the plan needs %zu buffers, above INT_MAX", nb);
		goto fail;
	}
	*sizes_out = sizes;
	*nbufs_out = (unsigned)nb;
	return 0;
fail:
	free(sizes);
	return r;
}

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif

/* Fault a new buffer's mapping in, writable, without writing it (MADV_POPULATE_WRITE), so that
 * the pinning at its first direct read finds its pages in place. Only for buffers whose mapping
 * is what direct I/O pins: the memfd behind "memfd" and "udmabuf*" buffers (a dma-buf's own
 * mapping is not: the kernel paths never touch it). The buffer stays mapped, as after any
 * transfer through that memfd. Best effort: an older kernel leaves the work to the pinning. */
static void prefault(struct dmaio_buf *b)
{
	const char *prov = dmaio_buf_provider(b);
	void *p;

	if (!prov || (strcmp(prov, "memfd") != 0 && strncmp(prov, "udmabuf", 7) != 0))
		return;
	if (dmaio_buf_map(b, &p) == 0)
		(void)madvise(p, dmaio_buf_size(b), MADV_POPULATE_WRITE);
}

static void *prep_main(void *arg)
{
	struct prep *p = arg;

	for (unsigned b = 0; b < p->nbufs; b++) {
		struct dmaio_reason why = { .struct_size = sizeof(why) };
		struct dmaio_buf *buf = NULL;
		uint64_t t0 = now_ns();
		bool stop;
		int r;

		pthread_mutex_lock(&p->lock);
		stop = p->stop;
		pthread_mutex_unlock(&p->lock);
		if (stop)
			break;
		r = dmaio_buf_alloc(p->m->ctx, p->sizes[b], p->ao, &buf, &why);
		/* unnamed by the caller: named after the load, where the kernel takes names (5.8+;
		 * a memfd carries its name from allocation) */
		if (r == 0 && !p->ao->name && dmaio_buf_kind(buf) != DMAIO_BUF_MEMFD)
			(void)dmaio_buf_set_name(buf, MODEL_BUF_NAME);
		/* buffer 0 is waited for: faulting it in here would only delay its first read (its
		 * pinning does that work). The others are faulted in here while the ones before
		 * are read. */
		if (r == 0 && b > 0)
			prefault(buf);
		pthread_mutex_lock(&p->lock);
		p->alloc_ns += now_ns() - t0;
		if (r < 0) {
			p->err = r;
			if (why.text[0])
				dmaio_reason_set(&p->why, r, "buffer %u of %u: %s", b + 1, p->nbufs,
						 why.text);
			else
				dmaio_reason_set(&p->why, r, "buffer %u of %u (%llu bytes): %s", b + 1,
						 p->nbufs, (unsigned long long)p->sizes[b],
						 strerror(-r));
		} else {
			p->l->bufs[b] = buf;
			p->l->nbufs = b + 1;
			p->l->st.buffer_bytes += p->sizes[b];
			p->ready = b + 1;
		}
		pthread_cond_broadcast(&p->cond);
		pthread_mutex_unlock(&p->lock);
		if (r < 0)
			break;
	}
	return NULL;
}

/* Start allocating. Without a thread (one buffer: nothing to overlap with; or no thread to be
 * had) the buffers are allocated here, before any read. */
static int prep_start(struct prep *p)
{
	sigset_t all, old;
	int r;

	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->cond, NULL);
	if (p->o->bufs || p->nbufs == 0) {
		p->ready = p->nbufs;
		return 0;
	}
	if (p->nbufs == 1) {
		prep_main(p);
		return p->err;
	}
	/* the thread takes no signal of the application's */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	r = pthread_create(&p->thread, NULL, prep_main, p);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r == 0) {
		p->started = true;
		return 0;
	}
	prep_main(p);
	return p->err;
}

/* 0 once buffer b exists; the allocation's error when it failed. wait: block until then
 * (else -EAGAIN while it is being made). */
static int prep_ready(struct prep *p, uint32_t b, bool wait)
{
	int r;

	pthread_mutex_lock(&p->lock);
	if (wait && b >= p->ready && !p->err) {
		uint64_t t0 = now_ns();

		while (b >= p->ready && !p->err)
			pthread_cond_wait(&p->cond, &p->lock);
		p->wait_ns += now_ns() - t0;
	}
	r = b < p->ready ? 0 : p->err ? p->err : -EAGAIN;
	pthread_mutex_unlock(&p->lock);
	return r;
}

/* the allocation's failure, once there is one */
static int prep_error(struct prep *p)
{
	int r;

	pthread_mutex_lock(&p->lock);
	r = p->err;
	pthread_mutex_unlock(&p->lock);
	return r;
}

/* Stop the thread (it finishes the allocation it is in) and wait for it. */
static void prep_finish(struct prep *p)
{
	if (p->started) {
		pthread_mutex_lock(&p->lock);
		p->stop = true;
		pthread_mutex_unlock(&p->lock);
		pthread_join(p->thread, NULL);
		p->started = false;
	}
	pthread_cond_destroy(&p->cond);
	pthread_mutex_destroy(&p->lock);
}

/* drain the queue: reap until every submitted range is back */
static void drain(struct dmaio_queue *q, uint64_t *inflight)
{
	struct dmaio_done d[64] = { { .struct_size = sizeof(struct dmaio_done) } };

	while (*inflight > 0) {
		int n = dmaio_queue_reap(q, d, ARRAY_SIZE(d), 1, -1);

		if (n <= 0)
			break;
		*inflight -= (uint64_t)n;
	}
}

/* the allocation's failure, said in why */
static int prep_why(struct prep *p, int r, struct dmaio_reason *why)
{
	if (p->why.text[0]) /* written before err, under the lock that gave us err */
		return dmaio_reason_set(why, r, "%s", p->why.text);
	return dmaio_reason_set(why, r, "allocating the buffers: %s", strerror(-r));
}

static int run_ranges(struct dmaio_model *m, const struct dmaio_load_opts *o,
		      struct dmaio_load *l, const struct range_vec *rv, uint64_t total,
		      struct prep *prep, struct dmaio_reason *why)
{
	struct dmaio_file **files;
	struct dmaio_queue *q = NULL;
	uint64_t inflight = 0, bytes_done = 0;
	size_t next = 0, completed = 0;
	int r = 0;

	files = calloc(m->nfiles, sizeof(*files));
	if (!files)
		return dmaio_reason_set(why, -ENOMEM, "out of memory");
	for (size_t i = 0; i < rv->n; i++) {
		uint32_t f = rv->r[i].file;

		if (files[f])
			continue;
		r = dmaio_file_open(m->ctx, m->files[f].fd, 0, &files[f]);
		if (r < 0) {
			dmaio_reason_set(why, r, "file %u: registering it for the load: %s", f,
					 strerror(-r));
			goto out;
		}
	}
	r = dmaio_queue_new(m->ctx, o->depth, 0, &q);
	if (r < 0) {
		dmaio_reason_set(why, r, "a queue of depth %u: %s", o->depth, strerror(-r));
		goto out;
	}
	while (completed < rv->n) {
		struct dmaio_io ios[32];
		struct dmaio_done d[64] = { { .struct_size = sizeof(struct dmaio_done) } };
		struct dmaio_progress pr = { .struct_size = sizeof(struct dmaio_progress) };
		unsigned nio = 0;
		int n;

		r = prep_error(prep); /* a buffer cannot be had: the load fails now */
		if (r < 0) {
			prep_why(prep, r, why);
			break;
		}
		while (next + nio < rv->n && nio < ARRAY_SIZE(ios)) {
			const struct range *g = &rv->r[next + nio];

			/* its buffer is being allocated: read what can be read meanwhile, wait
			 * only when nothing else is in flight */
			r = prep_ready(prep, g->buf, inflight == 0 && nio == 0);
			if (r == -EAGAIN) {
				r = 0;
				break;
			}
			if (r < 0) {
				prep_why(prep, r, why);
				break;
			}
			ios[nio] = (struct dmaio_io){
				.struct_size = sizeof(struct dmaio_io),
				.op = DMAIO_OP_READ,
				.flags = o->rw_flags,
				.buf = l->bufs[g->buf],
				.buf_off = g->buf_off,
				.file = files[g->file],
				.file_off = g->file_off,
				.len = g->len,
				.user_data = next + nio,
			};
			nio++;
		}
		if (r < 0)
			break;
		if (nio > 0) {
			n = dmaio_queue_submit(q, ios, nio);
			if (n < 0 && n != -EAGAIN) {
				const struct range *g = &rv->r[next];

				r = dmaio_reason_set(why, n, "file %u: the queue refused the range "
						     "[%llu, %llu) into buffer %u: %s%s", g->file,
						     (unsigned long long)g->file_off,
						     (unsigned long long)(g->file_off + g->len),
						     g->buf, strerror(-n),
						     n == -EINVAL && o->bufs ? " (opts->bufs of "
						     "another context than the model's?)" : "");
				break;
			}
			if (n > 0) {
				next += (size_t)n;
				inflight += (uint64_t)n;
			}
		}
		n = dmaio_queue_reap(q, d, ARRAY_SIZE(d), inflight ? 1 : 0, 50);
		if (n < 0 && n != -ETIME) {
			r = dmaio_reason_set(why, n, "collecting the reads (dmaio_queue_reap): %s",
					     strerror(-n));
			break;
		}
		for (int i = 0; i < n; i++) {
			const struct range *g = &rv->r[d[i].user_data];

			inflight--;
			completed++;
			if (d[i].res < 0) {
				if (r == 0)
					r = dmaio_reason_set(why, (int)d[i].res, "file %u: reading "
							     "[%llu, %llu) into buffer %u: %s",
							     g->file,
							     (unsigned long long)g->file_off,
							     (unsigned long long)(g->file_off +
										  g->len),
							     g->buf, strerror((int)-d[i].res));
				continue;
			}
			if ((uint64_t)d[i].res != g->len) {
				if (r == 0)
					r = dmaio_reason_set(why, -ENODATA, "file %u: [%llu, %llu) "
							     "gave %lld of %llu bytes: the file "
							     "got shorter since dmaio_model_open()",
							     g->file,
							     (unsigned long long)g->file_off,
							     (unsigned long long)(g->file_off +
										  g->len),
							     (long long)d[i].res,
							     (unsigned long long)g->len);
				continue;
			}
			bytes_done += g->len;
			if (d[i].fallbacks)
				l->st.fallbacks += d[i].fallbacks;
			if (o->flags & DMAIO_LOAD_DROP_CACHE)
				(void)posix_fadvise(m->files[g->file].fd, (off_t)g->file_off,
						    (off_t)g->len, POSIX_FADV_DONTNEED);
		}
		if (r < 0)
			break;
		if (o->cancel && *o->cancel) {
			r = dmaio_reason_set(why, -ECANCELED, "cancelled by *opts->cancel after %llu "
					     "of %llu bytes", (unsigned long long)bytes_done,
					     (unsigned long long)total);
			break;
		}
		if (o->progress) {
			uint64_t shown = bytes_done;

			if (dmaio_queue_get_progress(q, &pr) == 0 && pr.bytes_done > shown)
				shown = pr.bytes_done;
			if (shown > total)
				shown = total;
			if (o->progress(o->progress_arg, shown, total) != 0) {
				r = dmaio_reason_set(why, -ECANCELED, "cancelled by the progress "
						     "callback at %llu of %llu bytes",
						     (unsigned long long)shown,
						     (unsigned long long)total);
				break;
			}
		}
	}
	if (r < 0 && q) {
		(void)dmaio_queue_cancel(q, 0, DMAIO_CANCEL_ALL);
		drain(q, &inflight);
	}
	l->st.bytes = bytes_done;
	l->st.ranges = rv->n;
out:
	dmaio_queue_free(q);
	for (unsigned f = 0; f < m->nfiles; f++)
		dmaio_file_close(files[f]);
	free(files);
	return r;
}

DMAIO_EXPORT int dmaio_model_load(struct dmaio_model *model, const struct dmaio_load_opts *opts,
				  struct dmaio_load **load, struct dmaio_reason *reason)
{
	struct dmaio_load_opts o;
	struct dmaio_alloc_opts ao;
	struct range_vec rv = { 0 };
	struct prep prep = { .why = { .struct_size = sizeof(prep.why) } };
	struct dmaio_load *l;
	uint64_t *sizes = NULL, total = 0, t0 = now_ns(), before[DMAIO_PATH_SLOTS] = { 0 };
	unsigned nbufs = 0;
	char sn[MODEL_SHOW_MAX];
	int r;

	if (dmaio_reason_check(reason))
		return -EINVAL;
	dmaio_reason_clear(reason);
	if (!model)
		return dmaio_reason_set(reason, -EINVAL, "no model (model NULL)");
	if (!load)
		return dmaio_reason_set(reason, -EINVAL, "no place for the load (load NULL)");
	memset(&o, 0, sizeof(o));
	o.struct_size = sizeof(o);
	if (opts) {
		r = dmaio_abi_copy_in(&o, sizeof(o), opts, DMAIO_SIZE_LOAD_OPTS);
		if (r)
			return dmaio_reason_set(reason, r, "opts->struct_size %u %s",
						opts->struct_size,
						r == -E2BIG ? "with non-zero bytes this library does "
							      "not know" : "below the 1.0 size");
	}
	r = check_opts(model, &o, reason);
	if (r < 0)
		return r;
	r = read_alloc_opts(o.alloc, &ao, reason);
	if (r < 0)
		return r;
	l = calloc(1, sizeof(*l));
	if (!l)
		return dmaio_reason_set(reason, -ENOMEM, "out of memory");
	l->ntensors = model->n;
	l->pl = malloc((model->n + 1) * sizeof(*l->pl));
	if (!l->pl) {
		free(l);
		return dmaio_reason_set(reason, -ENOMEM, "out of memory");
	}
	for (uint32_t i = 0; i < model->n; i++)
		l->pl[i] = (struct place){ o.select ? -1 : -2, 0, 0 };
	for (uint32_t i = 0; o.select && i < o.nselect; i++) {
		const struct model_tensor *t = &model->t[o.select[i]];

		if (l->pl[o.select[i]].buf == -2) {
			load_free(l);
			return dmaio_reason_set(reason, -EINVAL, "opts->select[%u] %u: tensor \"%s\" "
						"is selected twice", i, o.select[i],
						model_show(sn, t->name, strlen(t->name)));
		}
		l->pl[o.select[i]].buf = -2;
	}
	r = plan(model, &o, &ao, l, &sizes, &nbufs, &rv, reason);
	if (r < 0)
		goto fail;
	l->bufs = calloc(nbufs ? nbufs : 1, sizeof(*l->bufs));
	if (!l->bufs) {
		r = dmaio_reason_set(reason, -ENOMEM, "out of memory");
		goto fail;
	}
	l->borrowed = o.bufs != NULL;
	for (unsigned b = 0; b < nbufs && o.bufs; b++) {
		struct dmaio_stats st = { .struct_size = sizeof(struct dmaio_stats) };

		if (dmaio_buf_get_stats(o.bufs[b], &st) == 0)
			for (size_t p = 0; p < DMAIO_PATH_SLOTS; p++)
				before[p] += st.path_bytes[p];
	}
	for (unsigned b = 0; b < nbufs && o.bufs; b++) {
		l->bufs[b] = o.bufs[b]; /* planned to fit: sizes[b] <= its size */
		l->nbufs = b + 1;
		l->st.buffer_bytes += sizes[b];
	}
	l->st.buffers = nbufs;
	for (size_t i = 0; i < rv.n; i++)
		total += rv.r[i].len;
	prep.m = model;
	prep.o = &o;
	prep.ao = &ao;
	prep.l = l;
	prep.sizes = sizes;
	prep.nbufs = nbufs;
	r = prep_start(&prep);
	if (r < 0)
		prep_why(&prep, r, reason);
	else
		r = run_ranges(model, &o, l, &rv, total, &prep, reason);
	prep_finish(&prep);
	l->st.alloc_ns = prep.alloc_ns;
	l->st.alloc_wait_ns = prep.wait_ns;
	if (r < 0)
		goto fail;
	for (unsigned b = 0; b < l->nbufs; b++) {
		struct dmaio_stats st = { .struct_size = sizeof(struct dmaio_stats) };

		if (dmaio_buf_get_stats(l->bufs[b], &st) == 0)
			for (size_t p = 0; p < DMAIO_PATH_SLOTS; p++)
				l->st.path_bytes[p] += st.path_bytes[p];
	}
	/* the caller's buffers carry the bytes of earlier transfers: this load's are the rest */
	for (size_t p = 0; p < DMAIO_PATH_SLOTS; p++)
		l->st.path_bytes[p] -= before[p];
	l->st.ns = now_ns() - t0;
	free(sizes);
	free(rv.r);
	*load = l;
	return 0;
fail:
	free(sizes);
	free(rv.r);
	load_free(l);
	return r;
}

DMAIO_EXPORT int dmaio_load_get_tensor(const struct dmaio_load *load, uint32_t tensor,
				       struct dmaio_tensor_place *place)
{
	struct dmaio_tensor_place tp = { .struct_size = sizeof(tp) };
	const struct place *p;

	if (!load || dmaio_abi_check_out(place, DMAIO_SIZE_TENSOR_PLACE))
		return -EINVAL;
	if (tensor >= load->ntensors)
		return -ERANGE;
	p = &load->pl[tensor];
	if (p->buf == -1)
		return -ENOENT;
	if (p->buf >= 0) {
		tp.buf = load->bufs[p->buf];
		tp.buf_index = (uint32_t)p->buf;
		tp.offset = p->off;
		tp.nbytes = p->size;
	}
	dmaio_abi_copy_out(place, &tp, sizeof(tp));
	return 0;
}

DMAIO_EXPORT int dmaio_load_buf_count(const struct dmaio_load *load)
{
	if (!load)
		return -EINVAL;
	return (int)load->nbufs;
}

DMAIO_EXPORT int dmaio_load_get_buf(const struct dmaio_load *load, uint32_t index,
				    struct dmaio_buf **buf)
{
	if (!load || !buf)
		return -EINVAL;
	if (index >= load->nbufs)
		return -ERANGE;
	*buf = load->bufs[index];
	return 0;
}

DMAIO_EXPORT int dmaio_load_get_stats(const struct dmaio_load *load, struct dmaio_load_stats *st)
{
	struct dmaio_load_stats ls;

	if (!load || dmaio_abi_check_out(st, DMAIO_SIZE_LOAD_STATS))
		return -EINVAL;
	ls = load->st;
	ls.struct_size = sizeof(ls);
	dmaio_abi_copy_out(st, &ls, sizeof(ls));
	return 0;
}

DMAIO_EXPORT void dmaio_load_free(struct dmaio_load *load)
{
	load_free(load);
}
