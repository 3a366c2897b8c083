/* SPDX-License-Identifier: MIT */
/* Contexts: creation, the process-wide default, environment knobs, logging, statistics. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api.h"
#include "../choose/choose.h"
#include "../engine/engine.h"
#include "../probe/probe.h"
#include "../queue/queue.h"
#include "../sys/sys.h"

static pthread_mutex_t default_lock = PTHREAD_MUTEX_INITIALIZER;
static struct dmaio_ctx *default_ctx;

/* ---- fork() ------------------------------------------------------------------------------
 * A child inherits every lock in the state it had at the fork, and the threads that held them
 * do not exist there: a child whose first call needs a lock another thread of the parent held
 * would wait forever. So fork() takes every lock of the library first (prepare), in the one
 * order (dmaio-types.h, struct dmaio_ctx), and releases them in the parent and in the child: at
 * the fork no thread is inside a critical section, and the state they guard is whole. The
 * price: fork() waits for the critical sections running (short ones, and a probe that is
 * running: the probe lock). Not taken: the worker threads' queue lock (a child never uses the
 * parent's worker pool, pool.c) and the model library's loads (a load in progress belongs to
 * the parent). posix_spawn() and vfork() run no fork handlers and take nothing. */
static pthread_mutex_t all_lock = PTHREAD_MUTEX_INITIALIZER; /* all_ctx */
static struct dmaio_ctx *all_ctx;

static void fork_prepare(void)
{
	pthread_mutex_lock(&default_lock);
	pthread_mutex_lock(&all_lock);
	for (struct dmaio_ctx *c = all_ctx; c; c = c->all_next) {
		pthread_mutex_lock(&c->lock);
		pthread_mutex_lock(&c->bufs_lock);
		for (struct dmaio_buf *b = c->bufs; b; b = b->ctx_next)
			pthread_mutex_lock(&b->lock);
		pthread_mutex_lock(&c->io_lock);
		dmaio_engines_lock_all(c);
	}
}

/* in the parent and in the child alike (the child's one thread is the one that took them) */
static void fork_release(void)
{
	for (struct dmaio_ctx *c = all_ctx; c; c = c->all_next) {
		dmaio_engines_unlock_all(c);
		pthread_mutex_unlock(&c->io_lock);
		for (struct dmaio_buf *b = c->bufs; b; b = b->ctx_next)
			pthread_mutex_unlock(&b->lock);
		pthread_mutex_unlock(&c->bufs_lock);
		pthread_mutex_unlock(&c->lock);
	}
	pthread_mutex_unlock(&all_lock);
	pthread_mutex_unlock(&default_lock);
}

/* The log lock is not taken before the fork: it is held while the application's callback
 * runs, which may call the library on another context (taking that one's locks: the order
 * would depend on the contexts). The child makes it anew instead: it guards only the sink
 * (two pointers, set under it by dmaio_ctx_set_log()) and the callback of a thread the child
 * does not have is not running there. */
static void fork_child(void)
{
	for (struct dmaio_ctx *c = all_ctx; c; c = c->all_next)
		pthread_mutex_init(&c->log_lock, NULL);
	fork_release();
}

/* Registered when the library is loaded, before any context exists: a handler registered
 * while a fork runs its prepare handlers is not called in that fork (glibc 2.36), so one
 * registered by the first context could miss a fork that began before (sys/sysio.c, the fork
 * generation, met that). */
__attribute__((constructor)) static void fork_handlers(void)
{
	pthread_atfork(fork_prepare, fork_release, fork_child);
}

static void ctx_list_add(struct dmaio_ctx *c)
{
	pthread_mutex_lock(&all_lock);
	c->all_next = all_ctx;
	all_ctx = c;
	pthread_mutex_unlock(&all_lock);
}

static void ctx_list_remove(struct dmaio_ctx *c)
{
	pthread_mutex_lock(&all_lock);
	for (struct dmaio_ctx **pp = &all_ctx; *pp; pp = &(*pp)->all_next) {
		if (*pp == c) {
			*pp = c->all_next;
			break;
		}
	}
	pthread_mutex_unlock(&all_lock);
}

/* a buffer joins its context's list once made, and leaves it before it goes */
void dmaio_ctx_add_buf(struct dmaio_ctx *c, struct dmaio_buf *b)
{
	pthread_mutex_lock(&c->bufs_lock);
	b->ctx_prev = NULL;
	b->ctx_next = c->bufs;
	if (c->bufs)
		c->bufs->ctx_prev = b;
	c->bufs = b;
	b->listed = true;
	pthread_mutex_unlock(&c->bufs_lock);
}

void dmaio_ctx_remove_buf(struct dmaio_ctx *c, struct dmaio_buf *b)
{
	pthread_mutex_lock(&c->bufs_lock);
	if (b->listed) {
		if (b->ctx_prev)
			b->ctx_prev->ctx_next = b->ctx_next;
		else
			c->bufs = b->ctx_next;
		if (b->ctx_next)
			b->ctx_next->ctx_prev = b->ctx_prev;
		b->listed = false;
	}
	pthread_mutex_unlock(&c->bufs_lock);
}

DMAIO_EXPORT const char *dmaio_path_name(uint32_t path)
{
	return dmaio_choose_path_name(path);
}

DMAIO_EXPORT int dmaio_path_from_name(const char *name)
{
	return name ? dmaio_choose_path_by_name(name) : -EINVAL;
}

static int ctx_init(struct dmaio_ctx *c)
{
	const char *env;

	memset(c, 0, sizeof(*c));
	if (pthread_mutex_init(&c->lock, NULL))
		return -ENOMEM;
	if (pthread_mutex_init(&c->io_lock, NULL)) {
		pthread_mutex_destroy(&c->lock);
		return -ENOMEM;
	}
	if (pthread_mutex_init(&c->log_lock, NULL)) {
		pthread_mutex_destroy(&c->io_lock);
		pthread_mutex_destroy(&c->lock);
		return -ENOMEM;
	}
	if (pthread_mutex_init(&c->bufs_lock, NULL)) {
		pthread_mutex_destroy(&c->log_lock);
		pthread_mutex_destroy(&c->io_lock);
		pthread_mutex_destroy(&c->lock);
		return -ENOMEM;
	}
	c->udmabuf_fd = -1;
	c->drm_fd = -1;
	env = secure_getenv("DMAIO_DEBUG");
	c->debug = env && *env && strcmp(env, "0");
	c->log_level = c->debug ? DMAIO_LOG_DEBUG : DMAIO_LOG_ERROR;
	env = secure_getenv("DMAIO_PATH");
	if (env && *env) {
		int p = dmaio_choose_path_by_name(env);

		if (p < 0)
			dmaio_log(c, "DMAIO_PATH=%s names no path; ignored", env);
		else
			c->env_path = p;
	}
	env = secure_getenv("DMAIO_COST");
	if (env && *env) {
		if (!strcmp(env, "fixed"))
			c->cost.fixed = true;
		else if (strcmp(env, "measured"))
			dmaio_log(c, "DMAIO_COST=%s is not fixed or measured; ignored", env);
	}
	/* until the base probe measures the machine */
	dmaio_cost_params_fixed(&c->cost.p);
	env = secure_getenv("DMAIO_WORKERS");
	if (env && *env) {
		char *end;
		unsigned long w = strtoul(env, &end, 10);

		if (*end || !w || w > 64)
			dmaio_log(c, "DMAIO_WORKERS=%s is not 1..64; ignored", env);
		else
			c->workers = (unsigned)w;
	}
	c->stats.last_path = DMAIO_PATH_AUTO;
	return 0;
}

/* Every transfer needs the base probe; once it ran, no lock is taken (a heap or DRM probe of
 * another thread holds ctx->lock while it works). */
void dmaio_ctx_probe_base(struct dmaio_ctx *ctx)
{
	if (__atomic_load_n(&ctx->base_done, __ATOMIC_ACQUIRE))
		return;
	pthread_mutex_lock(&ctx->lock);
	dmaio_probe_base_locked(ctx);
	__atomic_store_n(&ctx->base_done, true, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&ctx->lock);
}

DMAIO_EXPORT uint32_t dmaio_version(void)
{
	return DMAIO_VERSION_NUMBER;
}

static int ctx_new(struct dmaio_ctx **ctx)
{
	struct dmaio_ctx *c;
	int r;

	c = malloc(sizeof(*c));
	if (!c)
		return -ENOMEM;
	r = ctx_init(c);
	if (r) {
		free(c);
		return r;
	}
	ctx_list_add(c);
	*ctx = c;
	return 0;
}

DMAIO_EXPORT int dmaio_ctx_new(uint32_t flags, struct dmaio_ctx **ctx)
{
	if (!ctx || (flags & ~DMAIO_CTX_FLAGS_ALL))
		return -EINVAL;
	return ctx_new(ctx);
}

static void ctx_release(struct dmaio_ctx *c)
{
	ctx_list_remove(c);
	dmaio_q_pool_free(c);
	dmaio_pool_free(c);
	for (int i = 0; i < c->nheaps; i++)
		if (c->heaps[i].fd >= 0)
			close(c->heaps[i].fd);
	free(c->heaps);
	if (c->udmabuf_fd >= 0)
		close(c->udmabuf_fd);
	if (c->drm_fd >= 0)
		close(c->drm_fd);
	pthread_mutex_destroy(&c->bufs_lock);
	pthread_mutex_destroy(&c->log_lock);
	pthread_mutex_destroy(&c->io_lock);
	pthread_mutex_destroy(&c->lock);
}

DMAIO_EXPORT void dmaio_ctx_free(struct dmaio_ctx *ctx)
{
	if (!ctx || ctx->is_default)
		return;
	if (ctx->nbufs)
		DBG(ctx, "dmaio_ctx_free: %u buffers still allocated; leaking the context", ctx->nbufs);
	if (ctx->nbufs)
		return;
	ctx_release(ctx);
	free(ctx);
}

struct dmaio_ctx *dmaio_ctx_get(struct dmaio_ctx *ctx)
{
	struct dmaio_ctx *c;

	if (ctx)
		return ctx;
	pthread_mutex_lock(&default_lock);
	if (!default_ctx && !ctx_new(&c)) {
		c->is_default = true;
		default_ctx = c;
	}
	c = default_ctx;
	pthread_mutex_unlock(&default_lock);
	return c;
}

DMAIO_EXPORT int dmaio_ctx_set_log(struct dmaio_ctx *ctx, uint32_t level, dmaio_log_fn fn,
				void *userdata)
{
	struct dmaio_ctx *c;

	if (level < DMAIO_LOG_ERROR || level > DMAIO_LOG_DEBUG)
		return -EINVAL;
	if (!fn && userdata)
		return -EINVAL;
	c = dmaio_ctx_get(ctx);
	if (!c)
		return -ENOMEM;
	/* under log_lock: once this returns, the old callback is not running and never runs again */
	pthread_mutex_lock(&c->log_lock);
	c->log_fn = fn;
	c->log_data = fn ? userdata : NULL;
	__atomic_store_n(&c->log_level, c->debug ? DMAIO_LOG_DEBUG : fn ? (int)level : DMAIO_LOG_ERROR,
			 __ATOMIC_RELAXED);
	pthread_mutex_unlock(&c->log_lock);
	return 0;
}

DMAIO_EXPORT int dmaio_ctx_get_stats(struct dmaio_ctx *ctx, struct dmaio_stats *st)
{
	struct dmaio_ctx *c;

	if (dmaio_abi_check_out(st, DMAIO_SIZE_STATS))
		return -EINVAL;
	c = dmaio_ctx_get(ctx);
	if (!c)
		return -ENOMEM;
	pthread_mutex_lock(&c->io_lock);
	dmaio_abi_copy_out(st, &c->stats, sizeof(c->stats));
	pthread_mutex_unlock(&c->io_lock);
	return 0;
}
