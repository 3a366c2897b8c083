/* SPDX-License-Identifier: MIT */
/*
 * Sizes that cannot fit are refused before the kernel is asked (a 6.12 system heap would
 * allocate page by page until the OOM killer fires, and dma-buf pages are in no process's RSS):
 * more than the machine's memory and SIZE_MAX / 2 give -ENOMEM on every provider, more than the
 * CMA area gives -ENOMEM on the CMA heap, more than udmabuf's size_limit_mb -EFBIG. Each refusal
 * is fast and leaves the system's free memory where it was.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common.h"

static struct test_args args;

static uint64_t meminfo(const char *key)
{
	long kib = test_meminfo(key);

	assert_true(kib >= 0);
	return (uint64_t)kib << 10;
}

/* dmaio_buf_alloc(size) must fail with want, at once, without taking memory */
static void refused(uint64_t size, int want, const char *what)
{
	struct dmaio_buf *b = NULL;
	uint64_t before = meminfo("MemFree");
	double t0 = test_now();
	int r = t_alloc(NULL, args.heap_name, (size_t)size, 0, &b);
	double dt = test_now() - t0;
	uint64_t after = meminfo("MemFree");

	printf("# %s: %llu MiB from %s: %d (%s) in %.3f s, MemFree %lld MiB\n", what,
	       (unsigned long long)(size >> 20), args.heap_name, r, test_errname(r), dt,
	       ((long long)after - (long long)before) / (1 << 20));
	if (r == 0)
		dmaio_buf_free(b);
	assert_int_equal(r, want);
	assert_null(b);
	assert_true(dt < 5.0);
	/* nothing taken: within 256 MiB (other processes move it too) */
	assert_true(after + (256ull << 20) >= before);
}

static void test_limits(void **state)
{
	uint64_t total = meminfo("MemTotal"), page = 4096;
	struct dmaio_buf *b;

	(void)state;
	/* the provider exists and works (else 77 on the host; in the VM a failure) */
	assert_rc_equal(test_alloc_or_skip(NULL, args.heap_name, page, 0, &b), 0);
	dmaio_buf_free(b);
	assert_true(total > 0);
	refused(total + page, -ENOMEM, "more than MemTotal");
	refused(SIZE_MAX / 2, -ENOMEM, "SIZE_MAX / 2");
	if (!strcmp(args.heap, "cma")) {
		uint64_t cma = meminfo("CmaTotal");

		refused(cma + page, -ENOMEM, "more than CmaTotal");
	}
	if (!strcmp(args.heap, "udmabuf")) {
		FILE *f = fopen("/sys/module/udmabuf/parameters/size_limit_mb", "re");
		unsigned long long mb = 0;

		assert_non_null(f);
		assert_int_equal(fscanf(f, "%llu", &mb), 1);
		fclose(f);
		if ((mb << 20) + page < total)
			refused((mb << 20) + page, -EFBIG, "more than size_limit_mb");
	}
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_limits),
	};

	test_parse_args(argc, argv, &args, "memfd");
	return cmocka_run_group_tests_name("limits", tests, NULL, NULL);
}
