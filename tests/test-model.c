// SPDX-License-Identifier: MIT
/*
 * test-model: the tensor tables of safetensors and GGUF files (dmaio-model.h) and their loading
 * into buffers. The test writes its own model files from the format facts:
 *
 *  st_dtypes     a safetensors file with a tensor of every dtype (scalar, zero-size, 1-5 dims),
 *                __metadata__: every field of every tensor as written.
 *  gguf_types    GGUF v3 files with a tensor of every ggml type, alignments default (32), 64,
 *                4096, metadata of every value type (arrays of strings, nested arrays); v2 too.
 *  malformed     62 hostile files, each refused with its own errno and a reason that names the
 *                shard, the field, key or tensor, and the values or offsets (checked part by
 *                part), no fd leaked.
 *  shards        three shards (safetensors + GGUF) in one model; a name repeated across shards.
 *  args          every @retval of the argument checks (with the argument named in the reason);
 *                the extensible structs: too small, exactly 1.0, larger (zeroed past the
 *                library's; an input with non-zero bytes there: -E2BIG).
 *  reasons       NULL works; too small is -EINVAL and not written; cleared on success; the
 *                shard named by its index; an allocation's reason passed on by the load.
 *  reason_threads  threads refusing different files at once each read their own reason.
 *  empty_model   a GGUF v3 file of no tensor and no key (a fuzzer's 49 bytes; ran a memcpy from
 *                NULL): a model of no tensor, alone or as a shard, loaded into no buffer.
 *  buf_names     new dma-bufs named "dmaio-model" (memfds keep "libdmaio"), or
 *                dmaio_load_opts.alloc->name.
 *  load          WHOLE, PER_TENSOR, PACKED (small limit, several alignments), a selected set,
 *                across shards: every byte of every tensor against the position-encoded pattern
 *                of its file offset (each shard its own seed); padding between packed tensors
 *                untouched (zero).
 *  cancel        a progress callback that cancels, and the cancel flag: -ECANCELED, no fd left.
 *  dropcache     DMAIO_LOAD_DROP_CACHE after a cold start: no page of the file resident (mincore).
 *  alloc_fault   (test-model-fault only: built on the fault-injection library) the n-th syscall
 *                of a load fails, for samples n of all its calls: an errno, a reason and
 *                nothing left, or byte-exact; buffer allocations fail while earlier buffers are
 *                being read.
 *
 * Usage: test-model [--heap NAME]   (memfd, system, cma, udmabuf, ...)
 * Env:   DMAIO_TEST_ONLY=test_NAME (one test), DMAIO_TEST_MODEL_TENSORS=N (the cancel and
 *        drop-cache model: N tensors of 1 MiB, 16 to 256; default 16)
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "common.h"
#include "dmaio-model.h"

static struct test_args args;
static struct dmaio_ctx *ctx;

/* the buffers of the loads come from --heap (a provider list of one; none: the library's
 * order) */
static const char *heap_list[2];
static struct dmaio_alloc_opts heap_opts = { .struct_size = sizeof(struct dmaio_alloc_opts) };

/* load options: zero, struct_size set, the buffers from --heap when @heap */
static struct dmaio_load_opts load_opts(bool heap)
{
	struct dmaio_load_opts o = { .struct_size = sizeof(o) };

	if (heap)
		o.alloc = &heap_opts;
	return o;
}

/* buffer @b of a load, NULL when there is none */
static struct dmaio_buf *lbuf(const struct dmaio_load *l, unsigned b)
{
	struct dmaio_buf *buf = NULL;

	if (dmaio_load_get_buf(l, b, &buf) < 0)
		return NULL;
	return buf;
}

/* ---- a growing byte string ----------------------------------------------------------------- */
struct sb {
	unsigned char *p;
	size_t n, cap;
};

static void sb_put(struct sb *b, const void *d, size_t n)
{
	if (b->n + n > b->cap) {
		b->cap = (b->n + n) * 2 + 64;
		b->p = realloc(b->p, b->cap);
		assert_non_null(b->p);
	}
	memcpy(b->p + b->n, d, n);
	b->n += n;
}

static void sb_u8(struct sb *b, uint8_t v) { sb_put(b, &v, 1); }

static void sb_u32(struct sb *b, uint32_t v)
{
	unsigned char x[4] = { (unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16),
			       (unsigned char)(v >> 24) };
	sb_put(b, x, 4);
}

static void sb_u64(struct sb *b, uint64_t v)
{
	unsigned char x[8];

	for (int i = 0; i < 8; i++)
		x[i] = (unsigned char)(v >> (8 * i));
	sb_put(b, x, 8);
}

static void sb_str(struct sb *b, const char *s) /* GGUF string */
{
	sb_u64(b, strlen(s));
	sb_put(b, s, strlen(s));
}

static void sb_printf(struct sb *b, const char *fmt, ...)
{
	char tmp[4096];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	assert_true(n >= 0 && (size_t)n < sizeof(tmp));
	sb_put(b, tmp, (size_t)n);
}

static void sb_free(struct sb *b)
{
	free(b->p);
	memset(b, 0, sizeof(*b));
}

/* ---- files ---------------------------------------------------------------------------------- */
static int new_file(void)
{
	return test_tmpfile(NULL, NULL, 0);
}

/* a file: the header bytes, then @data bytes of the pattern of @seed (stream offset = file
 * offset) */
static int write_model(const struct sb *hdr, uint64_t data, uint64_t seed)
{
	int fd = new_file();

	assert_int_equal(pwrite_full(fd, hdr->p, hdr->n, 0), (ssize_t)hdr->n);
	if (data)
		assert_int_equal(file_fill_pattern(fd, (off_t)hdr->n, (size_t)data, seed), 0);
	return fd;
}

/* safetensors from a JSON text: length (or @len_lie when not 0), JSON, @data bytes */
static int write_st(const char *json, uint64_t data, uint64_t len_lie)
{
	struct sb b = { 0 };
	int fd;

	sb_u64(&b, len_lie ? len_lie : strlen(json));
	sb_put(&b, json, strlen(json));
	fd = write_model(&b, data, SEED_FILE);
	sb_free(&b);
	return fd;
}

static int open_one(int fd, struct dmaio_model **m)
{
	return dmaio_model_open(ctx, &fd, 1, 0, m, NULL);
}

/* ---- safetensors: every dtype -------------------------------------------------------------- */
struct st_t {
	const char *name, *dtype;
	int id;
	unsigned esize;
	unsigned ndims;
	uint64_t shape[5];
};

static const struct st_t st_all[] = {
	{ "a.bool", "BOOL", DMAIO_DTYPE_BOOL, 1, 1, { 7 } },
	{ "a.u8", "U8", DMAIO_DTYPE_U8, 1, 2, { 3, 5 } },
	{ "a.i8", "I8", DMAIO_DTYPE_I8, 1, 1, { 9 } },
	{ "a.f8e4m3", "F8_E4M3", DMAIO_DTYPE_F8_E4M3, 1, 1, { 4 } },
	{ "a.f8e5m2", "F8_E5M2", DMAIO_DTYPE_F8_E5M2, 1, 1, { 4 } },
	{ "a.i16", "I16", DMAIO_DTYPE_I16, 2, 3, { 2, 3, 4 } },
	{ "a.u16", "U16", DMAIO_DTYPE_U16, 2, 1, { 5 } },
	{ "a.f16", "F16", DMAIO_DTYPE_F16, 2, 2, { 64, 33 } },
	{ "a.bf16", "BF16", DMAIO_DTYPE_BF16, 2, 1, { 1000 } },
	{ "a.i32", "I32", DMAIO_DTYPE_I32, 4, 0, { 0 } }, /* scalar */
	{ "a.u32", "U32", DMAIO_DTYPE_U32, 4, 1, { 3 } },
	{ "a.f32", "F32", DMAIO_DTYPE_F32, 4, 5, { 2, 2, 2, 2, 3 } },
	{ "a.i64", "I64", DMAIO_DTYPE_I64, 8, 1, { 11 } },
	{ "a.u64", "U64", DMAIO_DTYPE_U64, 8, 2, { 0, 4 } }, /* zero bytes */
	{ "a.f64", "F64", DMAIO_DTYPE_F64, 8, 2, { 17, 3 } },
	{ "b.\xc3\xa9t\xc3\xa9", "F32", DMAIO_DTYPE_F32, 4, 1, { 1 } }, /* UTF-8 name */
};

static uint64_t st_bytes(const struct st_t *t)
{
	uint64_t n = t->esize;

	for (unsigned k = 0; k < t->ndims; k++)
		n *= t->shape[k];
	return n;
}

/* a JSON header of those tensors, back to back in reverse order of the table (the JSON order
 * is not the offset order) */
static uint64_t st_json(struct sb *j, const struct st_t *ts, size_t n, uint64_t *begins)
{
	uint64_t at = 0;

	for (size_t i = n; i-- > 0;) {
		begins[i] = at;
		at += st_bytes(&ts[i]);
	}
	sb_printf(j, "{\"__metadata__\":{\"format\":\"pt\",\"x\":\"y\"}");
	for (size_t i = 0; i < n; i++) {
		sb_printf(j, ",\"%s\":{\"dtype\":\"%s\",\"shape\":[", ts[i].name, ts[i].dtype);
		for (unsigned k = 0; k < ts[i].ndims; k++)
			sb_printf(j, "%s%llu", k ? "," : "", (unsigned long long)ts[i].shape[k]);
		sb_printf(j, "],\"data_offsets\":[%llu,%llu]}", (unsigned long long)begins[i],
			  (unsigned long long)(begins[i] + st_bytes(&ts[i])));
	}
	sb_printf(j, "}");
	/* padded with spaces to a multiple of 8, as the reference writer does */
	while (j->n % 8)
		sb_u8(j, ' ');
	sb_u8(j, 0);
	j->n--;
	return at;
}

static int write_st_all(uint64_t seed, uint64_t *begins, uint64_t *hdr_len)
{
	struct sb j = { 0 }, b = { 0 };
	uint64_t data = st_json(&j, st_all, ARRAY_SIZE(st_all), begins);
	int fd;

	sb_u64(&b, j.n);
	sb_put(&b, j.p, j.n);
	fd = write_model(&b, data, seed);
	*hdr_len = b.n;
	sb_free(&j);
	sb_free(&b);
	return fd;
}

static void test_st_dtypes(void **state)
{
	uint64_t begins[ARRAY_SIZE(st_all)], hl;
	struct dmaio_model *m = NULL;
	struct dmaio_model_file_info fi = { .struct_size = sizeof(struct dmaio_model_file_info) };
	int fd = write_st_all(SEED_FILE, begins, &hl);
	int r = open_one(fd, &m);

	(void)state;
#ifndef TEST_HAVE_JANSSON
	assert_int_equal(r, -EOPNOTSUPP);
	close(fd);
	skip();
#endif
	assert_int_equal(r, 0);
	close(fd); /* the model keeps its own descriptor */
	assert_int_equal(dmaio_model_tensor_count(m), (int)ARRAY_SIZE(st_all));
	assert_int_equal(dmaio_model_get_file(m, 0, &fi), 0);
	assert_int_equal(fi.format, DMAIO_MODEL_SAFETENSORS);
	assert_int_equal(fi.data_offset, hl);
	assert_int_equal(fi.data_offset % 8, 0);
	assert_int_equal(fi.alignment, 1);
	assert_int_equal(fi.ntensors, ARRAY_SIZE(st_all));
	for (size_t i = 0; i < ARRAY_SIZE(st_all); i++) {
		struct dmaio_tensor_info ti = { .struct_size = sizeof(struct dmaio_tensor_info) };
		int idx = dmaio_model_find_tensor(m, st_all[i].name);

		assert_true(idx >= 0);
		assert_int_equal(dmaio_model_get_tensor(m, (unsigned)idx, &ti), 0);
		assert_string_equal(ti.name, st_all[i].name);
		assert_string_equal(ti.dtype_name, st_all[i].dtype);
		assert_int_equal(ti.dtype, st_all[i].id);
		assert_int_equal(ti.ndims, st_all[i].ndims);
		for (unsigned k = 0; k < DMAIO_MODEL_MAX_DIMS; k++)
			assert_int_equal(ti.shape[k], k < st_all[i].ndims ? st_all[i].shape[k] : 0);
		assert_int_equal(ti.nbytes, st_bytes(&st_all[i]));
		assert_int_equal(ti.offset, hl + begins[i]);
		assert_int_equal(ti.file, 0);
		assert_int_equal(ti.format, DMAIO_MODEL_SAFETENSORS);
	}
	/* numbered in offset order */
	for (int i = 1; i < dmaio_model_tensor_count(m); i++) {
		struct dmaio_tensor_info a = { .struct_size = sizeof(a) }, b = { .struct_size = sizeof(b) };

		assert_int_equal(dmaio_model_get_tensor(m, (unsigned)i - 1, &a), 0);
		assert_int_equal(dmaio_model_get_tensor(m, (unsigned)i, &b), 0);
		assert_true(a.offset + a.nbytes <= b.offset);
	}
	assert_int_equal(dmaio_model_find_tensor(m, "a.nope"), -ENOENT);
	dmaio_model_close(m);
}

/* ---- GGUF ----------------------------------------------------------------------------------- */
struct gg_type {
	int id;
	const char *name;
	unsigned blck, bytes;
};

static const struct gg_type gg_all[] = {
	{ 0, "F32", 1, 4 },	    { 1, "F16", 1, 2 },	      { 2, "Q4_0", 32, 18 },
	{ 3, "Q4_1", 32, 20 },	    { 6, "Q5_0", 32, 22 },    { 7, "Q5_1", 32, 24 },
	{ 8, "Q8_0", 32, 34 },	    { 9, "Q8_1", 32, 36 },    { 10, "Q2_K", 256, 84 },
	{ 11, "Q3_K", 256, 110 },   { 12, "Q4_K", 256, 144 }, { 13, "Q5_K", 256, 176 },
	{ 14, "Q6_K", 256, 210 },   { 15, "Q8_K", 256, 292 }, { 16, "IQ2_XXS", 256, 66 },
	{ 17, "IQ2_XS", 256, 74 },  { 18, "IQ3_XXS", 256, 98 }, { 19, "IQ1_S", 256, 50 },
	{ 20, "IQ4_NL", 32, 18 },   { 21, "IQ3_S", 256, 110 }, { 22, "IQ2_S", 256, 82 },
	{ 23, "IQ4_XS", 256, 136 }, { 24, "I8", 1, 1 },       { 25, "I16", 1, 2 },
	{ 26, "I32", 1, 4 },	    { 27, "I64", 1, 8 },      { 28, "F64", 1, 8 },
	{ 29, "IQ1_M", 256, 56 },   { 30, "BF16", 1, 2 },     { 34, "TQ1_0", 256, 54 },
	{ 35, "TQ2_0", 256, 66 },   { 39, "MXFP4", 32, 17 },
};

enum { G_U8, G_I8, G_U16, G_I16, G_U32, G_I32, G_F32, G_BOOL, G_STR, G_ARR, G_U64, G_I64, G_F64 };

struct gg_tensor {
	char name[64];
	uint32_t ndims;
	uint64_t dims[8];
	uint32_t type;
	uint64_t offset; /* relative */
	uint64_t size;
};

/* every metadata value type once, arrays of numbers, strings and arrays */
static void gg_meta_all(struct sb *b, unsigned *nkv)
{
	sb_str(b, "general.architecture"); sb_u32(b, G_STR); sb_str(b, "llama");
	sb_str(b, "t.u8"); sb_u32(b, G_U8); sb_u8(b, 7);
	sb_str(b, "t.i8"); sb_u32(b, G_I8); sb_u8(b, 0xff);
	sb_str(b, "t.u16"); sb_u32(b, G_U16); sb_u8(b, 1); sb_u8(b, 2);
	sb_str(b, "t.i16"); sb_u32(b, G_I16); sb_u8(b, 1); sb_u8(b, 2);
	sb_str(b, "t.u32"); sb_u32(b, G_U32); sb_u32(b, 5);
	sb_str(b, "t.i32"); sb_u32(b, G_I32); sb_u32(b, 5);
	sb_str(b, "t.f32"); sb_u32(b, G_F32); sb_u32(b, 0x3f800000);
	sb_str(b, "t.bool"); sb_u32(b, G_BOOL); sb_u8(b, 1);
	sb_str(b, "t.u64"); sb_u32(b, G_U64); sb_u64(b, 1);
	sb_str(b, "t.i64"); sb_u32(b, G_I64); sb_u64(b, 1);
	sb_str(b, "t.f64"); sb_u32(b, G_F64); sb_u64(b, 0);
	sb_str(b, "t.arr.str"); sb_u32(b, G_ARR); sb_u32(b, G_STR); sb_u64(b, 3);
	sb_str(b, "a"); sb_str(b, ""); sb_str(b, "\xe2\x82\xac");
	sb_str(b, "t.arr.u16"); sb_u32(b, G_ARR); sb_u32(b, G_U16); sb_u64(b, 2); sb_u32(b, 0);
	sb_str(b, "t.arr.arr"); sb_u32(b, G_ARR); sb_u32(b, G_ARR); sb_u64(b, 2);
	sb_u32(b, G_I32); sb_u64(b, 1); sb_u32(b, 9);
	sb_u32(b, G_STR); sb_u64(b, 1); sb_str(b, "zz");
	*nkv = 15;
}

/*
 * A GGUF file: header, metadata (alignment key when @align != 0, then @extra_kv raw bytes
 * counting @extra_n key/values), the tensor infos, padding, data (the pattern of @seed).
 * Offsets are computed (aligned) unless the tensor has one already set (!= UINT64_MAX).
 */
static int write_gguf(uint32_t version, uint32_t align, struct gg_tensor *ts, size_t n,
		      bool meta, uint64_t seed, uint64_t *data_start)
{
	struct sb b = { 0 };
	unsigned nkv = 0;
	uint64_t a = align ? align : 32, at = 0, end = 0, ds;
	struct sb kv = { 0 };
	int fd;

	if (meta)
		gg_meta_all(&kv, &nkv);
	if (align) {
		sb_str(&kv, "general.alignment");
		sb_u32(&kv, G_U32);
		sb_u32(&kv, align);
		nkv++;
	}
	sb_put(&b, "GGUF", 4);
	sb_u32(&b, version);
	sb_u64(&b, n);
	sb_u64(&b, nkv);
	if (kv.n)
		sb_put(&b, kv.p, kv.n);
	for (size_t i = 0; i < n; i++) {
		if (ts[i].offset == UINT64_MAX) {
			ts[i].offset = at;
			at = (at + ts[i].size + a - 1) / a * a;
		}
		if (ts[i].offset + ts[i].size > end)
			end = ts[i].offset + ts[i].size;
		sb_str(&b, ts[i].name);
		sb_u32(&b, ts[i].ndims);
		for (uint32_t k = 0; k < ts[i].ndims; k++)
			sb_u64(&b, ts[i].dims[k]);
		sb_u32(&b, ts[i].type);
		sb_u64(&b, ts[i].offset);
	}
	ds = (b.n + a - 1) / a * a;
	while (b.n < ds)
		sb_u8(&b, 0);
	fd = write_model(&b, end, seed);
	if (data_start)
		*data_start = ds;
	sb_free(&b);
	sb_free(&kv);
	return fd;
}

static size_t gg_tensors_all(struct gg_tensor *ts)
{
	for (size_t i = 0; i < ARRAY_SIZE(gg_all); i++) {
		memset(&ts[i], 0, sizeof(ts[i]));
		snprintf(ts[i].name, sizeof(ts[i].name), "blk.%zu.%s", i, gg_all[i].name);
		ts[i].ndims = 2;
		ts[i].dims[0] = gg_all[i].blck * 2;
		ts[i].dims[1] = 3;
		ts[i].type = (uint32_t)gg_all[i].id;
		ts[i].size = 2ull * gg_all[i].bytes * 3;
		ts[i].offset = UINT64_MAX;
	}
	return ARRAY_SIZE(gg_all);
}

static void check_gguf(uint32_t version, uint32_t align, bool meta)
{
	struct gg_tensor ts[ARRAY_SIZE(gg_all)];
	size_t n = gg_tensors_all(ts);
	uint64_t ds;
	int fd = write_gguf(version, align, ts, n, meta, SEED_FILE, &ds);
	struct dmaio_model *m = NULL;
	struct dmaio_model_file_info fi = { .struct_size = sizeof(struct dmaio_model_file_info) };

	assert_int_equal(open_one(fd, &m), 0);
	close(fd);
	assert_int_equal(dmaio_model_tensor_count(m), (int)n);
	assert_int_equal(dmaio_model_get_file(m, 0, &fi), 0);
	assert_int_equal(fi.format, DMAIO_MODEL_GGUF);
	assert_int_equal(fi.version, version);
	assert_int_equal(fi.alignment, align ? align : 32);
	assert_int_equal(fi.data_offset, ds);
	for (size_t i = 0; i < n; i++) {
		struct dmaio_tensor_info ti = { .struct_size = sizeof(struct dmaio_tensor_info) };

		assert_int_equal(dmaio_model_get_tensor(m, (unsigned)i, &ti), 0); /* offset order */
		assert_string_equal(ti.name, ts[i].name);
		assert_string_equal(ti.dtype_name, gg_all[i].name);
		assert_string_equal(dmaio_dtype_name(gg_all[i].id), gg_all[i].name);
		assert_int_equal(ti.dtype, gg_all[i].id);
		assert_int_equal(ti.ndims, 2);
		assert_int_equal(ti.shape[0], ts[i].dims[0]);
		assert_int_equal(ti.shape[1], 3);
		assert_int_equal(ti.nelems, ts[i].dims[0] * 3);
		assert_int_equal(ti.nbytes, ts[i].size);
		assert_int_equal(ti.offset, ds + ts[i].offset);
		assert_int_equal(ti.offset % (align ? align : 32), 0);
		assert_int_equal(dmaio_model_find_tensor(m, ts[i].name), (int)i);
	}
	dmaio_model_close(m);
}

static void test_gguf_types(void **state)
{
	(void)state;
	check_gguf(3, 0, true);    /* default alignment 32 */
	check_gguf(3, 32, false);
	check_gguf(3, 64, true);
	check_gguf(3, 4096, true);
	check_gguf(2, 0, false);   /* v2: the same layout */
	check_gguf(3, 1, false);   /* alignment 1 is a power of two */
}

/* ---- malformed files ------------------------------------------------------------------------ */
/* Each refused file names its cause in the reason: @why are parts the reason must hold (the
 * field, key or tensor, and the numbers that are wrong), besides "file 0: ". */
#define WHY_PARTS 4

struct bad_st {
	const char *what;
	const char *json;
	uint64_t data;
	uint64_t len_lie;
	int err;
	const char *why[WHY_PARTS];
};

static const struct bad_st bad_sts[] = {
	{ "header length past the end", "{}", 0, 1000, -ENODATA,
	  { "header length 1000", "past the end", "(10 bytes)" } },
	{ "header length above the limit", "{}", 0, 200000000, -E2BIG,
	  { "header length 200000000", "limit of 100000000" } },
	{ "header length 2^63", "{}", 0, 1ull << 63, -E2BIG,
	  { "header length 9223372036854775808", "above the limit" } },
	{ "JSON syntax", "{\"t\":{\"dtype\":\"F32\",", 8, 0, -EBADMSG,
	  { "JSON header", "byte 20" } },
	{ "trailing garbage", "{}x", 0, 0, -EBADMSG,
	  { "JSON header", "byte 3", "'x'" } },
	{ "a tensor entry not an object", "{\"t\":[1,2]}", 0, 0, -EBADMSG,
	  { "tensor \"t\"", "an array, not an object" } },
	{ "invalid UTF-8 in a name", "{\"t\xff\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}",
	  8, 0, -EILSEQ,
	  { "JSON header", "invalid UTF-8", "0xff" } },
	{ "overlong UTF-8", "{\"t\xc0\xaf\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}",
	  8, 0, -EILSEQ,
	  { "JSON header", "invalid UTF-8", "0xc0" } },
	{ "duplicate tensor name", "{\"t\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
				   "\"t\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}",
	  8, 0, -EEXIST,
	  { "duplicate", "\"t\"" } },
	{ "unknown dtype", "{\"t\":{\"dtype\":\"F12\",\"shape\":[2],\"data_offsets\":[0,8]}}", 8, 0,
	  -EPROTOTYPE,
	  { "tensor \"t\"", "unknown dtype \"F12\"" } },
	{ "dtype not a string", "{\"t\":{\"dtype\":4,\"shape\":[2],\"data_offsets\":[0,8]}}", 8, 0,
	  -EBADMSG,
	  { "tensor \"t\"", "\"dtype\" is an integer" } },
	{ "missing data_offsets", "{\"t\":{\"dtype\":\"F32\",\"shape\":[2]}}", 8, 0, -EBADMSG,
	  { "tensor \"t\"", "no \"data_offsets\"" } },
	{ "extra field", "{\"t\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8],\"x\":1}}",
	  8, 0, -EBADMSG,
	  { "tensor \"t\"", "unknown field \"x\"" } },
	{ "negative dim", "{\"t\":{\"dtype\":\"F32\",\"shape\":[-2],\"data_offsets\":[0,8]}}", 8, 0,
	  -EBADMSG,
	  { "tensor \"t\"", "shape[0] is -2" } },
	{ "three offsets", "{\"t\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8,9]}}", 8, 0,
	  -EBADMSG,
	  { "tensor \"t\"", "\"data_offsets\" has 3 entries" } },
	{ "size disagrees with shape", "{\"t\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,8]}}",
	  8, 0, -EMSGSIZE,
	  { "tensor \"t\"", "[0, 8]", "hold 8 bytes", "F32 [3] takes 12" } },
	{ "shape product overflows",
	  "{\"t\":{\"dtype\":\"F32\",\"shape\":[4294967296,4294967296],\"data_offsets\":[0,8]}}", 8, 0,
	  -EOVERFLOW,
	  { "tensor \"t\"", "[4294967296, 4294967296]", "2^64 elements" } },
	{ "bytes overflow", "{\"t\":{\"dtype\":\"F64\",\"shape\":[4611686018427387904],"
			    "\"data_offsets\":[0,8]}}", 8, 0, -EOVERFLOW,
	  { "tensor \"t\"", "4611686018427387904 elements of F64", "2^64 bytes" } },
	{ "too many dims", "{\"t\":{\"dtype\":\"U8\",\"shape\":[1,1,1,1,1,1,1,1,1],"
			   "\"data_offsets\":[0,1]}}", 1, 0, -E2BIG,
	  { "tensor \"t\"", "9 dimensions", "at most 8" } },
	{ "begin after end", "{\"t\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[8,4]}}", 8, 0,
	  -EDOM,
	  { "tensor \"t\"", "data_offsets [8, 4]", "begin after" } },
	{ "offsets past the end", "{\"t\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,16]}}",
	  8, 0, -ERANGE,
	  { "tensor \"t\"", "data_offsets [0, 16]", "data section (8 bytes)" } },
	{ "overlapping tensors", "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
				 "\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[4,12]}}",
	  12, 0, -EADDRINUSE,
	  { "\"a\" [0, 8)", "\"b\" [4, 12)", "overlap" } },
	{ "a hole", "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
		    "\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[8,12]}}", 12, 0, -ENOTEMPTY,
	  { "bytes [4, 8)", "no tensor", "between \"a\" and \"b\"" } },
	{ "trailing bytes", "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 8, 0,
	  -ENOTEMPTY,
	  { "bytes [4, 8)", "no tensor", "\"a\"" } },
	{ "metadata not strings", "{\"__metadata__\":{\"a\":1}}", 0, 0, -EBADMSG,
	  { "\"__metadata__\" key \"a\"", "not a string" } },
	{ "empty tensor name", "{\"\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", 8, 0,
	  -EBADMSG,
	  { "empty name" } },
};

/* GGUF lies: each a function that writes its file */
static int gg_bad_magic(void)
{
	struct sb b = { 0 };
	int fd;

	sb_put(&b, "GGUG", 4); sb_u32(&b, 3); sb_u64(&b, 0); sb_u64(&b, 0);
	fd = write_model(&b, 0, 0);
	sb_free(&b);
	return fd;
}

static int gg_head(uint32_t ver, uint64_t nt, uint64_t nkv, const struct sb *rest)
{
	struct sb b = { 0 };
	int fd;

	sb_put(&b, "GGUF", 4); sb_u32(&b, ver); sb_u64(&b, nt); sb_u64(&b, nkv);
	if (rest && rest->n)
		sb_put(&b, rest->p, rest->n);
	fd = write_model(&b, 0, 0);
	sb_free(&b);
	return fd;
}

static int gg_v1(void) { return gg_head(1, 0, 0, NULL); }
static int gg_v4(void) { return gg_head(4, 0, 0, NULL); }
static int gg_big_endian(void) { return gg_head(0x03000000, 0, 0, NULL); }
static int gg_truncated(void)
{
	struct sb b = { 0 };
	int fd;

	sb_put(&b, "GGUF", 4); sb_u32(&b, 3); sb_u64(&b, 1);
	fd = write_model(&b, 0, 0);
	sb_free(&b);
	return fd;
}
static int gg_huge_tensors(void) { return gg_head(3, 1ull << 40, 0, NULL); }
static int gg_huge_kv(void) { return gg_head(3, 0, 1ull << 40, NULL); }
static int gg_kv_past_end(void) { return gg_head(3, 0, 1000, NULL); }

static int gg_kv(void (*fill)(struct sb *), uint64_t nkv)
{
	struct sb r = { 0 };
	int fd;

	fill(&r);
	fd = gg_head(3, 0, nkv, &r);
	sb_free(&r);
	return fd;
}

static void f_bad_vtype(struct sb *r) { sb_str(r, "k"); sb_u32(r, 13); sb_u32(r, 0); }
static void f_long_string(struct sb *r) { sb_str(r, "k"); sb_u32(r, G_STR); sb_u64(r, 1ull << 62); }
static void f_str_past_end(struct sb *r) { sb_str(r, "k"); sb_u32(r, G_STR); sb_u64(r, 100); sb_u32(r, 0); }
static void f_bad_utf8_key(struct sb *r) { sb_str(r, "k\xed\xa0\x80"); sb_u32(r, G_U8); sb_u8(r, 0); }
static void f_dup_key(struct sb *r)
{
	sb_str(r, "k"); sb_u32(r, G_U8); sb_u8(r, 0);
	sb_str(r, "k"); sb_u32(r, G_U8); sb_u8(r, 0);
}
static void f_huge_array(struct sb *r)
{
	sb_str(r, "k"); sb_u32(r, G_ARR); sb_u32(r, G_U32); sb_u64(r, 1ull << 61); sb_u32(r, 0);
}
static void f_array_bad_type(struct sb *r)
{
	sb_str(r, "k"); sb_u32(r, G_ARR); sb_u32(r, 77); sb_u64(r, 1); sb_u32(r, 0);
}
static void f_align_type(struct sb *r) { sb_str(r, "general.alignment"); sb_u32(r, G_U64); sb_u64(r, 32); }
static void f_align_npot(struct sb *r) { sb_str(r, "general.alignment"); sb_u32(r, G_U32); sb_u32(r, 48); }
static void f_align_zero(struct sb *r) { sb_str(r, "general.alignment"); sb_u32(r, G_U32); sb_u32(r, 0); }
static void f_bad_bool(struct sb *r) { sb_str(r, "k"); sb_u32(r, G_BOOL); sb_u8(r, 2); }
static void f_deep(struct sb *r)
{
	sb_str(r, "k"); sb_u32(r, G_ARR);
	for (int i = 0; i < 6; i++) {
		sb_u32(r, G_ARR); sb_u64(r, 1);
	}
	sb_u32(r, G_U8); sb_u64(r, 1); sb_u8(r, 0);
	for (int i = 0; i < 32; i++)
		sb_u8(r, 0);
}

static int gg_bad_vtype(void) { return gg_kv(f_bad_vtype, 1); }
static int gg_long_string(void) { return gg_kv(f_long_string, 1); }
static int gg_str_past_end(void) { return gg_kv(f_str_past_end, 1); }
static int gg_bad_utf8_key(void) { return gg_kv(f_bad_utf8_key, 1); }
static int gg_dup_key(void) { return gg_kv(f_dup_key, 2); }
static int gg_huge_array(void) { return gg_kv(f_huge_array, 1); }
static int gg_array_bad_type(void) { return gg_kv(f_array_bad_type, 1); }
static int gg_align_type(void) { return gg_kv(f_align_type, 1); }
static int gg_align_npot(void) { return gg_kv(f_align_npot, 1); }
static int gg_align_zero(void) { return gg_kv(f_align_zero, 1); }
static int gg_bad_bool(void) { return gg_kv(f_bad_bool, 1); }
static int gg_deep(void) { return gg_kv(f_deep, 1); }

/* tensor-info lies, on a valid file of two F32 tensors of 16 elements */
static int gg_tensors(void (*lie)(struct gg_tensor *), uint32_t align)
{
	struct gg_tensor ts[2];

	memset(ts, 0, sizeof(ts));
	for (int i = 0; i < 2; i++) {
		snprintf(ts[i].name, sizeof(ts[i].name), "t%d", i);
		ts[i].ndims = 1;
		ts[i].dims[0] = 16;
		ts[i].type = 0;
		ts[i].size = 64;
		ts[i].offset = UINT64_MAX;
	}
	lie(ts);
	return write_gguf(3, align, ts, 2, false, SEED_FILE, NULL);
}

static void l_unknown_type(struct gg_tensor *t) { t[1].type = 4; }   /* removed Q4_2 */
static void l_type_31(struct gg_tensor *t) { t[1].type = 31; }       /* removed Q4_0_4_4 */
static void l_type_huge(struct gg_tensor *t) { t[1].type = 1000; }
static void l_dims5(struct gg_tensor *t) { t[1].ndims = 5; }
static void l_block(struct gg_tensor *t) { t[1].type = 2; t[1].dims[0] = 48; t[1].size = 0; }
static void l_overflow(struct gg_tensor *t)
{
	t[1].ndims = 4;
	t[1].dims[0] = t[1].dims[1] = t[1].dims[2] = t[1].dims[3] = 1ull << 20;
	t[1].size = 0;
}
static void l_offset_wrap(struct gg_tensor *t) { t[1].offset = UINT64_MAX - 31; }
static void l_past_end(struct gg_tensor *t) { t[0].offset = 0; t[1].offset = 64; t[1].dims[0] = 32; }
static void l_misaligned(struct gg_tensor *t) { t[0].offset = 0; t[1].offset = 68; }
static void l_overlap(struct gg_tensor *t) { t[0].offset = 0; t[1].offset = 32; t[0].size = 128; }
static void l_dup(struct gg_tensor *t) { strcpy(t[1].name, "t0"); }
static void l_bad_name(struct gg_tensor *t) { strcpy(t[1].name, "t\xe0\x80\x80"); }
static void l_empty_name(struct gg_tensor *t) { t[1].name[0] = 0; }

static int gg_unknown_type(void) { return gg_tensors(l_unknown_type, 0); }
static int gg_type_31(void) { return gg_tensors(l_type_31, 0); }
static int gg_type_huge(void) { return gg_tensors(l_type_huge, 0); }
static int gg_dims5(void) { return gg_tensors(l_dims5, 0); }
static int gg_block(void) { return gg_tensors(l_block, 0); }
static int gg_overflow(void) { return gg_tensors(l_overflow, 0); }
static int gg_offset_wrap(void) { return gg_tensors(l_offset_wrap, 0); }
static int gg_past_end(void) { return gg_tensors(l_past_end, 0); }
static int gg_misaligned(void) { return gg_tensors(l_misaligned, 0); }
static int gg_misaligned64(void) { return gg_tensors(l_overlap, 64); } /* 32 not a multiple of 64 */
static int gg_overlap(void) { return gg_tensors(l_overlap, 0); }
static int gg_dup(void) { return gg_tensors(l_dup, 0); }
static int gg_bad_name(void) { return gg_tensors(l_bad_name, 0); }
static int gg_empty_name(void) { return gg_tensors(l_empty_name, 0); }
static int not_a_model(void)
{
	struct sb b = { 0 };
	int fd;

	sb_printf(&b, "#!/bin/sh\necho this is not a model\n");
	fd = write_model(&b, 0, 0);
	sb_free(&b);
	return fd;
}
static int tiny_file(void)
{
	struct sb b = { 0 };
	int fd;

	sb_put(&b, "GG", 2);
	fd = write_model(&b, 0, 0);
	sb_free(&b);
	return fd;
}

struct bad_gg {
	const char *what;
	int (*make)(void);
	int err;
	const char *why[WHY_PARTS];
};

static const struct bad_gg bad_ggs[] = {
	{ "bad magic", gg_bad_magic, -ENOEXEC,
	  { "not a model", "neither \"GGUF\" nor a safetensors header" } },
	{ "a shell script", not_a_model, -ENOEXEC,
	  { "not a model", "neither \"GGUF\" nor a safetensors header" } },
	{ "a 2-byte file", tiny_file, -ENOEXEC,
	  { "not a model", "2 bytes" } },
	{ "version 1", gg_v1, -EPROTONOSUPPORT,
	  { "GGUF version 1 ", "not supported" } },
	{ "version 4", gg_v4, -EPROTONOSUPPORT,
	  { "GGUF version 4 ", "not supported" } },
	{ "big-endian version", gg_big_endian, -EPROTONOSUPPORT,
	  { "GGUF version 50331648", "big-endian" } },
	{ "truncated header", gg_truncated, -ENODATA,
	  { "metadata key/value count", "offset 16", "(16 bytes)" } },
	{ "2^40 tensors", gg_huge_tensors, -E2BIG,
	  { "tensor count 1099511627776", "DMAIO_MODEL_MAX_TENSORS (1048576)" } },
	{ "2^40 key/values", gg_huge_kv, -E2BIG,
	  { "key/value count 1099511627776", "DMAIO_MODEL_MAX_KV (1048576)" } },
	{ "key/values past the end", gg_kv_past_end, -ENODATA,
	  { "1000 metadata key/values", "offset 24" } },
	{ "unknown value type", gg_bad_vtype, -EBADMSG,
	  { "key \"k\"", "unknown value type 13" } },
	{ "a 2^62-byte string", gg_long_string, -E2BIG,
	  { "key \"k\"", "length 4611686018427387904", "limit of 1073741824" } },
	{ "a string past the end", gg_str_past_end, -ENODATA,
	  { "key \"k\"", "100 bytes", "past the end of the file (49 bytes)" } },
	{ "a surrogate in a key", gg_bad_utf8_key, -EILSEQ,
	  { "metadata key 0", "\"k\\xed\\xa0\\x80\"", "not valid UTF-8" } },
	{ "a key twice", gg_dup_key, -EEXIST,
	  { "key \"k\" appears twice" } },
	{ "a 2^61-element array", gg_huge_array, -ENODATA,
	  { "key \"k\"", "2305843009213693952 u32 elements", "past the end" } },
	{ "an array of an unknown type", gg_array_bad_type, -EBADMSG,
	  { "key \"k\"", "unknown value type 77" } },
	{ "general.alignment a u64", gg_align_type, -EBADMSG,
	  { "\"general.alignment\"", "value type 10 (u64)", "not u32" } },
	{ "general.alignment 48", gg_align_npot, -EBADMSG,
	  { "\"general.alignment\" is 48", "not a power of two" } },
	{ "general.alignment 0", gg_align_zero, -EBADMSG,
	  { "\"general.alignment\" is 0", "not a power of two" } },
	{ "a bool of 2", gg_bad_bool, -EBADMSG,
	  { "key \"k\"", "bool value 2" } },
	{ "arrays nested 7 deep", gg_deep, -E2BIG,
	  { "key \"k\"", "nested more than 4 deep" } },
	{ "ggml type 4 (removed)", gg_unknown_type, -EPROTOTYPE,
	  { "tensor \"t1\"", "unknown ggml type 4" } },
	{ "ggml type 31 (removed)", gg_type_31, -EPROTOTYPE,
	  { "tensor \"t1\"", "unknown ggml type 31" } },
	{ "ggml type 1000", gg_type_huge, -EPROTOTYPE,
	  { "tensor \"t1\"", "unknown ggml type 1000" } },
	{ "5 dimensions", gg_dims5, -E2BIG,
	  { "tensor \"t1\"", "5 dimensions", "at most 4" } },
	{ "Q4_0 of 48 elements", gg_block, -EMSGSIZE,
	  { "tensor \"t1\"", "ne[0] 48", "Q4_0 block of 32" } },
	{ "2^80 elements", gg_overflow, -EOVERFLOW,
	  { "tensor \"t1\"", "[1048576, 1048576, 1048576, 1048576]", "2^64 elements" } },
	{ "offset wraps around", gg_offset_wrap, -EOVERFLOW,
	  { "tensor \"t1\"", "offset 18446744073709551584", "overflow" } },
	{ "data past the end", gg_past_end, -ERANGE,
	  { "tensor \"t1\"", "[160, 288)", "end of the file (224 bytes)" } },
	{ "offset 68 with alignment 32", gg_misaligned, -ENXIO,
	  { "tensor \"t1\"", "offset 68", "general.alignment 32" } },
	{ "offset 32 with alignment 64", gg_misaligned64, -ENXIO,
	  { "tensor \"t1\"", "offset 32", "general.alignment 64" } },
	{ "overlapping tensors", gg_overlap, -EADDRINUSE,
	  { "\"t0\" [96, 160)", "\"t1\" [128, 192)", "overlap" } },
	{ "a name twice", gg_dup, -EEXIST,
	  { "tensor \"t0\"", "named twice", "96", "160" } },
	{ "an overlong NUL in a name", gg_bad_name, -EILSEQ,
	  { "tensor 1", "\"t\\xe0\\x80\\x80\"", "not valid UTF-8" } },
	{ "an empty name", gg_empty_name, -EBADMSG,
	  { "tensor 1", "empty name" } },
};

/* A call refused with @err and a reason that says @part (and @part2 when not NULL). */
static void assert_why(int r, int err, const struct dmaio_reason *why, const char *part,
		       const char *part2)
{
	assert_rc_equal(r, err);
	assert_int_equal(why->error, err);
	if (!strstr(why->text, part))
		fail_msg("the reason \"%s\" does not say \"%s\"", why->text, part);
	if (part2 && !strstr(why->text, part2))
		fail_msg("the reason \"%s\" does not say \"%s\"", why->text, part2);
}

/* The reason of a refusal: the call's errno, one line naming shard @file, each of @parts. */
static void check_why(const char *kind, const char *what, int r, const struct dmaio_reason *why,
		      unsigned file, const char *const *parts, size_t nparts)
{
	char prefix[32];

	snprintf(prefix, sizeof(prefix), "file %u: ", file);
	if (why->error != r)
		test_fail("%s, %s: reason.error %s, the call returned %s", kind, what,
			  test_errname(why->error), test_errname(r));
	if (strncmp(why->text, prefix, strlen(prefix)) != 0)
		test_fail("%s, %s: the reason \"%s\" does not start with \"%s\"", kind, what,
			  why->text, prefix);
	if (strchr(why->text, '\n') || strlen(why->text) >= DMAIO_REASON_MAX)
		test_fail("%s, %s: the reason is not one line", kind, what);
	for (size_t k = 0; k < nparts; k++)
		if (parts[k] && !strstr(why->text, parts[k]))
			test_fail("%s, %s: the reason \"%s\" does not say \"%s\"", kind, what,
				  why->text, parts[k]);
}

/* Every malformed file refused with its errno and a reason that names the cause (printed: the
 * reasons a person reads). */
static void test_malformed(void **state)
{
	unsigned n = 0, before = test_failures();
	int fds0 = test_count_fds();

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(bad_sts); i++) {
		const struct bad_st *c = &bad_sts[i];
		struct dmaio_model *m = NULL;
		struct dmaio_reason why = { .struct_size = sizeof(why) };
		int fd = write_st(c->json, c->data, c->len_lie);
		int r = dmaio_model_open(ctx, &fd, 1, 0, &m, &why);
		int want = c->err;
		const char *const *parts = c->why;
		size_t nparts = WHY_PARTS;
#ifndef TEST_HAVE_JANSSON
		static const char *const no_jansson[] = { "without jansson" };

		want = -EOPNOTSUPP; /* without jansson every safetensors file is refused */
		parts = no_jansson;
		nparts = 1;
#endif

		printf("#   safetensors, %s: %s\n", c->what, why.text);
		n++;
		if (r != want || m)
			test_fail("safetensors, %s: %s, expected %s", c->what, test_errname(r),
				  test_errname(want));
		check_why("safetensors", c->what, r, &why, 0, parts, nparts);
		close(fd);
	}
	for (size_t i = 0; i < ARRAY_SIZE(bad_ggs); i++) {
		const struct bad_gg *c = &bad_ggs[i];
		struct dmaio_model *m = NULL;
		struct dmaio_reason why = { .struct_size = sizeof(why) };
		int fd = c->make();
		int r = dmaio_model_open(ctx, &fd, 1, 0, &m, &why);

		printf("#   GGUF, %s: %s\n", c->what, why.text);
		n++;
		if (r != c->err || m)
			test_fail("GGUF, %s: %s, expected %s", c->what, test_errname(r),
				  test_errname(c->err));
		check_why("GGUF", c->what, r, &why, 0, c->why, WHY_PARTS);
		close(fd);
	}
	printf("# %u malformed files, %u not refused as expected\n", n, test_failures() - before);
	assert_true(n >= 60);
	assert_no_failures_since(before);
	assert_int_equal(test_count_fds(), fds0);
}

/* ---- shards --------------------------------------------------------------------------------- */
struct shards {
	int fds[3];
	uint64_t seeds[3];
};

static void make_shards(struct shards *s, bool dup_name)
{
	uint64_t begins[ARRAY_SIZE(st_all)], hl;
	struct gg_tensor ts[ARRAY_SIZE(gg_all)];
	size_t n = gg_tensors_all(ts);

	for (int i = 0; i < 3; i++)
		s->seeds[i] = SEED_FILE + 0x1000 * (uint64_t)i;
#ifdef TEST_HAVE_JANSSON
	s->fds[0] = write_st_all(s->seeds[0], begins, &hl);
	/* the second safetensors shard: other names, one big tensor */
	{
		struct sb j = { 0 }, b = { 0 };

		sb_printf(&j, "{\"%s\":{\"dtype\":\"F16\",\"shape\":[1024,1025],"
			      "\"data_offsets\":[0,2099200]},"
			      "\"c.small\":{\"dtype\":\"U8\",\"shape\":[3],"
			      "\"data_offsets\":[2099200,2099203]}}",
			  dup_name ? "a.f16" : "c.big");
		sb_u64(&b, j.n);
		sb_put(&b, j.p, j.n);
		s->fds[1] = write_model(&b, 2099203, s->seeds[1]);
		sb_free(&j);
		sb_free(&b);
	}
#else
	(void)begins;
	(void)hl;
	(void)dup_name;
	s->fds[0] = write_gguf(3, 64, ts, n, true, s->seeds[0], NULL);
	for (size_t i = 0; i < n; i++) {
		ts[i].name[0] = 'x';
		ts[i].offset = UINT64_MAX;
	}
	s->fds[1] = write_gguf(3, 128, ts, n, false, s->seeds[1], NULL);
	n = gg_tensors_all(ts);
	for (size_t i = 0; i < n; i++)
		ts[i].name[0] = 'z'; /* the third shard's names differ from the first's */
#endif
	s->fds[2] = write_gguf(3, 4096, ts, n, true, s->seeds[2], NULL);
}

static void close_shards(struct shards *s)
{
	for (int i = 0; i < 3; i++)
		close(s->fds[i]);
}

static void test_shards(void **state)
{
	struct shards s;
	struct dmaio_model *m = NULL;
	struct dmaio_model_file_info fi = { .struct_size = sizeof(struct dmaio_model_file_info) };
	int total = 0, fds0 = test_count_fds();

	(void)state;
	make_shards(&s, false);
	assert_int_equal(dmaio_model_open(ctx, s.fds, 3, 0, &m, NULL), 0);
	for (unsigned f = 0; f < 3; f++) {
		assert_int_equal(dmaio_model_get_file(m, f, &fi), 0);
		for (unsigned i = 0; i < fi.ntensors; i++) {
			struct dmaio_tensor_info ti = { .struct_size = sizeof(struct dmaio_tensor_info) };

			assert_int_equal(dmaio_model_get_tensor(m, (unsigned)total + i, &ti), 0);
			assert_int_equal(ti.file, f);
			assert_int_equal(dmaio_model_find_tensor(m, ti.name), total + (int)i);
		}
		total += (int)fi.ntensors;
	}
	assert_int_equal(dmaio_model_tensor_count(m), total);
	assert_int_equal(dmaio_model_get_file(m, 3, &fi), -ERANGE);
	dmaio_model_close(m);
	close_shards(&s);
#ifdef TEST_HAVE_JANSSON
	make_shards(&s, true);
	m = NULL;
	{
		struct dmaio_reason why = { .struct_size = sizeof(why) };

		/* the second shard repeats a name of the first */
		assert_why(dmaio_model_open(ctx, s.fds, 3, 0, &m, &why), -EEXIST, &why,
			   "file 1: tensor \"a.f16\"", "of file 0");
	}
	assert_null(m);
	close_shards(&s);
#endif
	assert_int_equal(test_count_fds(), fds0);
}

/* ---- arguments ------------------------------------------------------------------------------ */
static void test_args(void **state)
{
	struct gg_tensor ts[ARRAY_SIZE(gg_all)];
	size_t n = gg_tensors_all(ts);
	int fd = write_gguf(3, 0, ts, n, false, SEED_FILE, NULL);
	struct dmaio_model *m = NULL;
	struct dmaio_tensor_info ti = { .struct_size = sizeof(struct dmaio_tensor_info) };
	struct dmaio_model_file_info fi = { .struct_size = sizeof(struct dmaio_model_file_info) };
	struct dmaio_load *l = NULL;
	struct dmaio_load_opts o = { .struct_size = sizeof(struct dmaio_load_opts) };
	struct dmaio_tensor_place pl = { .struct_size = sizeof(struct dmaio_tensor_place) };
	int fds[2] = { fd, -1 }, p[2], wr, dir;
	uint32_t sel[2] = { 0, 0 };
	struct dmaio_load_stats st = { .struct_size = sizeof(struct dmaio_load_stats) };
	struct dmaio_reason why = { .struct_size = sizeof(why) };

	(void)state;
	assert_why(dmaio_model_open(ctx, NULL, 1, 0, &m, &why), -EINVAL, &why, "fds NULL", NULL);
	assert_why(dmaio_model_open(ctx, fds, 1, 0, NULL, &why), -EINVAL, &why, "model NULL",
		   NULL);
	assert_why(dmaio_model_open(ctx, fds, 0, 0, &m, &why), -EINVAL, &why, "nfds 0", NULL);
	assert_why(dmaio_model_open(ctx, fds, DMAIO_MODEL_MAX_FILES + 1, 0, &m, &why), -EINVAL,
		   &why, "nfds 1025", NULL);
	assert_why(dmaio_model_open(ctx, fds, 1, 1, &m, &why), -EINVAL, &why, "flags 0x1", NULL);
	assert_why(dmaio_model_open(ctx, fds, 2, 0, &m, &why), -EBADF, &why, "file 1: fd -1",
		   "negative");
	fds[1] = 1000;
	assert_why(dmaio_model_open(ctx, fds, 2, 0, &m, &why), -EBADF, &why, "file 1: fd 1000",
		   "not open");
	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	assert_why(dmaio_model_open(ctx, &p[0], 1, 0, &m, &why), -ESPIPE, &why, "file 0: fd",
		   "a pipe");
	close(p[0]);
	close(p[1]);
	dir = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_why(dmaio_model_open(ctx, &dir, 1, 0, &m, &why), -ESPIPE, &why, "file 0: fd",
		   "a directory");
	close(dir);
	{
		char path[4096];
		int t = test_tmpfile(NULL, path, sizeof(path));

		wr = open(path, O_WRONLY | O_CLOEXEC);
		assert_true(wr >= 0);
		assert_why(dmaio_model_open(ctx, &wr, 1, 0, &m, &why), -EBADF, &why, "file 0: fd",
			   "not open for reading");
		close(wr);
		close(t);
	}
	assert_null(m);
	assert_int_equal(open_one(fd, &m), 0);
	assert_int_equal(dmaio_model_tensor_count(NULL), -EINVAL);
	assert_int_equal(dmaio_model_get_tensor(NULL, 0, &ti), -EINVAL);
	assert_int_equal(dmaio_model_get_tensor(m, 0, NULL), -EINVAL);
	assert_int_equal(dmaio_model_get_tensor(m, (unsigned)n, &ti), -ERANGE);
	assert_int_equal(dmaio_model_find_tensor(NULL, "x"), -EINVAL);
	assert_int_equal(dmaio_model_find_tensor(m, NULL), -EINVAL);
	assert_int_equal(dmaio_model_get_file(NULL, 0, &fi), -EINVAL);
	assert_int_equal(dmaio_model_get_file(m, 0, NULL), -EINVAL);
	assert_int_equal(dmaio_model_get_file(m, 1, &fi), -ERANGE);
	assert_null(dmaio_dtype_name(4));
	assert_null(dmaio_dtype_name(UINT32_MAX));
	assert_string_equal(dmaio_dtype_name(DMAIO_DTYPE_F8_E5M2), "F8_E5M2");

	assert_why(dmaio_model_load(NULL, NULL, &l, &why), -EINVAL, &why, "model NULL", NULL);
	assert_why(dmaio_model_load(m, NULL, NULL, &why), -EINVAL, &why, "load NULL", NULL);
#define BAD_OPTS(stmt, part)                                                       \
	do {                                                                       \
		o = load_opts(true);                                               \
		stmt;                                                              \
		assert_why(dmaio_model_load(m, &o, &l, &why), -EINVAL, &why, part, NULL); \
		assert_null(l);                                                    \
	} while (0)
	BAD_OPTS(o.mode = 3, "opts->mode 3");
	BAD_OPTS(o.flags = 2, "opts->flags 0x2");
	BAD_OPTS(o.rw_flags = 1u << 20, "opts->rw_flags 0x100000");
	BAD_OPTS(o.rw_flags = DMAIO_RW_PATH(DMAIO_PATH_COUNT), "names no path"); /* no such path */
	BAD_OPTS(o.nbufs = 1, "opts->nbufs 1 without opts->bufs");
	BAD_OPTS(o.struct_size = DMAIO_SIZE_LOAD_OPTS - 1, "struct_size");
	BAD_OPTS(o.align = 64, "opts->align 64 in mode WHOLE");
	BAD_OPTS(o.select = sel; o.nselect = 1, "opts->select in mode WHOLE");
	BAD_OPTS(o.mode = DMAIO_LOAD_PACKED; o.align = 48, "opts->align 48");
	BAD_OPTS(o.mode = DMAIO_LOAD_PER_TENSOR; o.max_buf = 4096, "opts->max_buf 4096");
	BAD_OPTS(o.mode = DMAIO_LOAD_PACKED; o.depth = DMAIO_QUEUE_DEPTH_MAX + 1,
		 "opts->depth 257");
	BAD_OPTS(o.mode = DMAIO_LOAD_PACKED; o.nselect = 1, "opts->nselect 1 without");
	BAD_OPTS(o.mode = DMAIO_LOAD_PACKED; o.select = sel; o.nselect = 2, "selected twice");
	{
		/* the allocation options: refused as dmaio_buf_alloc() would, before anything */
		static const char *const bad_list[] = { "a/b", NULL }, *const empty[] = { NULL };
		struct dmaio_alloc_opts ao = { .struct_size = sizeof(ao) };

		BAD_OPTS(ao.providers = bad_list; o.alloc = &ao, "opts->alloc->providers[0] \"a/b\"");
		ao.providers = empty;
		BAD_OPTS(o.alloc = &ao, "opts->alloc->providers");
		ao.providers = NULL;
		ao.name = "";
		BAD_OPTS(o.alloc = &ao, "opts->alloc->name");
		ao.name = NULL;
		ao.flags = DMAIO_ALLOC_ALLOW_NON_DMABUF | DMAIO_ALLOC_DMABUF_ONLY;
		BAD_OPTS(o.alloc = &ao, "contradict");
		ao.flags = 1u << 30;
		BAD_OPTS(o.alloc = &ao, "opts->alloc->flags");
		ao.flags = 0;
		ao.struct_size = DMAIO_SIZE_ALLOC_OPTS - 1;
		BAD_OPTS(o.alloc = &ao, "opts->alloc: struct_size");
	}
	sel[1] = (uint32_t)n;
	BAD_OPTS(o.mode = DMAIO_LOAD_PACKED; o.select = sel; o.nselect = 2, "opts->select[1]");
	{
		/* a larger struct: zeros past what the library knows are fine, anything else
		 * -E2BIG */
		struct {
			struct dmaio_load_opts o;
			uint64_t next;
		} big;

		memset(&big, 0, sizeof(big));
		big.o = load_opts(true);
		big.o.struct_size = sizeof(big);
		big.next = 1;
		assert_why(dmaio_model_load(m, &big.o, &l, &why), -E2BIG, &why, "struct_size",
			   "non-zero");
		assert_null(l);
		big.next = 0;
		assert_int_equal(dmaio_model_load(m, &big.o, &l, &why), 0);
		assert_int_equal(why.error, 0);
		assert_string_equal(why.text, "");
		dmaio_load_free(l);
		l = NULL;
	}
	o = load_opts(true);
	o.mode = DMAIO_LOAD_PACKED;
	o.max_buf = 100; /* smaller than the tensors */
	assert_why(dmaio_model_load(m, &o, &l, &why), -EFBIG, &why, "tensor \"blk.",
		   "larger than the buffer limit 100");
	o.max_buf = 0;
	o.select = sel;
	o.nselect = 1;
	assert_int_equal(dmaio_model_load(m, &o, &l, NULL), 0);
	assert_int_equal(dmaio_load_get_tensor(NULL, 0, &pl), -EINVAL);
	assert_int_equal(dmaio_load_get_tensor(l, 0, NULL), -EINVAL);
	assert_int_equal(dmaio_load_get_tensor(l, (unsigned)n, &pl), -ERANGE);
	assert_int_equal(dmaio_load_get_tensor(l, 1, &pl), -ENOENT);
	assert_int_equal(dmaio_load_get_tensor(l, 0, &pl), 0);
	assert_int_equal(dmaio_load_buf_count(NULL), -EINVAL);
	assert_int_equal(dmaio_load_buf_count(l), 1);
	{
		struct dmaio_buf *bb = NULL;

		assert_int_equal(dmaio_load_get_buf(l, 1, &bb), -ERANGE);
		assert_int_equal(dmaio_load_get_buf(NULL, 0, &bb), -EINVAL);
		assert_int_equal(dmaio_load_get_buf(l, 0, NULL), -EINVAL);
		assert_null(bb);
		assert_int_equal(dmaio_load_get_buf(l, 0, &bb), 0);
		assert_ptr_equal(bb, pl.buf);
	}
	assert_int_equal(dmaio_load_get_stats(NULL, &st), -EINVAL);
	assert_int_equal(dmaio_load_get_stats(l, NULL), -EINVAL);
	/* the structs filled: a struct_size below the 1.0 size is -EINVAL; a larger one is
	 * filled up to what the library knows and zeroed past it, its struct_size kept */
	{
		struct {
			struct dmaio_tensor_info ti;
			unsigned char more[24];
		} bti;
		struct {
			struct dmaio_model_file_info fi;
			unsigned char more[24];
		} bfi;
		struct {
			struct dmaio_tensor_place pl;
			unsigned char more[24];
		} bpl;
		struct {
			struct dmaio_load_stats st;
			unsigned char more[24];
		} bst;
		static const unsigned char zeros[24];

		ti.struct_size = DMAIO_SIZE_TENSOR_INFO - 1;
		assert_int_equal(dmaio_model_get_tensor(m, 0, &ti), -EINVAL);
		fi.struct_size = DMAIO_SIZE_MODEL_FILE_INFO - 1;
		assert_int_equal(dmaio_model_get_file(m, 0, &fi), -EINVAL);
		pl.struct_size = DMAIO_SIZE_TENSOR_PLACE - 1;
		assert_int_equal(dmaio_load_get_tensor(l, 0, &pl), -EINVAL);
		st.struct_size = DMAIO_SIZE_LOAD_STATS - 1;
		assert_int_equal(dmaio_load_get_stats(l, &st), -EINVAL);
		memset(&bti, 0xff, sizeof(bti));
		bti.ti.struct_size = sizeof(bti);
		assert_int_equal(dmaio_model_get_tensor(m, 0, &bti.ti), 0);
		assert_int_equal(bti.ti.struct_size, sizeof(bti));
		assert_int_equal(bti.ti.pad0, 0);
		assert_string_equal(bti.ti.name, ts[0].name);
		assert_memory_equal(bti.more, zeros, sizeof(zeros));
		memset(&bfi, 0xff, sizeof(bfi));
		bfi.fi.struct_size = sizeof(bfi);
		assert_int_equal(dmaio_model_get_file(m, 0, &bfi.fi), 0);
		assert_int_equal(bfi.fi.struct_size, sizeof(bfi));
		assert_int_equal(bfi.fi.ntensors, n);
		assert_memory_equal(bfi.more, zeros, sizeof(zeros));
		memset(&bpl, 0xff, sizeof(bpl));
		bpl.pl.struct_size = sizeof(bpl);
		assert_int_equal(dmaio_load_get_tensor(l, 0, &bpl.pl), 0);
		assert_int_equal(bpl.pl.struct_size, sizeof(bpl));
		assert_int_equal(bpl.pl.buf_index, 0);
		assert_memory_equal(bpl.more, zeros, sizeof(zeros));
		memset(&bst, 0xff, sizeof(bst));
		bst.st.struct_size = sizeof(bst);
		assert_int_equal(dmaio_load_get_stats(l, &bst.st), 0);
		assert_int_equal(bst.st.struct_size, sizeof(bst));
		assert_int_equal(bst.st.pad0, 0);
		assert_int_equal(bst.st.buffers, 1);
		assert_memory_equal(bst.more, zeros, sizeof(zeros));
		/* the 1.0 sizes, exactly: filled */
		ti.struct_size = DMAIO_SIZE_TENSOR_INFO;
		assert_int_equal(dmaio_model_get_tensor(m, 0, &ti), 0);
		assert_int_equal(ti.nbytes, ts[0].size);
		st.struct_size = DMAIO_SIZE_LOAD_STATS;
		assert_int_equal(dmaio_load_get_stats(l, &st), 0);
	}
	assert_int_equal(dmaio_model_file_count(NULL), -EINVAL);
	assert_int_equal(dmaio_model_file_count(m), 1);
	dmaio_load_free(l);
	dmaio_load_free(NULL);
	dmaio_model_close(m);
	dmaio_model_close(NULL);
	close(fd);
}

/* ---- reasons ------------------------------------------------------------------------------- */
/* The reason is optional (NULL works), checked (a struct_size below DMAIO_SIZE_REASON is -EINVAL
 * and the struct is not written), cleared by a call that succeeds, names the shard by its index
 * in fds, and passes on why a buffer could not be allocated. */
static void test_reasons(void **state)
{
	struct gg_tensor ts[ARRAY_SIZE(gg_all)];
	size_t n = gg_tensors_all(ts);
	int good = write_gguf(3, 0, ts, n, false, SEED_FILE, NULL);
	int bad = gg_misaligned(), fds[2];
	struct dmaio_model *m = NULL;
	struct dmaio_load *l = NULL;
	struct dmaio_load_opts o;
	struct dmaio_reason why = { .struct_size = sizeof(why) };
	struct dmaio_reason small = { .struct_size = DMAIO_SIZE_REASON - 1 };
	int fds0 = test_count_fds();
	volatile int cancel = 1;

	(void)state;
	/* NULL: the errno alone */
	assert_int_equal(dmaio_model_open(ctx, &bad, 1, 0, &m, NULL), -ENXIO);
	assert_null(m);
	/* too small: -EINVAL, nothing written (not even for a call that would succeed) */
	strcpy(small.text, "untouched");
	small.error = 7;
	assert_int_equal(dmaio_model_open(ctx, &bad, 1, 0, &m, &small), -EINVAL);
	assert_int_equal(dmaio_model_open(ctx, &good, 1, 0, &m, &small), -EINVAL);
	assert_null(m);
	assert_string_equal(small.text, "untouched");
	assert_int_equal(small.error, 7);
	/* the shard is named by its index */
	fds[0] = good;
	fds[1] = bad;
	assert_why(dmaio_model_open(ctx, fds, 2, 0, &m, &why), -ENXIO, &why,
		   "file 1: tensor \"t1\": offset 68", "general.alignment 32");
	/* the same names in two shards */
	fds[1] = good;
	assert_why(dmaio_model_open(ctx, fds, 2, 0, &m, &why), -EEXIST, &why, "file 1: tensor",
		   "of file 0");
	/* success clears it */
	strcpy(why.text, "stale");
	why.error = -EIO;
	assert_int_equal(dmaio_model_open(ctx, &good, 1, 0, &m, &why), 0);
	assert_int_equal(why.error, 0);
	assert_string_equal(why.text, "");
	/* the loads: NULL, too small, cleared on success */
	o = load_opts(true);
	assert_int_equal(dmaio_model_load(m, &o, &l, NULL), 0);
	dmaio_load_free(l);
	l = NULL;
	assert_int_equal(dmaio_model_load(m, &o, &l, &small), -EINVAL);
	assert_null(l);
	assert_string_equal(small.text, "untouched");
	strcpy(why.text, "stale");
	why.error = -EIO;
	assert_int_equal(dmaio_model_load(m, &o, &l, &why), 0);
	assert_int_equal(why.error, 0);
	assert_string_equal(why.text, "");
	dmaio_load_free(l);
	l = NULL;
	/* cancelled: says by what */
	o.cancel = &cancel;
	assert_why(dmaio_model_load(m, &o, &l, &why), -ECANCELED, &why, "cancelled by *opts->cancel",
		   NULL);
	assert_null(l);
	/* a provider that does not exist: the allocation's reason, after the buffer's number, in
	 * the load's calling thread (one buffer) and from its allocating thread (PER_TENSOR) */
	{
		static const char *const nosuch[] = { "no-such-heap", NULL };
		struct dmaio_alloc_opts ao = { .struct_size = sizeof(ao), .providers = nosuch };
		char part[64];

		for (int mode = DMAIO_LOAD_WHOLE; mode <= DMAIO_LOAD_PER_TENSOR; mode++) {
			o = load_opts(false);
			o.mode = (uint32_t)mode;
			o.alloc = &ao;
			snprintf(part, sizeof(part), "buffer 1 of %zu", mode ? n : (size_t)1);
			assert_why(dmaio_model_load(m, &o, &l, &why), -ENOENT, &why, part,
				   "no-such-heap");
			assert_null(l);
			printf("# %s: %s\n", mode ? "PER_TENSOR" : "WHOLE", why.text);
		}
	}
	dmaio_model_close(m);
	close(good);
	close(bad);
	assert_int_equal(test_count_fds(), fds0 - 2); /* fds0 counted good and bad */
}

/* Reasons belong to the call: threads refusing different files at once each read their own. */
struct why_thread {
	int fd;
	const char *part;
	unsigned bad;
};

static void *why_thread_main(void *arg)
{
	struct why_thread *w = arg;

	for (int i = 0; i < 200; i++) {
		struct dmaio_reason why = { .struct_size = sizeof(why) };
		struct dmaio_model *m = NULL;

		if (dmaio_model_open(ctx, &w->fd, 1, 0, &m, &why) >= 0 || !strstr(why.text, w->part))
			w->bad++;
		dmaio_model_close(m);
	}
	return NULL;
}

static void test_reason_threads(void **state)
{
	struct why_thread w[4] = {
		{ gg_misaligned(), "offset 68", 0 },
		{ gg_dup_key(), "key \"k\" appears twice", 0 },
		{ gg_block(), "ne[0] 48", 0 },
		{ gg_v4(), "GGUF version 4", 0 },
	};
	pthread_t th[4];

	(void)state;
	for (int i = 0; i < 4; i++)
		assert_int_equal(pthread_create(&th[i], NULL, why_thread_main, &w[i]), 0);
	for (int i = 0; i < 4; i++) {
		assert_int_equal(pthread_join(th[i], NULL), 0);
		assert_int_equal(w[i].bad, 0);
		close(w[i].fd);
	}
}

/* A fuzzer's find: a GGUF v3 file of no tensor and no key (49 bytes: the header, then bytes no
 * field owns) copied a table of no tensor from a NULL array. It is a model of no tensor (alone,
 * and as a shard before and after one with tensors), loaded into no buffer. */
static void test_empty_model(void **state)
{
	struct sb b = { 0 };
	struct gg_tensor ts[ARRAY_SIZE(gg_all)];
	size_t n = gg_tensors_all(ts);
	int empty, good = write_gguf(3, 0, ts, n, false, SEED_FILE, NULL), fds[2];
	struct dmaio_model *m = NULL;
	struct dmaio_model_file_info fi = { .struct_size = sizeof(fi) };
	struct dmaio_reason why = { .struct_size = sizeof(why) };
	int fds0 = test_count_fds();

	(void)state;
	sb_put(&b, "GGUF", 4);
	sb_u32(&b, 3);
	sb_u64(&b, 0);
	sb_u64(&b, 0);
	for (int i = 0; i < 25; i++)
		sb_u8(&b, (uint8_t)(0xa5 ^ i));
	assert_int_equal(b.n, 49);
	empty = write_model(&b, 0, 0);
	sb_free(&b);
	assert_int_equal(dmaio_model_open(ctx, &empty, 1, 0, &m, &why), 0);
	assert_int_equal(dmaio_model_tensor_count(m), 0);
	assert_int_equal(dmaio_model_file_count(m), 1);
	assert_int_equal(dmaio_model_find_tensor(m, "x"), -ENOENT);
	assert_int_equal(dmaio_model_get_file(m, 0, &fi), 0);
	assert_int_equal(fi.ntensors, 0);
	assert_int_equal(fi.data_size, 0);
	assert_int_equal(fi.file_size, 49);
	assert_int_equal(fi.alignment, 32);
	for (uint32_t mode = DMAIO_LOAD_WHOLE; mode <= DMAIO_LOAD_PACKED; mode++) {
		struct dmaio_load_opts o = load_opts(true);
		struct dmaio_load_stats st = { .struct_size = sizeof(st) };
		struct dmaio_load *l = NULL;

		o.mode = mode;
		assert_int_equal(dmaio_model_load(m, &o, &l, &why), 0);
		assert_int_equal(dmaio_load_buf_count(l), 0);
		assert_int_equal(dmaio_load_get_stats(l, &st), 0);
		assert_int_equal(st.bytes, 0);
		assert_int_equal(st.buffers, 0);
		dmaio_load_free(l);
	}
	dmaio_model_close(m);
	/* a shard of no tensor after one with tensors, and before */
	for (int k = 0; k < 2; k++) {
		fds[k] = empty;
		fds[1 - k] = good;
		assert_int_equal(dmaio_model_open(ctx, fds, 2, 0, &m, &why), 0);
		assert_int_equal(dmaio_model_tensor_count(m), (int)n);
		assert_int_equal(dmaio_model_find_tensor(m, ts[0].name), 0);
		assert_int_equal(dmaio_model_get_file(m, (uint32_t)k, &fi), 0);
		assert_int_equal(fi.ntensors, 0);
		dmaio_model_close(m);
	}
#ifdef TEST_HAVE_JANSSON
	{
		/* safetensors: "{}" and no data */
		int st = write_st("{}", 0, 0);

		assert_int_equal(dmaio_model_open(ctx, &st, 1, 0, &m, &why), 0);
		assert_int_equal(dmaio_model_tensor_count(m), 0);
		dmaio_model_close(m);
		close(st);
	}
#endif
	close(empty);
	close(good);
	assert_int_equal(test_count_fds(), fds0 - 1); /* fds0 counted good */
}

/* The name a buffer carries: "name:" of its fdinfo (DMA_BUF_SET_NAME), else its memfd name. */
static void buf_name(struct dmaio_buf *b, char *out, size_t len)
{
	char path[64], line[256];
	FILE *f;
	ssize_t n;

	out[0] = 0;
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", dmaio_buf_fd(b));
	f = fopen(path, "re");
	while (f && fgets(line, sizeof(line), f))
		if (strncmp(line, "name:", 5) == 0) {
			snprintf(out, len, "%s", line + 5 + strspn(line + 5, " \t"));
			out[strcspn(out, "\n")] = 0;
		}
	if (f)
		fclose(f);
	if (out[0])
		return;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", dmaio_buf_fd(b));
	n = readlink(path, line, sizeof(line) - 1);
	if (n > 0 && strncmp(line, "/memfd:", 7) == 0) {
		line[n] = 0;
		snprintf(out, len, "%s", line + 7);
		out[strcspn(out, " ")] = 0; /* " (deleted)" */
	}
}

/* The buffers of a load are named after it, or as dmaio_load_opts.alloc->name says. */
static void test_buf_names(void **state)
{
	struct gg_tensor ts[ARRAY_SIZE(gg_all)];
	size_t n = gg_tensors_all(ts);
	int fd = write_gguf(3, 0, ts, n, false, SEED_FILE, NULL);
	struct dmaio_alloc_opts ao = heap_opts;
	struct dmaio_model *m = NULL;
	static const char *const names[] = { NULL, "my-weights" };

	(void)state;
	assert_int_equal(open_one(fd, &m), 0);
	for (size_t k = 0; k < ARRAY_SIZE(names); k++) {
		struct dmaio_load_opts o = load_opts(false);
		struct dmaio_load *l = NULL;
		char name[256];
		int r;

		ao.name = names[k];
		o.alloc = &ao;
		o.mode = DMAIO_LOAD_PER_TENSOR;
		r = dmaio_model_load(m, &o, &l, NULL);
		if (r < 0 && test_is_skip_err(r) && !test_expect_devices()) {
			dmaio_model_close(m);
			close(fd);
			skip();
		}
		assert_int_equal(r, 0);
		for (int b = 0; b < dmaio_load_buf_count(l); b++) {
			buf_name(lbuf(l, (unsigned)b), name, sizeof(name));
			if (b == 0)
				printf("# %s buffers are named \"%s\"\n",
				       dmaio_buf_provider(lbuf(l, 0)), name);
			/* unnamed by the caller: dma-bufs are named after the load (best effort:
			 * DMA_BUF_SET_NAME after allocation), a memfd keeps the library's
			 * default name of its creation */
			assert_string_equal(name, names[k] ? names[k] :
					    dmaio_buf_kind(lbuf(l, (unsigned)b)) == DMAIO_BUF_MEMFD ?
					    "libdmaio" : "dmaio-model");
		}
		dmaio_load_free(l);
	}
	dmaio_model_close(m);
	close(fd);
}

/* ---- loading -------------------------------------------------------------------------------- */
static void check_load(struct dmaio_model *m, struct dmaio_load *l, const uint64_t *seeds,
			   const uint32_t *sel, unsigned nsel, uint32_t mode, uint64_t align,
			   uint64_t max_buf)
{
	int nt = dmaio_model_tensor_count(m), nb = dmaio_load_buf_count(l);
	void **maps = calloc((size_t)nb + 1, sizeof(void *));
	uint64_t *covered = calloc((size_t)nb + 1, sizeof(uint64_t));
	struct dmaio_load_stats st = { .struct_size = sizeof(struct dmaio_load_stats) };

	assert_non_null(maps);
	for (int b = 0; b < nb; b++) {
		struct dmaio_buf *buf = lbuf(l, (unsigned)b);

		assert_int_equal(dmaio_buf_map(buf, &maps[b]), 0);
		assert_int_equal(dmaio_buf_sync_begin(buf, DMAIO_SYNC_READ), 0);
		if (mode == DMAIO_LOAD_PACKED)
			assert_true((uint64_t)dmaio_buf_size(buf) <= max_buf);
	}
	for (int i = 0; i < nt; i++) {
		struct dmaio_tensor_info ti = { .struct_size = sizeof(struct dmaio_tensor_info) };
		struct dmaio_tensor_place pl = { .struct_size = sizeof(struct dmaio_tensor_place) };
		bool selected = !sel;
		int r;

		for (unsigned k = 0; sel && k < nsel; k++)
			selected |= sel[k] == (uint32_t)i;
		assert_int_equal(dmaio_model_get_tensor(m, (unsigned)i, &ti), 0);
		r = dmaio_load_get_tensor(l, (unsigned)i, &pl);
		if (!selected) {
			assert_int_equal(r, -ENOENT);
			continue;
		}
		assert_int_equal(r, 0);
		assert_int_equal(pl.nbytes, ti.nbytes);
		if (ti.nbytes == 0) {
			assert_null(pl.buf);
			continue;
		}
		assert_non_null(pl.buf);
		assert_ptr_equal(lbuf(l, pl.buf_index), pl.buf);
		assert_true(pl.offset + pl.nbytes <= (uint64_t)dmaio_buf_size(pl.buf));
		if (mode == DMAIO_LOAD_PACKED)
			assert_int_equal(pl.offset % align, 0);
		if (mode == DMAIO_LOAD_PER_TENSOR)
			assert_int_equal(pl.offset, 0);
		covered[pl.buf_index] += pl.nbytes;
		long long at = pat_check((char *)maps[pl.buf_index] + pl.offset, (size_t)pl.nbytes,
					 seeds[ti.file], ti.offset);
		if (at >= 0) {
			test_fail("tensor %s: byte %lld of %llu wrong in buffer %u", ti.name, at,
				  (unsigned long long)pl.nbytes, pl.buf_index);
			if (test_fail_printing())
				pat_report(ti.name, (char *)maps[pl.buf_index] + pl.offset,
					   (size_t)pl.nbytes, seeds[ti.file], ti.offset, at, false);
		}
	}
	/* the bytes of a PACKED/PER_TENSOR buffer outside every tensor were never written */
	for (int b = 0; b < nb && mode != DMAIO_LOAD_WHOLE; b++) {
		size_t sz = dmaio_buf_size(lbuf(l, (unsigned)b));
		size_t zeros = 0;

		for (size_t k = 0; k < sz; k++)
			zeros += ((unsigned char *)maps[b])[k] == 0;
		/* the pattern has zero bytes too: only "at least the padding is zero" is exact */
		assert_true(zeros >= sz - covered[b]);
	}
	for (int b = 0; b < nb; b++) {
		struct dmaio_buf *buf = lbuf(l, (unsigned)b);

		assert_int_equal(dmaio_buf_sync_end(buf, DMAIO_SYNC_READ), 0);
		assert_int_equal(dmaio_buf_unmap(buf), 0);
	}
	assert_int_equal(dmaio_load_get_stats(l, &st), 0);
	assert_int_equal(st.buffers, (uint64_t)nb);
	uint64_t pb = 0;

	for (uint32_t p = 0; p < DMAIO_PATH_SLOTS; p++)
		pb += st.path_bytes[p];
	assert_int_equal(pb, st.bytes);
	free(maps);
	free(covered);
}

static void test_load(void **state)
{
	struct shards s;
	struct dmaio_model *m = NULL;
	int fds0, nt;
	static const struct {
		uint32_t mode, align;
		uint64_t max_buf;
		bool select;
	} cases[] = {
		{ DMAIO_LOAD_WHOLE, 0, 0, false },
		{ DMAIO_LOAD_PER_TENSOR, 0, 0, false },
		{ DMAIO_LOAD_PACKED, 0, 0, false },
		/* max_buf 1: the largest tensor + 4 KiB, or a third of the model (see below) */
		{ DMAIO_LOAD_PACKED, 1, 1, false },
		{ DMAIO_LOAD_PACKED, 4096, 1, false },
		{ DMAIO_LOAD_PACKED, 256, 1, true },
		{ DMAIO_LOAD_PER_TENSOR, 0, 0, true },
	};
	unsigned before;

	(void)state;
	make_shards(&s, false);
	assert_int_equal(dmaio_model_open(ctx, s.fds, 3, 0, &m, NULL), 0);
	close_shards(&s);
	nt = dmaio_model_tensor_count(m);
	fds0 = test_count_fds();
	/* the limited PACKED cases: the largest tensor must fit, the model must not */
	uint64_t biggest = 0, total = 0;

	for (int i = 0; i < nt; i++) {
		struct dmaio_tensor_info ti = { .struct_size = sizeof(struct dmaio_tensor_info) };

		assert_int_equal(dmaio_model_get_tensor(m, (unsigned)i, &ti), 0);
		biggest = ti.nbytes > biggest ? ti.nbytes : biggest;
		total += ti.nbytes;
	}
	for (size_t c = 0; c < ARRAY_SIZE(cases); c++) {
		struct dmaio_load_opts o = { .struct_size = sizeof(struct dmaio_load_opts) };
		struct dmaio_load *l = NULL;
		uint32_t sel[64];
		unsigned nsel = 0;
		int r;

		o = load_opts(true);
		o.mode = cases[c].mode;
		o.align = cases[c].align;
		o.max_buf = cases[c].max_buf;
		if (o.max_buf) {
			o.max_buf = biggest + (o.align > 4096 ? o.align : 4096);
			if (o.max_buf < total / 3)
				o.max_buf = total / 3;
		}
		o.depth = 8;
		if (cases[c].select) {
			for (int i = nt - 1; i >= 0 && nsel < ARRAY_SIZE(sel); i -= 3)
				sel[nsel++] = (uint32_t)i;
			o.select = sel;
			o.nselect = nsel;
		}
		r = dmaio_model_load(m, &o, &l, NULL);
		if (r < 0 && test_is_skip_err(r) && !test_expect_devices()) {
			printf("# SKIP: %s: %s\n", args.heap, test_errname(r));
			dmaio_model_close(m);
			skip();
		}
		assert_int_equal(r, 0);
		if (o.max_buf && !o.select) /* the limit splits the model */
			assert_true(dmaio_load_buf_count(l) >= 2);
		printf("# mode %u align %u max_buf %llu%s: %d buffers\n", o.mode, o.align,
		       (unsigned long long)o.max_buf, o.select ? " selected" : "",
		       dmaio_load_buf_count(l));
		before = test_failures();
		check_load(m, l, s.seeds, o.select, nsel, o.mode, o.align ? o.align : 1,
			   o.max_buf ? o.max_buf : (uint64_t)1 << 40);
		assert_no_failures_since(before);
		dmaio_load_free(l);
		assert_int_equal(test_count_fds(), fds0);
	}
	dmaio_model_close(m);
}

/* PACKED into the caller's buffers: byte-exact, the buffers stay the caller's (a second load into
 * them works, dmaio_load_free() leaves them), too small is -ENOSPC with nothing read, and the
 * option's argument rules. */
static void test_load_into(void **state)
{
	struct shards s;
	struct dmaio_model *m = NULL;
	struct dmaio_buf *b[2] = { NULL, NULL }, *tiny = NULL, *none[1] = { NULL };
	struct dmaio_load_opts o = { .struct_size = sizeof(struct dmaio_load_opts) };
	struct dmaio_load *l = NULL;
	uint64_t total = 0;
	unsigned before;
	int nt, fds0;
	void *map;

	(void)state;
	make_shards(&s, false);
	assert_int_equal(dmaio_model_open(ctx, s.fds, 3, 0, &m, NULL), 0);
	close_shards(&s);
	nt = dmaio_model_tensor_count(m);
	for (int i = 0; i < nt; i++) {
		struct dmaio_tensor_info ti = { .struct_size = sizeof(struct dmaio_tensor_info) };

		assert_int_equal(dmaio_model_get_tensor(m, (unsigned)i, &ti), 0);
		total += ti.nbytes;
	}
	/* two buffers: the first takes about half, the rest goes to the second (with room for
	 * the placement at each tensor's file phase: up to 4 KiB per tensor that does not follow
	 * its neighbour in the file) */
	if (t_alloc(ctx, args.heap_name, (size_t)(total / 2 + 65536), 0, &b[0])) {
		dmaio_model_close(m);
		skip();
	}
	assert_int_equal(t_alloc(ctx, args.heap_name, (size_t)(total + ((uint64_t)nt << 12)), 0, &b[1]), 0);
	fds0 = test_count_fds();
	for (int round = 0; round < 2; round++) {
		o = load_opts(false);
		o.mode = DMAIO_LOAD_PACKED;
		o.align = 64;
		o.bufs = b;
		o.nbufs = 2;
		o.flags = DMAIO_LOAD_DROP_CACHE;
		assert_int_equal(dmaio_model_load(m, &o, &l, NULL), 0);
		assert_int_equal(dmaio_load_buf_count(l), 2);
		assert_ptr_equal(lbuf(l, 0), b[0]);
		assert_ptr_equal(lbuf(l, 1), b[1]);
		before = test_failures();
		check_load(m, l, s.seeds, NULL, 0, DMAIO_LOAD_PACKED, 64,
			   total + ((uint64_t)nt << 12));
		assert_no_failures_since(before);
		dmaio_load_free(l);
		l = NULL;
		/* still the caller's */
		assert_int_equal(dmaio_buf_size(b[0]), (size_t)(total / 2 + 65536));
		assert_int_equal(test_count_fds(), fds0);
		printf("# round %d: %d tensors loaded into the caller's 2 buffers\n", round, nt);
	}
	/* too small: -ENOSPC, nothing read into it */
	assert_int_equal(t_alloc(ctx, args.heap_name, 8192, 0, &tiny), 0);
	o = load_opts(false);
	o.mode = DMAIO_LOAD_PACKED;
	o.bufs = &tiny;
	o.nbufs = 1;
	{
		struct dmaio_reason why = { .struct_size = sizeof(why) };

		assert_why(dmaio_model_load(m, &o, &l, &why), -ENOSPC, &why,
			   "the caller's 1 buffers cannot hold", "does not fit");
	}
	assert_null(l);
	assert_int_equal(dmaio_buf_map(tiny, &map), 0);
	assert_int_equal(mem_check_byte(map, 8192, 0), -1);
	/* the rules */
	o.nbufs = 0;
	assert_int_equal(dmaio_model_load(m, &o, &l, NULL), -EINVAL);
	o.nbufs = 1;
	o.mode = DMAIO_LOAD_WHOLE;
	assert_int_equal(dmaio_model_load(m, &o, &l, NULL), -EINVAL);
	o.mode = DMAIO_LOAD_PER_TENSOR;
	assert_int_equal(dmaio_model_load(m, &o, &l, NULL), -EINVAL);
	o.mode = DMAIO_LOAD_PACKED;
	o.max_buf = 1 << 20;
	assert_int_equal(dmaio_model_load(m, &o, &l, NULL), -EINVAL);
	o.max_buf = 0;
	o.bufs = none;
	assert_int_equal(dmaio_model_load(m, &o, &l, NULL), -EINVAL);
	assert_null(l);
	dmaio_buf_free(tiny);
	dmaio_buf_free(b[0]);
	dmaio_buf_free(b[1]);
	dmaio_model_close(m);
}

/* ---- cancellation --------------------------------------------------------------------------- */
struct cancel_state {
	unsigned calls, cancel_at;
	uint64_t last_done, total;
	bool monotonic;
};

static int on_progress(void *arg, uint64_t done, uint64_t total)
{
	struct cancel_state *c = arg;

	if (done < c->last_done || done > total)
		c->monotonic = false;
	c->last_done = done;
	c->total = total;
	return ++c->calls >= c->cancel_at;
}

/* a GGUF file of 16 tensors of 1 MiB (small enough for the VM's 64 MiB CMA area);
 * DMAIO_TEST_MODEL_TENSORS=N (16 to 256) for a larger one */
#define BIG_MAX 256
static int BIG_N = 16;
static int write_big_gguf(uint64_t *bytes)
{
	struct gg_tensor ts[BIG_MAX];
	const char *e = getenv("DMAIO_TEST_MODEL_TENSORS");

	if (e && atoi(e) >= 16 && atoi(e) <= BIG_MAX)
		BIG_N = atoi(e);
	memset(ts, 0, sizeof(ts));
	for (int i = 0; i < BIG_N; i++) {
		snprintf(ts[i].name, sizeof(ts[i].name), "big.%d", i);
		ts[i].ndims = 1;
		ts[i].dims[0] = 256 * 1024;
		ts[i].type = 0;
		ts[i].size = 1u << 20;
		ts[i].offset = UINT64_MAX;
	}
	*bytes = (uint64_t)BIG_N << 20;
	return write_gguf(3, 4096, ts, (size_t)BIG_N, false, SEED_FILE, NULL);
}

/* the model of write_big_gguf() (fd closed), with the context's cached device fds (heaps,
 * udmabuf, DRM) opened by its probes, as PACKED does when it asks for the provider's limit:
 * before a test counts fds */
static void open_big(int fd, struct dmaio_model **m)
{
	struct dmaio_sys_info si = { .struct_size = sizeof(struct dmaio_sys_info) };

	assert_int_equal(open_one(fd, m), 0);
	close(fd);
	assert_int_equal(dmaio_ctx_get_system(ctx, &si), 0);
	assert_true(dmaio_ctx_heap_count(ctx) >= 0);
}

static void test_cancel(void **state)
{
	uint64_t bytes;
	int fd = write_big_gguf(&bytes);
	struct dmaio_model *m = NULL;
	int fds0;
	volatile int flag = 1;

	(void)state;
	open_big(fd, &m);
	fds0 = test_count_fds();
	for (int mode = 0; mode < 3; mode++) {
		struct cancel_state cs = { 0, 1, 0, 0, true };
		struct dmaio_load_opts o = { .struct_size = sizeof(struct dmaio_load_opts) };
		struct dmaio_load *l = NULL;
		int r;

		o = load_opts(true);
		o.mode = (uint32_t)mode;
		o.depth = 2; /* at most 8 ranges not reaped: a 1 MiB range per tensor or buffer */
		if (mode == DMAIO_LOAD_PACKED)
			o.max_buf = 1u << 20;
		o.progress = on_progress;
		o.progress_arg = &cs;
		r = dmaio_model_load(m, &o, &l, NULL);
		if (r < 0 && test_is_skip_err(r) && !test_expect_devices()) {
			dmaio_model_close(m);
			skip();
		}
		printf("# mode %d: cancelled by the callback after %llu of %llu bytes: %s\n", mode,
		       (unsigned long long)cs.last_done, (unsigned long long)cs.total,
		       test_errname(r));
		assert_int_equal(r, -ECANCELED);
		assert_null(l);
		assert_int_equal(cs.calls, 1);
		assert_true(cs.monotonic);
		assert_int_equal(cs.total, bytes);
		if (mode != DMAIO_LOAD_WHOLE) /* 16 ranges, 8 at most done: cancelled mid-load */
			assert_true(cs.last_done <= (8u << 20));
		assert_int_equal(test_count_fds(), fds0);
		/* the flag */
		o = load_opts(true);
		o.mode = (uint32_t)mode;
		o.cancel = &flag;
		r = dmaio_model_load(m, &o, &l, NULL);
		printf("# mode %d: the cancel flag: %s\n", mode, test_errname(r));
		assert_int_equal(r, -ECANCELED);
		assert_null(l);
		assert_int_equal(test_count_fds(), fds0);
		/* the whole load when nothing cancels: progress reaches the total */
		cs = (struct cancel_state){ 0, ~0u, 0, 0, true };
		o = load_opts(true);
		o.mode = (uint32_t)mode;
		if (mode == DMAIO_LOAD_PACKED)
			o.max_buf = 1u << 20;
		o.progress = on_progress;
		o.progress_arg = &cs;
		r = dmaio_model_load(m, &o, &l, NULL);
		printf("# mode %d: not cancelled: %s\n", mode, test_errname(r));
		assert_int_equal(r, 0);
		assert_true(cs.monotonic);
		assert_int_equal(cs.last_done, bytes);
		dmaio_load_free(l);
		assert_int_equal(test_count_fds(), fds0);
	}
	dmaio_model_close(m);
}

#ifdef TEST_MODEL_FAULT
/* ---- injected faults (test-model-fault: the fault-injection build) -------------------------- */
extern unsigned long dmaio_fault_calls;
extern unsigned long dmaio_fault_nth;
extern int dmaio_fault_err;

/* A PACKED load into 1 MiB buffers (16 of them, allocated by the load's preparing thread while
 * the ones before are read) where the n-th call of the syscall seam fails, for samples n of all
 * the calls a load makes (a counting run gives their number), with ENOMEM and with EIO. Every
 * load either fails with a negative errno, returns no load and leaves no fd, or succeeds with
 * every byte of every tensor right. Some of the failures must be the load's own: -ENOMEM from
 * an allocation made while earlier buffers were being read. */
static void test_alloc_fault(void **state)
{
	static const int errs[] = { ENOMEM, EIO };
	uint64_t bytes, seeds[1] = { SEED_FILE };
	int fd = write_big_gguf(&bytes);
	struct dmaio_model *m = NULL;
	struct dmaio_load_opts o = { .struct_size = sizeof(struct dmaio_load_opts) };
	struct dmaio_load *l = NULL;
	struct dmaio_load_stats st = { .struct_size = sizeof(struct dmaio_load_stats) };
	unsigned long calls;
	int fds0;

	(void)state;
	open_big(fd, &m);
	o = load_opts(true);
	o.mode = DMAIO_LOAD_PACKED;
	o.max_buf = 1u << 20;
	o.depth = 4;
	/* warm: the context's ring and caches exist before counting */
	assert_int_equal(dmaio_model_load(m, &o, &l, NULL), 0);
	dmaio_load_free(l);
	fds0 = test_count_fds();
	dmaio_fault_nth = 0;
	dmaio_fault_calls = 0;
	assert_int_equal(dmaio_model_load(m, &o, &l, NULL), 0);
	calls = __atomic_load_n(&dmaio_fault_calls, __ATOMIC_RELAXED);
	assert_int_equal(dmaio_load_get_stats(l, &st), 0);
	assert_int_equal(st.buffers, (uint64_t)BIG_N);
	assert_true(st.alloc_ns > 0);
	assert_true(st.alloc_wait_ns <= st.alloc_ns + st.ns);
	check_load(m, l, seeds, NULL, 0, DMAIO_LOAD_PACKED, 1, o.max_buf);
	dmaio_load_free(l);
	printf("# a load of %d buffers makes %lu seam calls\n", BIG_N, calls);
	assert_true(calls > (unsigned long)BIG_N);
	for (size_t e = 0; e < ARRAY_SIZE(errs); e++) {
		unsigned failed = 0, ok = 0, nomem = 0;
		unsigned long step = calls / 120 + 1;

		for (unsigned long nth = 1; nth <= calls + 2; nth += step) {
			struct dmaio_reason why = { .struct_size = sizeof(why) };
			unsigned before = test_failures();
			int r;

			l = NULL;
			dmaio_fault_calls = 0;
			dmaio_fault_err = errs[e];
			__atomic_store_n(&dmaio_fault_nth, nth, __ATOMIC_SEQ_CST);
			r = dmaio_model_load(m, &o, &l, &why);
			__atomic_store_n(&dmaio_fault_nth, 0, __ATOMIC_SEQ_CST);
			if (r == 0) {
				ok++;
				check_load(m, l, seeds, NULL, 0, DMAIO_LOAD_PACKED, 1, o.max_buf);
				dmaio_load_free(l);
			} else {
				failed++;
				nomem += r == -ENOMEM;
				if (failed <= 2 || (r == -ENOMEM && nomem == 1))
					printf("#   e.g. %s\n", why.text);
				if (r > 0 || l)
					test_fail("call %lu fails with %s: load = %d, load %p", nth,
						  strerror(errs[e]), r, (void *)l);
				/* every failure says why */
				if (why.error != r || !why.text[0])
					test_fail("call %lu fails with %s: load = %s, reason %s \"%s\"",
						  nth, strerror(errs[e]), test_errname(r),
						  test_errname(why.error), why.text);
			}
			if (test_count_fds() != fds0)
				test_fail("call %lu fails with %s: %d fds open, %d before", nth,
					  strerror(errs[e]), test_count_fds(), fds0);
			assert_no_failures_since(before);
		}
		printf("# %s injected: %u loads failed (%u with ENOMEM), %u exact\n", strerror(errs[e]),
		       failed, nomem, ok);
		assert_true(failed > 0);
		if (errs[e] == ENOMEM)
			assert_true(nomem > 0);
	}
	dmaio_fault_err = 0;
	dmaio_model_close(m);
}
#endif

/* ---- page cache ----------------------------------------------------------------------------- */
static long resident_pages(int fd, uint64_t size)
{
	long ps = sysconf(_SC_PAGESIZE), n = 0;
	size_t np = (size_t)((size + (uint64_t)ps - 1) / (uint64_t)ps);
	unsigned char *vec = malloc(np);
	void *p = mmap(NULL, (size_t)size, PROT_READ, MAP_SHARED, fd, 0);

	assert_non_null(vec);
	assert_true(p != MAP_FAILED);
	assert_int_equal(mincore(p, (size_t)size, vec), 0);
	for (size_t i = 0; i < np; i++)
		n += vec[i] & 1;
	munmap(p, (size_t)size);
	free(vec);
	return n;
}

static void test_dropcache(void **state)
{
	uint64_t bytes;
	int fd = write_big_gguf(&bytes);
	struct dmaio_model *m = NULL;
	struct stat st;
	static const uint32_t rw[] = { 0, DMAIO_RW_PATH(DMAIO_PATH_BUFFERED) };

	(void)state;
	assert_int_equal(fstat(fd, &st), 0);
	assert_int_equal(open_one(fd, &m), 0);
	for (size_t k = 0; k < ARRAY_SIZE(rw); k++) {
		struct dmaio_load_opts o = { .struct_size = sizeof(struct dmaio_load_opts) };
		struct dmaio_load *l = NULL;
		long before, after;
		int r;

		assert_int_equal(fdatasync(fd), 0);
		assert_int_equal(posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED), 0);
		before = resident_pages(fd, (uint64_t)st.st_size);
		if (before > 0) {
			printf("# SKIP: this filesystem keeps %ld pages cached after DONTNEED\n", before);
			dmaio_model_close(m);
			close(fd);
			skip();
		}
		o = load_opts(true);
		o.mode = DMAIO_LOAD_PACKED;
		o.flags = DMAIO_LOAD_DROP_CACHE;
		o.rw_flags = rw[k];
		r = dmaio_model_load(m, &o, &l, NULL);
		if (r < 0 && test_is_skip_err(r) && !test_expect_devices()) {
			dmaio_model_close(m);
			close(fd);
			skip();
		}
		assert_int_equal(r, 0);
		after = resident_pages(fd, (uint64_t)st.st_size);
		printf("# rw_flags 0x%x: %ld of %lld pages resident after the load\n", rw[k], after,
		       (long long)(st.st_size / 4096));
		assert_int_equal(after, 0);
		dmaio_load_free(l);
	}
	/* the control: the buffered path without the flag leaves the file cached (the check above
	 * can fail) */
	{
		struct dmaio_load_opts o = { .struct_size = sizeof(struct dmaio_load_opts) };
		struct dmaio_load *l = NULL;

		o = load_opts(true);
		o.mode = DMAIO_LOAD_PACKED;
		o.rw_flags = DMAIO_RW_PATH(DMAIO_PATH_BUFFERED);
		if (dmaio_model_load(m, &o, &l, NULL) == 0) {
			long after = resident_pages(fd, (uint64_t)st.st_size);

			printf("# buffered without the flag: %ld pages resident\n", after);
			assert_true(after > 0);
			dmaio_load_free(l);
		}
	}
	dmaio_model_close(m);
	close(fd);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_st_dtypes), cmocka_unit_test(test_gguf_types),
		cmocka_unit_test(test_malformed), cmocka_unit_test(test_shards),
		cmocka_unit_test(test_args),	  cmocka_unit_test(test_reasons),
		cmocka_unit_test(test_reason_threads), cmocka_unit_test(test_empty_model),
		cmocka_unit_test(test_buf_names),
		cmocka_unit_test(test_load),
		cmocka_unit_test(test_cancel),	  cmocka_unit_test(test_dropcache),
		cmocka_unit_test(test_load_into),
#ifdef TEST_MODEL_FAULT
		cmocka_unit_test(test_alloc_fault),
#endif
	};
	struct dmaio_buf *probe = NULL;
	int rc;

	test_parse_args(argc, argv, &args, "memfd");
	heap_list[0] = args.heap_name;
	heap_opts.providers = args.heap_name ? heap_list : NULL;
	setvbuf(stdout, NULL, _IOLBF, 0);
	rc = dmaio_ctx_new(0, &ctx);
	if (rc) {
		fprintf(stderr, "dmaio_ctx_new = %s\n", test_errname(rc));
		return 1;
	}
	rc = test_alloc_or_skip(ctx, args.heap_name, 4096, 0, &probe);
	if (rc) {
		fprintf(stderr, "dmaio_buf_alloc(%s, 4096) = %s\n", args.heap, test_errname(rc));
		return 1;
	}
	dmaio_buf_free(probe);
	printf("# heap %s, test directory %s\n", args.heap, test_dir());
	if (getenv("DMAIO_TEST_ONLY")) /* e.g. DMAIO_TEST_ONLY=test_cancel */
		cmocka_set_test_filter(getenv("DMAIO_TEST_ONLY"));
#ifdef TEST_MODEL_FAULT
	else /* the rest runs in test-model */
		cmocka_set_test_filter("test_alloc_fault");
#endif
	rc = cmocka_run_group_tests_name(args.heap, tests, NULL, NULL);
	dmaio_ctx_free(ctx);
	test_cleanup();
	return rc ? 1 : 0;
}
