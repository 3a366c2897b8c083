/* SPDX-License-Identifier: MIT */
/*
 * The per-context log callback (dmaio_ctx_set_log(), issue 14 item 4): with DMAIO_DEBUG=1 the
 * messages of a forced-path read reach the callback with their levels (the call trace at
 * DMAIO_LOG_DEBUG, a forced path that cannot serve at DMAIO_LOG_INFO), the level argument
 * filters them without DMAIO_DEBUG, every argument is checked, and a NULL callback restores the
 * stderr default ("dmaio: " lines) with the old callback never called again.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "common.h"

#define SIZE (256u * 1024)
#define MAX_MSGS 256

struct sink {
	int n;
	int level[MAX_MSGS];
	char msg[MAX_MSGS][512];
};

static void collect(void *userdata, uint32_t level, const char *msg)
{
	struct sink *s = userdata;

	if (s->n < MAX_MSGS) {
		s->level[s->n] = level;
		snprintf(s->msg[s->n], sizeof(s->msg[0]), "%s", msg);
	}
	s->n++;
}

/* index of the first message containing @needle at @level, or -1 */
static int find(const struct sink *s, int level, const char *needle)
{
	for (int i = 0; i < s->n && i < MAX_MSGS; i++)
		if (s->level[i] == level && strstr(s->msg[i], needle))
			return i;
	return -1;
}

static int count_level(const struct sink *s, int level)
{
	int n = 0;

	for (int i = 0; i < s->n && i < MAX_MSGS; i++)
		n += s->level[i] == level;
	return n;
}

static void dump(const struct sink *s)
{
	for (int i = 0; i < s->n && i < MAX_MSGS; i++)
		printf("# [%d] %s\n", s->level[i], s->msg[i]);
}

/* a context made with DMAIO_DEBUG as given, a memfd buffer and a pattern file */
static void setup_io(const char *debug, struct dmaio_ctx **ctx, struct dmaio_buf **b, int *fd)
{
	unsetenv("DMAIO_PATH");
	if (debug)
		setenv("DMAIO_DEBUG", debug, 1);
	else
		unsetenv("DMAIO_DEBUG");
	assert_int_equal(dmaio_ctx_new(0, ctx), 0);
	unsetenv("DMAIO_DEBUG");
	assert_int_equal(t_alloc(*ctx, "memfd", SIZE, 0, b), 0);
	*fd = test_tmpfile(NULL, NULL, 0);
	assert_true(*fd >= 0);
	assert_int_equal(file_fill_pattern(*fd, 0, SIZE, SEED_FILE), 0);
}

static void teardown_io(struct dmaio_ctx *ctx, struct dmaio_buf *b, int fd)
{
	close(fd);
	dmaio_buf_free(b);
	dmaio_ctx_free(ctx);
}

/* DMAIO_DEBUG=1: a forced buffered read, traced at DEBUG, data intact; a forced path that cannot
 * serve a memfd buffer with NO_FALLBACK: INFO "cannot serve", -EOPNOTSUPP */
static void test_debug_forced_read(void **state)
{
	static struct sink s;
	struct dmaio_ctx *ctx;
	struct dmaio_buf *b;
	void *map;
	ssize_t r;
	int fd;

	(void)state;
	memset(&s, 0, sizeof(s));
	setup_io("1", &ctx, &b, &fd);
	/* level ERROR asked, DMAIO_DEBUG raises it: every level arrives */
	assert_int_equal(dmaio_ctx_set_log(ctx, DMAIO_LOG_ERROR, collect, &s), 0);
	assert_int_equal(dmaio_buf_map(b, &map), 0);
	r = dmaio_fd_read(fd, 0, b, 0, SIZE, DMAIO_RW_PATH(DMAIO_PATH_BUFFERED) | DMAIO_RW_NO_FALLBACK, NULL);
	dump(&s);
	assert_int_equal(r, SIZE);
	assert_true(pat_check(map, SIZE, SEED_FILE, 0) < 0);
	assert_true(find(&s, DMAIO_LOG_DEBUG, "read file=") >= 0);
	assert_true(find(&s, DMAIO_LOG_DEBUG, "path buffered") >= 0);
	assert_true(find(&s, DMAIO_LOG_DEBUG, "via buffered") >= 0);
	assert_int_equal(count_level(&s, DMAIO_LOG_INFO), 0);
	assert_int_equal(count_level(&s, DMAIO_LOG_ERROR), 0);
	for (int i = 0; i < s.n; i++)
		assert_null(strchr(s.msg[i], '\n'));

	/* uring-dmabuf needs a dma-buf; a memfd buffer is not one */
	s.n = 0;
	r = dmaio_fd_read(fd, 0, b, 0, SIZE, DMAIO_RW_PATH(DMAIO_PATH_URING_DMABUF) | DMAIO_RW_NO_FALLBACK, NULL);
	dump(&s);
	assert_int_equal(r, -EOPNOTSUPP);
	assert_true(find(&s, DMAIO_LOG_INFO, "forced path uring-dmabuf cannot serve") >= 0);
	assert_true(find(&s, DMAIO_LOG_DEBUG, "read file=") >= 0);
	teardown_io(ctx, b, fd);
}

/* without DMAIO_DEBUG the level argument decides */
static void test_levels(void **state)
{
	static struct sink s;
	unsigned bad = DMAIO_RW_PATH(DMAIO_PATH_URING_DMABUF) | DMAIO_RW_NO_FALLBACK;
	struct dmaio_ctx *ctx;
	struct dmaio_buf *b;
	int fd;

	(void)state;
	memset(&s, 0, sizeof(s));
	setup_io(NULL, &ctx, &b, &fd);
	assert_int_equal(dmaio_ctx_set_log(ctx, DMAIO_LOG_ERROR, collect, &s), 0);
	assert_int_equal(dmaio_fd_read(fd, 0, b, 0, SIZE, bad, NULL), -EOPNOTSUPP);
	assert_int_equal(s.n, 0);

	assert_int_equal(dmaio_ctx_set_log(ctx, DMAIO_LOG_INFO, collect, &s), 0);
	assert_int_equal(dmaio_fd_read(fd, 0, b, 0, SIZE, bad, NULL), -EOPNOTSUPP);
	dump(&s);
	assert_true(find(&s, DMAIO_LOG_INFO, "cannot serve") >= 0);
	assert_int_equal(count_level(&s, DMAIO_LOG_DEBUG), 0);

	s.n = 0;
	assert_int_equal(dmaio_ctx_set_log(ctx, DMAIO_LOG_DEBUG, collect, &s), 0);
	assert_int_equal(dmaio_fd_read(fd, 0, b, 0, SIZE, DMAIO_RW_PATH(DMAIO_PATH_BUFFERED), NULL), SIZE);
	assert_true(find(&s, DMAIO_LOG_DEBUG, "via buffered") >= 0);
	teardown_io(ctx, b, fd);
}

/* NULL restores stderr: the old callback gets nothing more, stderr gets "dmaio: " lines */
static void test_null_restores_stderr(void **state)
{
	static struct sink s;
	struct dmaio_ctx *ctx;
	struct dmaio_buf *b;
	char text[8192];
	int fd, out, saved;
	ssize_t n;

	(void)state;
	memset(&s, 0, sizeof(s));
	setup_io("1", &ctx, &b, &fd);
	assert_int_equal(dmaio_ctx_set_log(ctx, DMAIO_LOG_DEBUG, collect, &s), 0);
	assert_int_equal(dmaio_ctx_set_log(ctx, DMAIO_LOG_DEBUG, NULL, NULL), 0);
	out = test_tmpfile(NULL, NULL, 0);
	assert_true(out >= 0);
	fflush(stderr);
	saved = dup(STDERR_FILENO);
	assert_true(saved >= 0);
	assert_int_equal(dup2(out, STDERR_FILENO), STDERR_FILENO);
	n = dmaio_fd_read(fd, 0, b, 0, SIZE, DMAIO_RW_PATH(DMAIO_PATH_BUFFERED), NULL);
	assert_int_equal(dup2(saved, STDERR_FILENO), STDERR_FILENO);
	close(saved);
	assert_int_equal(n, SIZE);
	assert_int_equal(s.n, 0);
	n = pread(out, text, sizeof(text) - 1, 0);
	assert_true(n > 0);
	text[n] = '\0';
	printf("# stderr got:\n%s", text);
	assert_non_null(strstr(text, "dmaio: read file="));
	assert_non_null(strstr(text, "via buffered\n"));
	close(out);
	teardown_io(ctx, b, fd);
}

static void test_arguments(void **state)
{
	static struct sink s;
	struct dmaio_ctx *ctx;

	(void)state;
	assert_int_equal(dmaio_ctx_new(0, &ctx), 0);
	assert_int_equal(dmaio_ctx_set_log(ctx, 0, collect, &s), -EINVAL);
	assert_int_equal(dmaio_ctx_set_log(ctx, DMAIO_LOG_DEBUG + 1, collect, &s), -EINVAL);
	assert_int_equal(dmaio_ctx_set_log(ctx, -1, NULL, NULL), -EINVAL);
	assert_int_equal(dmaio_ctx_set_log(ctx, DMAIO_LOG_INFO, NULL, &s), -EINVAL);
	assert_int_equal(dmaio_ctx_set_log(ctx, DMAIO_LOG_INFO, NULL, NULL), 0);
	/* the default context */
	assert_int_equal(dmaio_ctx_set_log(NULL, DMAIO_LOG_DEBUG, collect, &s), 0);
	assert_int_equal(dmaio_ctx_set_log(NULL, DMAIO_LOG_ERROR, NULL, NULL), 0);
	dmaio_ctx_free(ctx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_debug_forced_read),
		cmocka_unit_test(test_levels),
		cmocka_unit_test(test_null_restores_stderr),
		cmocka_unit_test(test_arguments),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
