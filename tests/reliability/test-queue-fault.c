/* SPDX-License-Identifier: MIT */
/*
 * Injected faults in the middle of a queue's batch (the fault-injection library: the Nth call of
 * the syscall seam fails). A counting run gives N seam calls for a batch of reads and one of
 * writes; then for samples n of 1..N, the n-th call fails with EIO, with a short count, or with
 * EINTR/EAGAIN (retried). Every range completes exactly once; a range that succeeded is byte-
 * exact; a range that failed reports the bytes before the failure as moved (and they are
 * right), and nothing outside any range is written, in the buffer or in the file.
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
#include "rel.h"

extern unsigned long dmaio_fault_calls;
extern unsigned long dmaio_fault_nth;
extern int dmaio_fault_err;

#define NR 48
#define FSIZE (3u << 20)
#define BSIZE (8u << 20)

static struct test_args args;

struct range {
	int file;
	uint64_t foff, boff, len;
};

static struct range ranges[NR];
static int src[2], dst;
static struct dmaio_file *rsrc[2], *rdst;
static struct dmaio_buf *buf;
static uint8_t *map;

static void make_ranges(void)
{
	uint64_t boff = 0, woff = 0;

	srand(7);
	for (int i = 0; i < NR; i++) {
		struct range *r = &ranges[i];
		uint64_t len = (uint64_t)(rand() % 3 == 0 ? rand() % 4096 + 1 :
					  rand() % (256 << 10) + 4096);

		r->file = i % 2;
		r->foff = (uint64_t)rand() % (FSIZE - len);
		if (i % 7 == 0)
			r->foff = FSIZE - len / 2; /* across end of file: short read */
		r->foff -= i % 3 == 0 ? r->foff % 4096 : 0;
		r->boff = boff + (uint64_t)(rand() % 64);
		r->len = len;
		boff = r->boff + len + 4096; /* guard gap between ranges */
		(void)woff;
	}
	assert_true(boff < BSIZE);
}

/* One batch; every problem reported with test_fail(). Returns true when every check held. */
static bool batch(bool write, const char *what)
{
	struct dmaio_queue *q;
	struct dmaio_io io[NR] = { { .struct_size = sizeof(struct dmaio_io) } };
	struct dmaio_done d[NR] = { { .struct_size = sizeof(struct dmaio_done) } };
	int seen[NR] = { 0 }, n = 0;
	unsigned before = test_failures();

	if (write) {
		pat_fill(map, BSIZE, SEED_BUF, 0);
		assert_int_equal(file_fill_pattern(dst, 0, BSIZE + FSIZE, SEED_DEST), 0);
	} else {
		pat_fill(map, BSIZE, SEED_GUARD, 0);
	}
	assert_int_equal(dmaio_queue_new(NULL, 8, 0, &q), 0);
	for (int i = 0; i < NR; i++) {
		struct range *r = &ranges[i];

		/* writes go to the buffer offset in dst: disjoint, with gaps */
		io[i] = (struct dmaio_io){ .struct_size = sizeof(struct dmaio_io), .op = write ? DMAIO_OP_WRITE : DMAIO_OP_READ,
					   .buf = buf, .buf_off = r->boff,
					   .file = write ? rdst : rsrc[r->file],
					   .file_off = (int64_t)(write ? r->boff : r->foff),
					   .len = r->len, .user_data = (uint64_t)i };
	}
	for (int sent = 0; sent < NR;) {
		int k = dmaio_queue_submit(q, io + sent, (unsigned)(NR - sent));

		if (k == -EAGAIN)
			k = 0;
		if (k < 0) {
			test_fail("%s: submit %s", what, test_errname(k));
			dmaio_queue_free(q);
			return false;
		}
		sent += k;
		d[n].struct_size = sizeof(d[n]);
		k = dmaio_queue_reap(q, d + n, (unsigned)(NR - n), 0, 0);
		if (k < 0) {
			test_fail("%s: reap (no wait) %s", what, test_errname(k));
			dmaio_queue_free(q);
			return false;
		}
		n += k;
	}
	while (n < NR) {
		int k;

		d[n].struct_size = sizeof(d[n]);
		k = dmaio_queue_reap(q, d + n, (unsigned)(NR - n), 1, 60000);

		if (k <= 0) {
			test_fail("%s: reap %s after %d completions", what, test_errname(k), n);
			dmaio_queue_free(q);
			return false;
		}
		n += k;
	}
	dmaio_queue_free(q);
	for (int j = 0; j < NR; j++) {
		int i = (int)d[j].user_data;
		struct range *r;
		uint64_t expect, ok_len;

		if (i < 0 || i >= NR || seen[i]++) {
			test_fail("%s: completion for range %d twice or unknown", what, i);
			continue;
		}
		r = &ranges[i];
		expect = write ? r->len : FSIZE > r->foff ? (FSIZE - r->foff < r->len ? FSIZE - r->foff : r->len) : 0;
		if (d[j].res >= 0 && (uint64_t)d[j].res != expect)
			test_fail("%s: range %d: res %lld, expected %llu", what, i,
				  (long long)d[j].res, (unsigned long long)expect);
		if (d[j].res < 0 && d[j].res != -EIO)
			test_fail("%s: range %d: res %s", what, i, test_errname(d[j].res));
		ok_len = d[j].res >= 0 ? (uint64_t)d[j].res : d[j].done;
		if (ok_len > expect) {
			test_fail("%s: range %d: done %llu > %llu", what, i,
				  (unsigned long long)ok_len, (unsigned long long)expect);
			continue;
		}
		if (write) {
			if (file_check_pattern(dst, (off_t)r->boff, ok_len, SEED_BUF,
					       r->boff) != -1)
				test_fail("%s: range %d: file bytes wrong", what, i);
		} else if (pat_check(map + r->boff, ok_len, SEED_FILE + (uint64_t)r->file,
				     r->foff) >= 0) {
			test_fail("%s: range %d: buffer bytes wrong", what, i);
		}
	}
	/* nothing outside the ranges (reads: the buffer; writes: the file) */
	for (int i = 0; i <= NR; i++) {
		uint64_t from = i ? ranges[i - 1].boff + ranges[i - 1].len : 0;
		uint64_t to = i < NR ? ranges[i].boff : BSIZE;

		if (write ? file_check_pattern(dst, (off_t)from, to - from, SEED_DEST, from) != -1 :
			    pat_check(map + from, to - from, SEED_GUARD, from) >= 0)
			test_fail("%s: bytes between ranges %d and %d written", what, i - 1, i);
	}
	return test_failures() == before;
}

static void run_faults(bool write)
{
	const char *dir = write ? "write" : "read";
	unsigned long calls, step;
	unsigned before = test_failures();
	int failures = 0, runs = 0;
	static const int errs[] = { EIO, 0, EINTR, EAGAIN };

	dmaio_fault_nth = 0;
	dmaio_fault_calls = 0;
	rel_set_label("%s batch: counting run", dir);
	assert_true(batch(write, "counting"));
	calls = dmaio_fault_calls;
	step = calls / (args.quick ? 12 : 40) + 1;
	for (unsigned long nth = 1; nth <= calls; nth += step) {
		for (size_t e = 0; e < sizeof(errs) / sizeof(errs[0]); e++) {
			char what[96];

			snprintf(what, sizeof(what), "%s batch, call %lu of %lu fails with %s", dir, nth,
				 calls, errs[e] ? strerror(errs[e]) : "a short count");
			rel_set_label("%s", what);
			dmaio_fault_err = errs[e];
			dmaio_fault_calls = 0;
			dmaio_fault_nth = nth;
			failures += !batch(write, what);
			dmaio_fault_nth = 0;
			runs++;
		}
	}
	dmaio_fault_err = 0;
	printf("# %s batch of %d ranges: %lu seam calls; %d runs with a fault injected, %d failed\n",
	       dir, NR, calls, runs, failures);
	assert_no_failures_since(before);
}

static void test_read_faults(void **state)
{
	(void)state;
	run_faults(false);
}

static void test_write_faults(void **state)
{
	(void)state;
	run_faults(true);
}

static int setup(void **state)
{
	(void)state;
	/* exits 77 where the provider is missing on the host; fails where devices are expected */
	assert_rc_equal(test_alloc_or_skip(NULL, args.heap_name, BSIZE, 0, &buf), 0);
	assert_int_equal(dmaio_buf_map(buf, (void **)&map), 0);
	for (int f = 0; f < 2; f++) {
		src[f] = test_tmpfile(NULL, NULL, 0);
		assert_int_equal(file_fill_pattern(src[f], 0, FSIZE, SEED_FILE + (uint64_t)f), 0);
		assert_int_equal(dmaio_file_open(NULL, src[f], 0, &rsrc[f]), 0);
	}
	dst = test_tmpfile(NULL, NULL, 0);
	assert_int_equal(dmaio_file_open(NULL, dst, 0, &rdst), 0);
	make_ranges();
	return 0;
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_read_faults),
		cmocka_unit_test(test_write_faults),
	};

	test_parse_args(argc, argv, &args, "memfd");
	rel_install_crash_label();
	rel_watchdog(600);
	return cmocka_run_group_tests_name("queue-fault", tests, setup, NULL);
}
