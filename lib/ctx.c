/* SPDX-License-Identifier: MIT */
/* Contexts: creation, the process-wide default, environment knobs, logging, statistics. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dmaio-private.h"

static pthread_mutex_t default_lock = PTHREAD_MUTEX_INITIALIZER;
static struct dmaio_ctx *default_ctx;

static const char *const path_names[DMAIO_PATH_COUNT] = {
	[DMAIO_PATH_AUTO] = "auto",
	[DMAIO_PATH_RW_FILE] = "rw-file",
	[DMAIO_PATH_URING_DMABUF] = "uring-dmabuf",
	[DMAIO_PATH_UDMABUF_DIRECT] = "udmabuf-direct",
	[DMAIO_PATH_BOUNCE_DIRECT] = "bounce-direct",
	[DMAIO_PATH_BUFFERED] = "buffered",
	[DMAIO_PATH_SENDFILE] = "sendfile",
};

DMAIO_EXPORT const char *dmaio_path_name(int path)
{
	if (path < 0 || path >= DMAIO_PATH_COUNT)
		return NULL;
	return path_names[path];
}

DMAIO_EXPORT int dmaio_path_from_name(const char *name)
{
	if (!name)
		return -EINVAL;
	for (int i = 0; i < DMAIO_PATH_COUNT; i++)
		if (!strcmp(name, path_names[i]))
			return i;
	return -EINVAL;
}

void dmaio_log(const struct dmaio_ctx *ctx, const char *fmt, ...)
{
	char line[512];
	va_list ap;
	int n;

	(void)ctx;
	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n > sizeof(line) - 2)
		n = sizeof(line) - 2;
	line[n++] = '\n';
	/* one write per line so lines of concurrent threads do not interleave */
	(void)!write(STDERR_FILENO, "dmaio: ", 7);
	(void)!write(STDERR_FILENO, line, (size_t)n);
}

static int ctx_init(struct dmaio_ctx *c)
{
	const char *env;

	memset(c, 0, sizeof(*c));
	if (pthread_mutex_init(&c->lock, NULL))
		return -ENOMEM;
	c->udmabuf_fd = -1;
	c->drm_fd = -1;
	env = secure_getenv("DMAIO_DEBUG");
	c->debug = env && *env && strcmp(env, "0");
	env = secure_getenv("DMAIO_PATH");
	if (env && *env) {
		int p = dmaio_path_from_name(env);

		if (p < 0)
			dmaio_log(c, "DMAIO_PATH=%s names no path; ignored", env);
		else
			c->env_path = p;
	}
	c->stats.last_path = DMAIO_PATH_AUTO;
	return 0;
}

DMAIO_EXPORT int dmaio_ctx_new(struct dmaio_ctx **ctx)
{
	struct dmaio_ctx *c;
	int r;

	if (!ctx)
		return -EINVAL;
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

static void ctx_release(struct dmaio_ctx *c)
{
	dmaio_engines_free(c);
	for (int i = 0; i < c->nheaps; i++)
		if (c->heaps[i].fd >= 0)
			close(c->heaps[i].fd);
	free(c->heaps);
	if (c->udmabuf_fd >= 0)
		close(c->udmabuf_fd);
	if (c->drm_fd >= 0)
		close(c->drm_fd);
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
	if (!default_ctx && !dmaio_ctx_new(&c)) {
		c->is_default = true;
		default_ctx = c;
	}
	c = default_ctx;
	pthread_mutex_unlock(&default_lock);
	return c;
}

void dmaio_stats_add(struct dmaio_stats *dst, const struct dmaio_stats *src)
{
	dst->bytes_read += src->bytes_read;
	dst->bytes_written += src->bytes_written;
	dst->ops += src->ops;
	dst->errors += src->errors;
	dst->ns += src->ns;
	dst->fallbacks += src->fallbacks;
	dst->unaligned_bytes += src->unaligned_bytes;
	for (int i = 0; i < DMAIO_PATH_COUNT; i++)
		dst->path_bytes[i] += src->path_bytes[i];
	dst->last_path = src->last_path;
	dst->last_result = src->last_result;
	dst->last_done = src->last_done;
}

DMAIO_EXPORT int dmaio_ctx_stats(struct dmaio_ctx *ctx, struct dmaio_stats *st)
{
	struct dmaio_ctx *c;

	if (!st)
		return -EINVAL;
	c = dmaio_ctx_get(ctx);
	if (!c)
		return -ENOMEM;
	pthread_mutex_lock(&c->lock);
	*st = c->stats;
	pthread_mutex_unlock(&c->lock);
	return 0;
}
