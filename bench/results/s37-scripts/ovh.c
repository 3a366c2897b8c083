// SPDX-License-Identifier: MIT
// Session 37 driver: 4 KiB (or RS) writes of a whole buffer in scattered order, 32 in flight, then
// fdatasync() of the fd; auto and/or a forced path; the estimates after each pass.
#include <dmaio.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
static uint64_t BUF = 16u << 20;
static double now(clockid_t c){struct timespec t;clock_gettime(c,&t);return t.tv_sec+t.tv_nsec/1e9;}
static unsigned long long cnt[16];
static int pass(struct dmaio_queue *q, struct dmaio_file *f, struct dmaio_buf *b, uint32_t flags, unsigned rs, int wr)
{
	unsigned n = BUF / rs, next = 0, done = 0;
	while (done < n) {
		struct dmaio_io io[32]; unsigned k = 0;
		while (next < n && next - done < 32 && k < 32) {
			unsigned i = (next * 2654435761u) % n; /* scattered */
			memset(&io[k], 0, sizeof io[k]);
			io[k].struct_size = sizeof io[k]; io[k].op = wr ? DMAIO_OP_WRITE : DMAIO_OP_READ; io[k].file = f; io[k].buf = b;
			io[k].file_off = io[k].buf_off = (uint64_t)i * rs; io[k].len = rs; io[k].flags = flags; io[k].user_data = i;
			k++; next++;
		}
		if (k) { int r = dmaio_queue_submit(q, io, k); if (r < 0) { fprintf(stderr, "submit %d\n", r); return r; } }
		struct dmaio_done d[32]; d[0].struct_size = sizeof d[0];
		int r = dmaio_queue_reap(q, d, 32, 1, -1);
		if (r < 0) { fprintf(stderr, "reap %d\n", r); return r; }
		for (int j = 0; j < r; j++) cnt[d[j].path & 15]++;
		for (int j = 0; j < r; j++) if (d[j].res != (int64_t)rs) { fprintf(stderr, "res %lld\n", (long long)d[j].res); return -1; }
		done += r;
	}
	return 0;
}
static void explain(int fd, struct dmaio_buf *b, unsigned rs)
{
	struct dmaio_path_estimate e[8];
	memset(e, 0, sizeof e);
	e[0].struct_size = sizeof e[0];
	int n = dmaio_fd_explain_path(fd, 0, b, 0, rs, DMAIO_OP_WRITE, 0, e, 8);
	for (int i = 0; i < n && i < 8; i++)
		if (!e[i].status)
			printf("  %s%s est %.1f us (ops %.1f bytes %.1f) x%.2f (%u) cpu %.1f\n", e[i].chosen ? "*" : " ", dmaio_path_name(e[i].path),
			       e[i].est_ns / 1e3, e[i].ops_ns / 1e3, e[i].bytes_ns / 1e3, e[i].ratio_milli / 1e3, e[i].samples, e[i].cpu_ns / 1e3);
}
int main(int argc, char **argv)
{
	unsigned rs = argc > 1 ? atoi(argv[1]) : 4096; int wr = argc > 2 ? atoi(argv[2]) : 1; int reps = argc > 3 ? atoi(argv[3]) : 5;
	int forced = argc > 4 ? atoi(argv[4]) : DMAIO_PATH_BUFFERED; int only = argc > 5 ? atoi(argv[5]) : 0;
	struct dmaio_ctx *c; struct dmaio_buf *b; struct dmaio_file *f; struct dmaio_queue *q;
	const char *prov[] = { argc > 6 ? argv[6] : "memfd", NULL }; if (argc > 7) BUF = (uint64_t)atoi(argv[7]) << 20; const char *fn = argc > 8 ? argv[8] : "/var/tmp/ovh.dat";
	struct dmaio_alloc_opts o = { .struct_size = sizeof o, .providers = prov };
	int e1 = dmaio_ctx_new(0, &c); if (e1) return 2; e1 = dmaio_buf_alloc(c, BUF, &o, &b, NULL); if (e1) { fprintf(stderr, "alloc %d\n", e1); return 2; }
	int fd = open(fn, O_RDWR | O_CREAT | O_CLOEXEC, 0600); if (ftruncate(fd, BUF)) return 2;
	if (dmaio_file_open(c, fd, 0, &f) || dmaio_queue_new(c, 32, 0, &q)) return 2;
	for (int r = 0; r < reps; r++)
		for (int m = 0; m < 2; m++) {
			if (only && only != m + 1) continue;
			uint32_t fl = m ? DMAIO_RW_PATH(forced) | DMAIO_RW_NO_FALLBACK : 0;
			double w0 = now(CLOCK_MONOTONIC), c0 = now(CLOCK_PROCESS_CPUTIME_ID);
			if (pass(q, f, b, fl, rs, wr)) return 1;
			if (wr) fdatasync(fd);
			double w1 = now(CLOCK_MONOTONIC), c1 = now(CLOCK_PROCESS_CPUTIME_ID);
			unsigned n = BUF / rs;
			for (int k = 0; k < 16; k++) if (cnt[k]) { printf("[%s %llu] ", dmaio_path_name(k), cnt[k]); cnt[k] = 0; }
			explain(fd, b, rs);
			printf("%s rep %d: %.2f us/req wall, %.2f us/req cpu\n", m ? "forced" : "auto  ", r, (w1 - w0) * 1e6 / n, (c1 - c0) * 1e6 / n);
		}
	dmaio_queue_free(q); dmaio_file_close(f); dmaio_buf_free(b); dmaio_ctx_free(c); close(fd);
	return 0;
}
