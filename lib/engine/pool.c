/* SPDX-License-Identifier: MIT */
/*
 * Worker threads of a context: they run the ops that block (the proposed RW_FILE ioctl, splice)
 * and, when no io_uring can be had, every op with pread/pwrite. Several run at once, so the
 * blocking ops of many ranges overlap. Started on first use; DMAIO_WORKERS sets how many.
 */
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include "engine.h"
#include "../sys/sys.h"

struct dmaio_pool {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct dmaio_op *head, *tail;
	unsigned fork_gen;
	bool stop;
	unsigned nthreads;
	pthread_t threads[64];
};

void dmaio_pool_run(struct dmaio_op *op)
{
	int how;

	if (op->kind == DMAIO_OPK_CALL) {
		uint64_t c0 = dmaio_thread_cpu_ns(), c1;

		op->res = op->call(op);
		c1 = dmaio_thread_cpu_ns();
		op->cpu_ns = c0 && c1 > c0 ? c1 - c0 : 0;
		return;
	}
	do {
		ssize_t r = op->kind == DMAIO_OPK_WRITE ?
			sys_pwrite(op->fd, op->mem + op->got, op->len - op->got, op->off + op->got) :
			sys_pread(op->fd, op->mem + op->got, op->len - op->got, op->off + op->got);

		how = dmaio_op_progress(op, (int)r);
	} while (how == DMAIO_OP_REISSUE);
}

static void *worker(void *arg)
{
	struct dmaio_pool *p = arg;

	pthread_mutex_lock(&p->lock);
	for (;;) {
		struct dmaio_op *op;

		while (!p->head && !p->stop)
			pthread_cond_wait(&p->cond, &p->lock);
		if (!p->head)
			break;
		op = p->head;
		p->head = op->next;
		if (!p->head)
			p->tail = NULL;
		pthread_mutex_unlock(&p->lock);
		dmaio_pool_run(op);
		dmaio_engine_pool_done(op);
		pthread_mutex_lock(&p->lock);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

static struct dmaio_pool *pool_get(struct dmaio_ctx *ctx)
{
	struct dmaio_pool *p;

	pthread_mutex_lock(&ctx->io_lock);
	p = ctx->pool;
	if (p && p->fork_gen != dmaio_fork_generation()) {
		/* inherited through fork: its threads do not exist here, and nothing of it is
		 * used again (its ops are the parent's engines', abandoned too). Its memory is
		 * freed, its lock and condition never touched: a parent's thread may have held
		 * them at the fork. (Dropped without a free, it was lost: valgrind's leak check
		 * failed every forked child that had used the pool.) */
		free(p);
		ctx->pool = p = NULL;
	}
	if (!p) {
		p = calloc(1, sizeof(*p));
		if (p) {
			pthread_mutex_init(&p->lock, NULL);
			pthread_cond_init(&p->cond, NULL);
			p->fork_gen = dmaio_fork_generation();
			ctx->pool = p;
		}
	}
	pthread_mutex_unlock(&ctx->io_lock);
	return p;
}

int dmaio_pool_push(struct dmaio_ctx *ctx, struct dmaio_op *op)
{
	struct dmaio_pool *p = pool_get(ctx);
	unsigned want = ctx->workers ? ctx->workers : 4;

	if (!p)
		return -ENOMEM;
	pthread_mutex_lock(&p->lock);
	if (p->nthreads < MIN(want, ARRAY_SIZE(p->threads))) {
		sigset_t all, old;
		int r;

		/* workers take no signals: the application's handlers run in its own threads */
		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &old);
		r = pthread_create(&p->threads[p->nthreads], NULL, worker, p);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		if (!r)
			p->nthreads++;
		else if (!p->nthreads) {
			pthread_mutex_unlock(&p->lock);
			return -r;
		}
	}
	op->next = NULL;
	if (p->tail)
		p->tail->next = op;
	else
		p->head = op;
	p->tail = op;
	pthread_cond_signal(&p->cond);
	pthread_mutex_unlock(&p->lock);
	return 0;
}

void dmaio_pool_free(struct dmaio_ctx *ctx)
{
	struct dmaio_pool *p = ctx->pool;

	if (!p)
		return;
	ctx->pool = NULL;
	if (p->fork_gen != dmaio_fork_generation())
		return; /* inherited: the threads are the parent's */
	pthread_mutex_lock(&p->lock);
	p->stop = true;
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
	for (unsigned i = 0; i < p->nthreads; i++)
		pthread_join(p->threads[i], NULL);
	pthread_cond_destroy(&p->cond);
	pthread_mutex_destroy(&p->lock);
	free(p);
}
