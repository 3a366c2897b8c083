// SPDX-License-Identifier: MIT
/*
 * dmaio-top: who holds the system's dma-buf memory. Totals per exporter, per process (a shared
 * buffer counted once system-wide, and per process as private/shared and PSS), per buffer name,
 * per cgroup with its memory charge; CMA use; a refreshing view; JSON; a diff against a saved
 * snapshot for leak hunting.
 * See dmaio-top(1).
 */
#include <dmaio-account.h>

#include <errno.h>
#include <fnmatch.h>
#include <getopt.h>
#include <inttypes.h>
#include <jansson.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct opts {
	uint32_t source;
	uint32_t flags;
	int32_t pid;
	const char *name_glob;
	const char *exp_glob;
	const char *save;
	const char *diff;
	const char *proc_root;
	bool json;
	bool buffers;
	double delay;
	long count;
};

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static const char *human(uint64_t v, char *b, size_t n)
{
	static const char *u[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	double d = (double)v;
	int i = 0;

	while (d >= 1024 && i < 4) {
		d /= 1024;
		i++;
	}
	if (i == 0)
		snprintf(b, n, "%" PRIu64 " B", v);
	else
		snprintf(b, n, "%.1f %s", d, u[i]);
	return b;
}

static bool buf_selected(const struct opts *o, const struct dmaio_snapshot_buffer *b)
{
	if (o->name_glob && fnmatch(o->name_glob, b->name, 0))
		return false;
	if (o->exp_glob && fnmatch(o->exp_glob, b->exporter, 0))
		return false;
	return true;
}

/* ---- the snapshot as JSON (also what --save writes and --diff reads) ---- */

static json_t *snapshot_json(const struct opts *o, struct dmaio_snapshot *s,
			     const struct dmaio_snapshot_info *in, const char *reason)
{
	json_t *root = json_object(), *bufs = json_array(), *exps = json_object(),
	       *names = json_object(), *procs = json_array(), *flags = json_array();
	uint64_t bytes = 0, kbytes = 0, nb = 0;
	uint64_t *pbytes = calloc(in->nprocesses ? in->nprocesses : 1, 4 * sizeof(uint64_t));
	uint32_t *pcount = calloc(in->nprocesses ? in->nprocesses : 1, sizeof(uint32_t));
	/* per cgroup: the selected buffers its processes hold, each once (cmark: 1 + the last
	 * buffer counted), and its processes holding one of them */
	uint64_t *cbytes = calloc(in->ncgroups ? in->ncgroups : 1, sizeof(uint64_t));
	uint32_t *cbufs = calloc(in->ncgroups ? in->ncgroups : 1, sizeof(uint32_t));
	uint32_t *cmark = calloc(in->ncgroups ? in->ncgroups : 1, sizeof(uint32_t));
	uint32_t *cprocs = calloc(in->ncgroups ? in->ncgroups : 1, sizeof(uint32_t));
	uint32_t *pcg = calloc(in->nprocesses ? in->nprocesses : 1, sizeof(uint32_t));
	json_t *cgroups = json_array();

	if (!pbytes || !pcount || !cbytes || !cbufs || !cmark || !cprocs || !pcg) {
		free(pbytes);
		free(pcount);
		free(cbytes);
		free(cbufs);
		free(cmark);
		free(cprocs);
		free(pcg);
		return NULL;
	}
	for (uint32_t i = 0; i < in->nprocesses; i++) {
		struct dmaio_snapshot_process p = { .struct_size = sizeof(p) };

		dmaio_snapshot_get_process(s, i, &p);
		pcg[i] = p.cgroup < in->ncgroups ? p.cgroup : 0;
	}
	for (uint32_t i = 0; i < in->nbuffers; i++) {
		struct dmaio_snapshot_buffer b = { .struct_size = sizeof(b) };
		json_t *jb, *hs = json_array(), *e;

		dmaio_snapshot_get_buffer(s, i, &b);
		if (!buf_selected(o, &b))
			continue;
		nb++;
		bytes += b.size;
		if (b.flags & DMAIO_SNAPSHOT_BUF_KERNEL)
			kbytes += b.size;
		for (uint32_t k = 0; k < b.nprocesses; k++) {
			struct dmaio_snapshot_holder h = { .struct_size = sizeof(h) };

			dmaio_snapshot_get_holder(s, b.first_holder + k, &h);
			json_array_append_new(hs, json_pack("{s:i,s:i,s:i,s:I}", "pid", h.pid, "fds",
							    h.fds, "maps", h.maps, "mapped_bytes",
							    (json_int_t)h.mapped_bytes));
			pcount[h.process]++;
			pbytes[4 * h.process] += b.size;
			pbytes[4 * h.process + (b.nprocesses > 1 ? 2 : 1)] += b.size;
			pbytes[4 * h.process + 3] += b.size / b.nprocesses;
			if (in->ncgroups && cmark[pcg[h.process]] != i + 1) {
				cmark[pcg[h.process]] = i + 1;
				cbufs[pcg[h.process]]++;
				cbytes[pcg[h.process]] += b.size;
			}
		}
		jb = json_pack("{s:I,s:I,s:s,s:s,s:b,s:b,s:o}", "inode", (json_int_t)b.inode, "size",
			       (json_int_t)b.size, "exporter", b.exporter, "name", b.name, "kernel",
			       !!(b.flags & DMAIO_SNAPSHOT_BUF_KERNEL), "partial",
			       !!(b.flags & DMAIO_SNAPSHOT_BUF_PARTIAL), "holders", hs);
		json_array_append_new(bufs, jb);
		const char *ek = b.exporter[0] ? b.exporter : "(unknown)";

		e = json_object_get(exps, ek);
		if (!e) {
			e = json_pack("{s:s,s:i,s:I}", "exporter", ek, "buffers", 0, "bytes",
				      (json_int_t)0);
			json_object_set_new(exps, ek, e);
		}
		json_object_set_new(e, "buffers",
				    json_integer(json_integer_value(json_object_get(e, "buffers")) + 1));
		json_object_set_new(e, "bytes", json_integer(json_integer_value(json_object_get(e,
							"bytes")) + (json_int_t)b.size));
		e = json_object_get(names, b.name);
		if (!e) {
			e = json_pack("{s:s,s:i,s:I}", "name", b.name, "buffers", 0, "bytes",
				      (json_int_t)0);
			json_object_set_new(names, b.name, e);
		}
		json_object_set_new(e, "buffers",
				    json_integer(json_integer_value(json_object_get(e, "buffers")) + 1));
		json_object_set_new(e, "bytes", json_integer(json_integer_value(json_object_get(e,
							"bytes")) + (json_int_t)b.size));
	}
	for (uint32_t i = 0; i < in->nprocesses; i++) {
		struct dmaio_snapshot_process p = { .struct_size = sizeof(p) };

		if (!pcount[i])
			continue;
		dmaio_snapshot_get_process(s, i, &p);
		struct dmaio_snapshot_cgroup g = { .struct_size = sizeof(g) };

		if (in->ncgroups) {
			cprocs[pcg[i]]++;
			dmaio_snapshot_get_cgroup(s, pcg[i], &g);
		}
		json_array_append_new(procs, json_pack("{s:i,s:s,s:s,s:i,s:I,s:I,s:I,s:I}", "pid",
						       p.pid, "comm", p.comm, "cgroup",
						       g.path ? g.path : "", "buffers", pcount[i],
						       "bytes", (json_int_t)pbytes[4 * i],
						       "private_bytes", (json_int_t)pbytes[4 * i + 1],
						       "shared_bytes", (json_int_t)pbytes[4 * i + 2],
						       "pss_bytes", (json_int_t)pbytes[4 * i + 3]));
	}
	for (uint32_t i = 0; i < in->ncgroups; i++) {
		struct dmaio_snapshot_cgroup g = { .struct_size = sizeof(g) };
		bool mem;

		if (!cprocs[i])
			continue;
		dmaio_snapshot_get_cgroup(s, i, &g);
		mem = g.flags & DMAIO_SNAPSHOT_CGROUP_MEMORY;
		json_array_append_new(cgroups, json_pack("{s:s,s:i,s:i,s:I,s:o,s:o}", "path", g.path,
							 "processes", cprocs[i], "buffers", cbufs[i],
							 "bytes", (json_int_t)cbytes[i],
							 "memory_current", mem ?
							 json_integer((json_int_t)g.memory_current) :
							 json_null(), "memory_kernel", mem ?
							 json_integer((json_int_t)g.memory_kernel) :
							 json_null()));
	}
	free(pbytes);
	free(pcount);
	free(cbytes);
	free(cbufs);
	free(cmark);
	free(cprocs);
	free(pcg);
	json_t *ea = json_array(), *na = json_array();
	const char *k;
	json_t *v;

	json_object_foreach(exps, k, v)
		json_array_append(ea, v);
	json_object_foreach(names, k, v)
		json_array_append(na, v);
	json_decref(exps);
	json_decref(names);
	if (in->flags & DMAIO_SNAPSHOT_PARTIAL_PROCS)
		json_array_append_new(flags, json_string("partial-processes"));
	if (in->flags & DMAIO_SNAPSHOT_PARTIAL_BUFS)
		json_array_append_new(flags, json_string("partial-buffers"));
	if (in->flags & DMAIO_SNAPSHOT_HAS_KERNEL)
		json_array_append_new(flags, json_string("kernel-held"));
	json_object_set_new(root, "source",
			    json_string(in->source == DMAIO_SNAPSHOT_BPF ? "bpf" : "proc"));
	json_object_set_new(root, "time_ns", json_integer(in->time_ns));
	json_object_set_new(root, "duration_ns", json_integer((json_int_t)in->duration_ns));
	json_object_set_new(root, "flags", flags);
	json_object_set_new(root, "reason", json_string(reason));
	json_object_set_new(root, "scanned", json_integer(in->scanned));
	json_object_set_new(root, "hidden", json_integer(in->hidden));
	json_object_set_new(root, "vanished", json_integer(in->vanished));
	json_object_set_new(root, "totals", json_pack("{s:I,s:I,s:I}", "buffers", (json_int_t)nb,
						      "bytes", (json_int_t)bytes, "kernel_bytes",
						      (json_int_t)kbytes));
	json_object_set_new(root, "cma", json_pack("{s:I,s:I}", "total",
						   (json_int_t)in->cma_total, "free",
						   (json_int_t)in->cma_free));
	json_object_set_new(root, "memcg_accounting",
			    json_string(in->memcg_accounting == DMAIO_SNAPSHOT_MEMCG_ON ? "on" :
					in->memcg_accounting == DMAIO_SNAPSHOT_MEMCG_OFF ? "off" :
					"absent"));
	json_object_set_new(root, "exporters", ea);
	json_object_set_new(root, "processes", procs);
	json_object_set_new(root, "cgroups", cgroups);
	json_object_set_new(root, "names", na);
	json_object_set_new(root, "buffers", bufs);
	return root;
}

/* ---- text ---- */

static int cmp_bytes_desc(const void *a, const void *b)
{
	json_int_t x = json_integer_value(json_object_get(*(json_t *const *)a, "bytes"));
	json_int_t y = json_integer_value(json_object_get(*(json_t *const *)b, "bytes"));

	return x == y ? 0 : x > y ? -1 : 1;
}

/* the array's members in the order of cmp (a malloc'd array of borrowed references) */
static json_t **sorted_by(json_t *arr, size_t *n, int (*cmp)(const void *, const void *))
{
	json_t **v;

	*n = json_array_size(arr);
	v = calloc(*n ? *n : 1, sizeof(*v));
	if (!v)
		return NULL;
	for (size_t i = 0; i < *n; i++)
		v[i] = json_array_get(arr, i);
	qsort(v, *n, sizeof(*v), cmp);
	return v;
}

/* the array's members, largest first */
static json_t **sorted(json_t *arr, size_t *n)
{
	return sorted_by(arr, n, cmp_bytes_desc);
}

static const char *jstr(json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));

	return s ? s : "";
}

static uint64_t jint(json_t *o, const char *k)
{
	return (uint64_t)json_integer_value(json_object_get(o, k));
}

static void print_text(const struct opts *o, json_t *j)
{
	char h1[32], h2[32], h3[32], h4[32], h5[32];
	json_t *t = json_object_get(j, "totals"), *cma = json_object_get(j, "cma");
	json_t **v;
	size_t n;

	printf("dma-bufs: %" PRIu64 " buffers, %s (source %s; %" PRIu64 " processes read, %" PRIu64
	       " hidden, %" PRIu64 " vanished; %.1f ms)\n",
	       jint(t, "buffers"), human(jint(t, "bytes"), h1, sizeof(h1)), jstr(j, "source"),
	       jint(j, "scanned"), jint(j, "hidden"), jint(j, "vanished"),
	       (double)jint(j, "duration_ns") / 1e6);
	if (jint(t, "kernel_bytes"))
		printf("held by the kernel only (no process descriptor or mapping): %s\n",
		       human(jint(t, "kernel_bytes"), h1, sizeof(h1)));
	if (jint(cma, "total"))
		printf("CMA: %s used of %s\n",
		       human(jint(cma, "total") - jint(cma, "free"), h1, sizeof(h1)),
		       human(jint(cma, "total"), h2, sizeof(h2)));
	if (jstr(j, "reason")[0])
		printf("note: %s\n", jstr(j, "reason"));

	v = sorted(json_object_get(j, "exporters"), &n);
	printf("\n%-24s %8s %12s\n", "EXPORTER", "BUFFERS", "BYTES");
	for (size_t i = 0; v && i < n; i++)
		printf("%-24s %8" PRIu64 " %12s\n", jstr(v[i], "exporter"), jint(v[i], "buffers"),
		       human(jint(v[i], "bytes"), h1, sizeof(h1)));
	free(v);

	v = sorted(json_object_get(j, "processes"), &n);
	printf("\n%-8s %-16s %8s %12s %12s %12s %12s\n", "PID", "COMMAND", "BUFFERS", "BYTES",
	       "PRIVATE", "SHARED", "PSS");
	for (size_t i = 0; v && i < n; i++)
		printf("%-8" PRIu64 " %-16.16s %8" PRIu64 " %12s %12s %12s %12s\n", jint(v[i], "pid"),
		       jstr(v[i], "comm"), jint(v[i], "buffers"),
		       human(jint(v[i], "bytes"), h1, sizeof(h1)),
		       human(jint(v[i], "private_bytes"), h2, sizeof(h2)),
		       human(jint(v[i], "shared_bytes"), h3, sizeof(h3)),
		       human(jint(v[i], "pss_bytes"), h4, sizeof(h4)));
	free(v);

	v = sorted(json_object_get(j, "cgroups"), &n);
	printf("\n%-32s %6s %8s %12s %12s %12s\n", "CGROUP", "PROCS", "BUFFERS", "BYTES",
	       "MEM.CURRENT", "MEM.KERNEL");
	for (size_t i = 0; v && i < n; i++) {
		json_t *cur = json_object_get(v[i], "memory_current");
		const char *path = jstr(v[i], "path");
		size_t pl = strlen(path);

		printf("%-32s %6" PRIu64 " %8" PRIu64 " %12s %12s %12s\n",
		       pl > 32 ? path + pl - 32 : pl ? path : "(no cgroup v2)",
		       jint(v[i], "processes"), jint(v[i], "buffers"),
		       human(jint(v[i], "bytes"), h1, sizeof(h1)),
		       json_is_integer(cur) ? human(jint(v[i], "memory_current"), h2, sizeof(h2)) : "-",
		       json_is_integer(cur) ? human(jint(v[i], "memory_kernel"), h3, sizeof(h3)) : "-");
	}
	free(v);
	if (!strcmp(jstr(j, "memcg_accounting"), "on"))
		printf("dma-heap memcg accounting on: a system-heap buffer is charged to the "
		       "MEM.KERNEL of the cgroup that allocated it, whoever holds it now\n");
	else
		printf("dma-heap memcg accounting %s: dma-heap buffers are charged to no cgroup%s\n",
		       jstr(j, "memcg_accounting"),
		       !strcmp(jstr(j, "memcg_accounting"), "off") ?
		       " (boot with dma_heap.mem_accounting=1)" : " (Linux 7.0+)");

	v = sorted(json_object_get(j, "names"), &n);
	printf("\n%-32s %8s %12s\n", "NAME", "BUFFERS", "BYTES");
	for (size_t i = 0; v && i < n; i++)
		printf("%-32.32s %8" PRIu64 " %12s\n", jstr(v[i], "name")[0] ? jstr(v[i], "name") :
		       "(unnamed)", jint(v[i], "buffers"), human(jint(v[i], "bytes"), h1, sizeof(h1)));
	free(v);

	if (o->buffers) {
		json_t *bufs = json_object_get(j, "buffers");

		printf("\n%-10s %12s %-20s %-24s %s\n", "INODE", "SIZE", "EXPORTER", "NAME",
		       "HOLDERS (pid:fds/maps)");
		for (size_t i = 0; i < json_array_size(bufs); i++) {
			json_t *b = json_array_get(bufs, i), *hs = json_object_get(b, "holders");

			printf("%-10" PRIu64 " %12s %-20.20s %-24.24s", jint(b, "inode"),
			       human(jint(b, "size"), h5, sizeof(h5)),
			       jstr(b, "exporter")[0] ? jstr(b, "exporter") : "?", jstr(b, "name"));
			if (json_is_true(json_object_get(b, "kernel")))
				printf(" kernel");
			for (size_t k = 0; k < json_array_size(hs); k++) {
				json_t *h = json_array_get(hs, k);

				printf(" %" PRIu64 ":%" PRIu64 "/%" PRIu64, jint(h, "pid"),
				       jint(h, "fds"), jint(h, "maps"));
			}
			printf("\n");
		}
	}
}

/* ---- --diff: a saved snapshot against this one ---- */

/* a buffer's identity across snapshots: inode, then size and exporter (an inode number can be
 * reused once its buffer is gone) */
static int cmp_identity(const void *pa, const void *pb)
{
	json_t *a = *(json_t *const *)pa, *b = *(json_t *const *)pb;
	uint64_t x = jint(a, "inode"), y = jint(b, "inode");

	if (x != y)
		return x < y ? -1 : 1;
	x = jint(a, "size");
	y = jint(b, "size");
	if (x != y)
		return x < y ? -1 : 1;
	return strcmp(jstr(a, "exporter"), jstr(b, "exporter"));
}

/* the buffers of one sorted list missing from the other: one merge walk, O(n log n) in all */
static void added_gone(json_t *old_arr, json_t *cur_arr, json_t *added, json_t *gone)
{
	size_t no, nc, i = 0, j = 0;
	json_t **o = sorted_by(old_arr, &no, cmp_identity), **c = sorted_by(cur_arr, &nc, cmp_identity);

	while (o && c && (i < no || j < nc)) {
		int d = i == no ? 1 : j == nc ? -1 : cmp_identity(&o[i], &c[j]);

		if (d < 0)
			json_array_append(gone, o[i++]);
		else if (d > 0)
			json_array_append(added, c[j++]);
		else
			i++, j++;
	}
	free(o);
	free(c);
}

static json_t *find_pid(json_t *arr, uint64_t pid)
{
	for (size_t i = 0; i < json_array_size(arr); i++)
		if (jint(json_array_get(arr, i), "pid") == pid)
			return json_array_get(arr, i);
	return NULL;
}

static json_t *diff_json(json_t *old, json_t *cur)
{
	json_t *ob = json_object_get(old, "buffers"), *cb = json_object_get(cur, "buffers");
	json_t *added = json_array(), *gone = json_array(), *procs = json_array();
	json_t *op = json_object_get(old, "processes"), *cp = json_object_get(cur, "processes");

	added_gone(ob, cb, added, gone);
	for (int pass = 0; pass < 2; pass++) {
		json_t *a = pass ? op : cp, *other = pass ? cp : op;

		for (size_t i = 0; i < json_array_size(a); i++) {
			json_t *p = json_array_get(a, i), *q = find_pid(other, jint(p, "pid"));

			if (pass && q)
				continue; /* done in the first pass */
			json_int_t before = (json_int_t)(pass ? jint(p, "bytes") : q ? jint(q, "bytes") : 0);
			json_int_t after = (json_int_t)(pass ? 0 : jint(p, "bytes"));

			if (before != after)
				json_array_append_new(procs, json_pack("{s:I,s:s,s:I,s:I,s:I}", "pid",
					(json_int_t)jint(p, "pid"), "comm", jstr(p, "comm"),
					"bytes_before", before, "bytes_after", after, "delta",
					after - before));
		}
	}
	return json_pack("{s:I,s:I,s:o,s:o,s:o}", "bytes_before",
			 (json_int_t)jint(json_object_get(old, "totals"), "bytes"), "bytes_after",
			 (json_int_t)jint(json_object_get(cur, "totals"), "bytes"), "new", added,
			 "gone", gone, "processes", procs);
}

static void print_diff(json_t *d)
{
	char h1[32], h2[32];
	json_t *a = json_object_get(d, "new"), *g = json_object_get(d, "gone"),
	       *p = json_object_get(d, "processes");

	printf("\ndiff: %s -> %s; %zu new buffers, %zu gone\n",
	       human(jint(d, "bytes_before"), h1, sizeof(h1)),
	       human(jint(d, "bytes_after"), h2, sizeof(h2)), json_array_size(a),
	       json_array_size(g));
	for (size_t i = 0; i < json_array_size(a); i++) {
		json_t *b = json_array_get(a, i);

		printf("  + inode %-10" PRIu64 " %12s %-20s %s\n", jint(b, "inode"),
		       human(jint(b, "size"), h1, sizeof(h1)), jstr(b, "exporter"), jstr(b, "name"));
	}
	for (size_t i = 0; i < json_array_size(g); i++) {
		json_t *b = json_array_get(g, i);

		printf("  - inode %-10" PRIu64 " %12s %-20s %s\n", jint(b, "inode"),
		       human(jint(b, "size"), h1, sizeof(h1)), jstr(b, "exporter"), jstr(b, "name"));
	}
	for (size_t i = 0; i < json_array_size(p); i++) {
		json_t *q = json_array_get(p, i);
		json_int_t dl = json_integer_value(json_object_get(q, "delta"));

		printf("  pid %-8" PRIu64 " %-16s %c%s\n", jint(q, "pid"), jstr(q, "comm"),
		       dl < 0 ? '-' : '+', human((uint64_t)(dl < 0 ? -dl : dl), h1, sizeof(h1)));
	}
}

static void usage(FILE *out)
{
	fprintf(out,
		"usage: dmaio-top [OPTIONS]\n"
		"Who holds the system's dma-buf memory: totals per exporter, per process, per name.\n"
		"  -s, --source auto|proc|bpf  where buffers come from (default auto)\n"
		"  -p, --pid PID        only what this process holds\n"
		"  -n, --name GLOB      only buffers whose name matches\n"
		"  -e, --exporter GLOB  only buffers of matching exporters\n"
		"  -b, --buffers        list every buffer and its holders\n"
		"      --no-maps        read descriptors only, not mappings (faster)\n"
		"  -d, --delay SECONDS  refresh every SECONDS until interrupted\n"
		"  -c, --count N        with --delay: stop after N snapshots\n"
		"      --json           JSON (with --delay: one object per line)\n"
		"      --save FILE      also write the snapshot to FILE (JSON)\n"
		"      --diff FILE      compare with a snapshot saved with --save or --json\n"
		"      --proc DIR       read this /proc instead of /proc\n"
		"  -h, --help           this text\n"
		"      --version        the version of dmaio-top and of libdmaio\n"
		"Exit status: 0, 1 when the snapshot fails, 2 on a usage error.\n");
}

static int parse(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "source", required_argument, NULL, 's' },
		{ "pid", required_argument, NULL, 'p' },
		{ "name", required_argument, NULL, 'n' },
		{ "exporter", required_argument, NULL, 'e' },
		{ "buffers", no_argument, NULL, 'b' },
		{ "delay", required_argument, NULL, 'd' },
		{ "count", required_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ "json", no_argument, NULL, 'J' },
		{ "save", required_argument, NULL, 'S' },
		{ "diff", required_argument, NULL, 'D' },
		{ "no-maps", no_argument, NULL, 'M' },
		{ "proc", required_argument, NULL, 'P' },
		{ "version", no_argument, NULL, 'V' },
		{ 0 }
	};
	int c;
	char *end;

	while ((c = getopt_long(argc, argv, "s:p:n:e:bd:c:h", lo, NULL)) != -1) {
		switch (c) {
		case 's':
			if (!strcmp(optarg, "auto"))
				o->source = DMAIO_SNAPSHOT_AUTO;
			else if (!strcmp(optarg, "proc"))
				o->source = DMAIO_SNAPSHOT_PROC;
			else if (!strcmp(optarg, "bpf"))
				o->source = DMAIO_SNAPSHOT_BPF;
			else {
				fprintf(stderr, "dmaio-top: --source: 'auto', 'proc' or 'bpf', not '%s'\n",
					optarg);
				return 2;
			}
			break;
		case 'p': {
			long v = strtol(optarg, &end, 10);

			if (*end || end == optarg || v <= 0 || v > INT32_MAX) {
				fprintf(stderr, "dmaio-top: --pid: a process id, not '%s'\n", optarg);
				return 2;
			}
			o->pid = (int32_t)v;
			break;
		}
		case 'n': o->name_glob = optarg; break;
		case 'e': o->exp_glob = optarg; break;
		case 'b': o->buffers = true; break;
		case 'd':
			o->delay = strtod(optarg, &end);
			if (*end || end == optarg || !(o->delay > 0) || o->delay > 86400) {
				fprintf(stderr, "dmaio-top: --delay: seconds above 0, not '%s'\n", optarg);
				return 2;
			}
			break;
		case 'c':
			o->count = strtol(optarg, &end, 10);
			if (*end || end == optarg || o->count <= 0) {
				fprintf(stderr, "dmaio-top: --count: a positive number, not '%s'\n",
					optarg);
				return 2;
			}
			break;
		case 'J': o->json = true; break;
		case 'S': o->save = optarg; break;
		case 'D': o->diff = optarg; break;
		case 'M': o->flags |= DMAIO_SNAPSHOT_NO_MAPS; break;
		case 'P': o->proc_root = optarg; break;
		case 'V': {
			unsigned v = dmaio_version();

			printf("dmaio-top %d.%d.%d (libdmaio %u.%u.%u)\n", DMAIO_VERSION_MAJOR,
			       DMAIO_VERSION_MINOR, DMAIO_VERSION_MICRO, v >> 16, (v >> 8) & 0xff,
			       v & 0xff);
			return 0;
		}
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "dmaio-top: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	return -1;
}

int main(int argc, char **argv)
{
	struct opts o = { .source = DMAIO_SNAPSHOT_AUTO };
	json_t *old = NULL;
	int r = parse(argc, argv, &o);

	if (r >= 0)
		return r;
	if (o.diff) {
		json_error_t err;

		old = json_load_file(o.diff, 0, &err);
		if (!old || !json_is_array(json_object_get(old, "buffers"))) {
			fprintf(stderr, "dmaio-top: --diff %s: %s\n", o.diff,
				old ? "not a dmaio-top snapshot (no \"buffers\" array)" : err.text);
			json_decref(old);
			return 1;
		}
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	/* one reader for every refresh: the BPF program is loaded once */
	struct dmaio_snapshot_opts so = { .struct_size = sizeof(so), .source = o.source,
					  .flags = o.flags, .pid = o.pid, .proc_root = o.proc_root };
	struct dmaio_reason rwhy = { .struct_size = sizeof(rwhy) };
	struct dmaio_snapshot_reader *rd;

	r = dmaio_snapshot_reader_new(&so, &rd, &rwhy);
	if (r < 0) {
		fprintf(stderr, "dmaio-top: snapshot failed: %s%s%s\n", strerror(-r),
			rwhy.text[0] ? ": " : "", rwhy.text);
		json_decref(old);
		return 1;
	}
	for (long n = 0; !stop; n++) {
		struct dmaio_reason why = { .struct_size = sizeof(why) };
		struct dmaio_snapshot_info in = { .struct_size = sizeof(in) };
		struct dmaio_snapshot *s;
		json_t *j;

		r = dmaio_snapshot_reader_take(rd, &s, &why);
		if (r < 0) {
			fprintf(stderr, "dmaio-top: snapshot failed: %s%s%s\n", strerror(-r),
				why.text[0] ? ": " : "", why.text);
			dmaio_snapshot_reader_free(rd);
			json_decref(old);
			return 1;
		}
		dmaio_snapshot_get_info(s, &in);
		j = snapshot_json(&o, s, &in, why.text);
		dmaio_snapshot_free(s);
		if (!j) {
			fprintf(stderr, "dmaio-top: out of memory\n");
			dmaio_snapshot_reader_free(rd);
			json_decref(old);
			return 1;
		}
		if (old)
			json_object_set_new(j, "diff", diff_json(old, j));
		if (o.save && json_dump_file(j, o.save, JSON_INDENT(1))) {
			fprintf(stderr, "dmaio-top: --save %s: cannot write\n", o.save);
			dmaio_snapshot_reader_free(rd);
			json_decref(j);
			json_decref(old);
			return 1;
		}
		if (o.json) {
			json_dumpf(j, stdout, o.delay > 0 ? JSON_COMPACT : JSON_INDENT(2));
			printf("\n");
		} else {
			if (o.delay > 0 && isatty(STDOUT_FILENO))
				printf("\033[H\033[2J");
			print_text(&o, j);
			if (old)
				print_diff(json_object_get(j, "diff"));
		}
		fflush(stdout);
		json_decref(j);
		if (!(o.delay > 0) || (o.count && n + 1 >= o.count))
			break;
		struct timespec ts = { (time_t)o.delay,
				       (long)((o.delay - (double)(time_t)o.delay) * 1e9) };

		while (nanosleep(&ts, &ts) && errno == EINTR && !stop)
			;
	}
	dmaio_snapshot_reader_free(rd);
	json_decref(old);
	return 0;
}
