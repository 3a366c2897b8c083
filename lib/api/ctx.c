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
