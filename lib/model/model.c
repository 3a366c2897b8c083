/* SPDX-License-Identifier: MIT */
/*
 * Model files: recognising the format, the tensor table of every shard, the checks shared by
 * the formats (overlap, names), and the accessors.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model.h" /* the public API, then dmaio-types.h */

static const struct dtype_desc dtypes[] = {
	/* id                    name       blck bytes  st     ggml */
	{ DMAIO_DTYPE_F32,      "F32",      1,   4,     true,  true },
	{ DMAIO_DTYPE_F16,      "F16",      1,   2,     true,  true },
	{ DMAIO_DTYPE_Q4_0,     "Q4_0",     32,  18,    false, true },
	{ DMAIO_DTYPE_Q4_1,     "Q4_1",     32,  20,    false, true },
	{ DMAIO_DTYPE_Q5_0,     "Q5_0",     32,  22,    false, true },
	{ DMAIO_DTYPE_Q5_1,     "Q5_1",     32,  24,    false, true },
	{ DMAIO_DTYPE_Q8_0,     "Q8_0",     32,  34,    false, true },
	{ DMAIO_DTYPE_Q8_1,     "Q8_1",     32,  36,    false, true },
	{ DMAIO_DTYPE_Q2_K,     "Q2_K",     256, 84,    false, true },
	{ DMAIO_DTYPE_Q3_K,     "Q3_K",     256, 110,   false, true },
	{ DMAIO_DTYPE_Q4_K,     "Q4_K",     256, 144,   false, true },
	{ DMAIO_DTYPE_Q5_K,     "Q5_K",     256, 176,   false, true },
	{ DMAIO_DTYPE_Q6_K,     "Q6_K",     256, 210,   false, true },
	{ DMAIO_DTYPE_Q8_K,     "Q8_K",     256, 292,   false, true },
	{ DMAIO_DTYPE_IQ2_XXS,  "IQ2_XXS",  256, 66,    false, true },
	{ DMAIO_DTYPE_IQ2_XS,   "IQ2_XS",   256, 74,    false, true },
	{ DMAIO_DTYPE_IQ3_XXS,  "IQ3_XXS",  256, 98,    false, true },
	{ DMAIO_DTYPE_IQ1_S,    "IQ1_S",    256, 50,    false, true },
	{ DMAIO_DTYPE_IQ4_NL,   "IQ4_NL",   32,  18,    false, true },
	{ DMAIO_DTYPE_IQ3_S,    "IQ3_S",    256, 110,   false, true },
	{ DMAIO_DTYPE_IQ2_S,    "IQ2_S",    256, 82,    false, true },
	{ DMAIO_DTYPE_IQ4_XS,   "IQ4_XS",   256, 136,   false, true },
	{ DMAIO_DTYPE_I8,       "I8",       1,   1,     true,  true },
	{ DMAIO_DTYPE_I16,      "I16",      1,   2,     true,  true },
	{ DMAIO_DTYPE_I32,      "I32",      1,   4,     true,  true },
	{ DMAIO_DTYPE_I64,      "I64",      1,   8,     true,  true },
	{ DMAIO_DTYPE_F64,      "F64",      1,   8,     true,  true },
	{ DMAIO_DTYPE_IQ1_M,    "IQ1_M",    256, 56,    false, true },
	{ DMAIO_DTYPE_BF16,     "BF16",     1,   2,     true,  true },
	{ DMAIO_DTYPE_TQ1_0,    "TQ1_0",    256, 54,    false, true },
	{ DMAIO_DTYPE_TQ2_0,    "TQ2_0",    256, 66,    false, true },
	{ DMAIO_DTYPE_MXFP4,    "MXFP4",    32,  17,    false, true },
	{ DMAIO_DTYPE_BOOL,     "BOOL",     1,   1,     true,  false },
	{ DMAIO_DTYPE_U8,       "U8",       1,   1,     true,  false },
	{ DMAIO_DTYPE_U16,      "U16",      1,   2,     true,  false },
	{ DMAIO_DTYPE_U32,      "U32",      1,   4,     true,  false },
	{ DMAIO_DTYPE_U64,      "U64",      1,   8,     true,  false },
	{ DMAIO_DTYPE_F8_E4M3,  "F8_E4M3",  1,   1,     true,  false },
	{ DMAIO_DTYPE_F8_E5M2,  "F8_E5M2",  1,   1,     true,  false },
};

const struct dtype_desc *model_dtype(uint32_t id)
{
	for (size_t i = 0; i < ARRAY_SIZE(dtypes); i++)
		if (dtypes[i].id == id)
			return &dtypes[i];
	return NULL;
}

const struct dtype_desc *model_dtype_by_st_name(const char *name, size_t len)
{
	for (size_t i = 0; i < ARRAY_SIZE(dtypes); i++)
		if (dtypes[i].safetensors && strlen(dtypes[i].name) == len &&
		    memcmp(dtypes[i].name, name, len) == 0)
			return &dtypes[i];
	return NULL;
}

DMAIO_EXPORT const char *dmaio_dtype_name(uint32_t dtype)
{
	const struct dtype_desc *d = model_dtype(dtype);

	return d ? d->name : NULL;
}

int model_pread(int fd, void *dst, size_t len, uint64_t off)
{
	char *p = dst;

	while (len > 0) {
		ssize_t r = pread(fd, p, len, (off_t)off);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return neg_errno();
		}
		if (r == 0)
			return -ENODATA;
		p += r;
		len -= (size_t)r;
		off += (uint64_t)r;
	}
	return 0;
}

/* RFC 3629: no overlong forms, no surrogates, nothing above U+10FFFF */
bool model_utf8_valid(const unsigned char *s, size_t len)
{
	size_t i = 0;

	while (i < len) {
		unsigned c = s[i];
		size_t n;
		uint32_t cp;

		if (c < 0x80) {
			i++;
			continue;
		} else if (c >= 0xc2 && c <= 0xdf) {
			n = 1;
			cp = c & 0x1f;
		} else if (c >= 0xe0 && c <= 0xef) {
			n = 2;
			cp = c & 0x0f;
		} else if (c >= 0xf0 && c <= 0xf4) {
			n = 3;
			cp = c & 0x07;
		} else {
			return false;
		}
		if (len - i - 1 < n)
			return false;
		for (size_t k = 1; k <= n; k++) {
			if ((s[i + k] & 0xc0) != 0x80)
				return false;
			cp = (cp << 6) | (s[i + k] & 0x3f);
		}
		if ((n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000) || cp > 0x10ffff ||
		    (cp >= 0xd800 && cp <= 0xdfff))
			return false;
		i += n + 1;
	}
	return true;
}

int tensor_vec_push(struct tensor_vec *v, struct model_tensor **out)
{
	if (v->n == v->cap) {
		size_t cap = v->cap ? v->cap * 2 : 16;
		struct model_tensor *t = realloc(v->t, cap * sizeof(*t));

		if (!t)
			return -ENOMEM;
		v->t = t;
		v->cap = cap;
	}
	*out = &v->t[v->n++];
	memset(*out, 0, sizeof(**out));
	return 0;
}

void tensor_vec_free(struct tensor_vec *v)
{
	for (size_t i = 0; i < v->n; i++)
		free(v->t[i].name);
	free(v->t);
	v->t = NULL;
	v->n = v->cap = 0;
}

const char *model_show(char out[MODEL_SHOW_MAX], const void *s, size_t len)
{
	const unsigned char *p = s;
	bool utf8 = model_utf8_valid(p, len);
	size_t o = 0, i = 0;

	while (i < len) {
		unsigned c = p[i];
		size_t n = 1, tl;
		char tmp[8];

		if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
			tmp[0] = (char)c;
			tl = 1;
		} else if (c >= 0x80 && utf8) { /* a whole character (checked above) */
			n = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : 2;
			memcpy(tmp, p + i, n);
			tl = n;
		} else {
			tl = (size_t)snprintf(tmp, sizeof(tmp), "\\x%02x", c);
		}
		if (o + tl > MODEL_SHOW_MAX - 4) {
			memcpy(out + o, "...", 4);
			return out;
		}
		memcpy(out + o, tmp, tl);
		o += tl;
		i += n;
	}
	out[o] = 0;
	return out;
}

const char *model_show_shape(char out[MODEL_SHOW_MAX], const uint64_t *shape, uint32_t ndims)
{
	size_t o = 1;

	out[0] = '[';
	for (uint32_t k = 0; k < ndims; k++) {
		char tmp[32];
		int n = snprintf(tmp, sizeof(tmp), "%s%llu", k ? ", " : "",
				 (unsigned long long)shape[k]);

		if (o + (size_t)n > MODEL_SHOW_MAX - 5) {
			memcpy(out + o, "...]", 5);
			return out;
		}
		memcpy(out + o, tmp, (size_t)n);
		o += (size_t)n;
	}
	memcpy(out + o, "]", 2);
	return out;
}

int model_tensor_bytes(const struct dtype_desc *d, const uint64_t *shape, uint32_t ndims,
		       bool ne0_first, uint64_t *nelems, uint64_t *bytes,
		       struct dmaio_reason *why, uint32_t file, const char *name)
{
	char sn[MODEL_SHOW_MAX], ss[MODEL_SHOW_MAX];
	uint64_t ne = 1;

	for (uint32_t i = 0; i < ndims; i++) {
		if (shape[i] != 0 && ne > UINT64_MAX / shape[i])
			return dmaio_reason_set(why, -EOVERFLOW, "file %u: tensor \"%s\": shape %s "
						"has more than 2^64 elements", file,
						model_show(sn, name, strlen(name)),
						model_show_shape(ss, shape, ndims));
		ne *= shape[i];
	}
	if (ne > (uint64_t)INT64_MAX)
		return dmaio_reason_set(why, -EOVERFLOW, "file %u: tensor \"%s\": shape %s has "
					"%llu elements, more than 2^63 - 1", file,
					model_show(sn, name, strlen(name)),
					model_show_shape(ss, shape, ndims), (unsigned long long)ne);
	/* a block type: the innermost dimension is made of whole blocks */
	if (d->blck > 1) {
		uint64_t inner = ndims == 0 ? 1 : ne0_first ? shape[0] : shape[ndims - 1];

		if (inner % d->blck != 0)
			return dmaio_reason_set(why, -EMSGSIZE, "file %u: tensor \"%s\": %s %llu is "
						"not a multiple of the %s block of %u elements",
						file, model_show(sn, name, strlen(name)),
						ndims == 0 ? "a scalar of" : ne0_first ? "ne[0]" :
						"the innermost dimension",
						(unsigned long long)inner, d->name, d->blck);
	}
	if (ne / d->blck > UINT64_MAX / d->bytes)
		return dmaio_reason_set(why, -EOVERFLOW, "file %u: tensor \"%s\": %llu elements of "
					"%s take more than 2^64 bytes", file,
					model_show(sn, name, strlen(name)), (unsigned long long)ne,
					d->name);
	*nelems = ne;
	*bytes = ne / d->blck * d->bytes;
	return 0;
}

static int cmp_offset(const void *a, const void *b)
{
	const struct model_tensor *x = a, *y = b;

	if (x->offset != y->offset)
		return x->offset < y->offset ? -1 : 1;
	if (x->size != y->size)
		return x->size < y->size ? -1 : 1;
	return 0;
}

void model_sort_by_offset(struct tensor_vec *v)
{
	if (v->n > 1)
		qsort(v->t, v->n, sizeof(v->t[0]), cmp_offset);
}

/* ---- open ------------------------------------------------------------------------------------ */
static int cmp_name_idx(const void *a, const void *b, void *arg)
{
	const struct model_tensor *t = arg;
	const uint32_t *x = a, *y = b;

	return strcmp(t[*x].name, t[*y].name);
}

static void model_free(struct dmaio_model *m)
{
	if (!m)
		return;
	for (unsigned i = 0; i < m->nfiles; i++)
		if (m->files[i].fd >= 0)
			close(m->files[i].fd);
	for (uint32_t i = 0; i < m->n; i++)
		free(m->t[i].name);
	free(m->t);
	free(m->files);
	free(m->by_name);
	free(m);
}

static int detect_and_parse(struct model_file *f, uint32_t idx, struct tensor_vec *v,
			    struct dmaio_reason *why)
{
	unsigned char head[9];
	int r;

	if (f->size < 4) /* GGUF needs 4 bytes to be recognised, safetensors 9 */
		return dmaio_reason_set(why, -ENOEXEC, "file %u: not a model: %llu bytes, shorter "
					"than any header", idx, (unsigned long long)f->size);
	r = model_pread(f->fd, head, f->size >= 9 ? 9 : 4, 0);
	if (r < 0)
		return dmaio_reason_set(why, r, "file %u: reading its first bytes: %s", idx,
					strerror(-r));
	if (memcmp(head, "GGUF", 4) == 0)
		return model_parse_gguf(f, idx, v, why);
	/* safetensors: u64 LE length, then a JSON object */
	if (f->size >= 9 && head[8] == '{')
		return model_parse_safetensors(f, idx, v, why);
	return dmaio_reason_set(why, -ENOEXEC, "file %u: not a model: the first bytes are neither "
				"\"GGUF\" nor a safetensors header length followed by '{'", idx);
}

/* the kind of a file that is not a regular file or block device, for a reason */
static const char *file_kind(mode_t mode)
{
	return S_ISDIR(mode) ? "a directory" : S_ISFIFO(mode) ? "a pipe" :
	       S_ISSOCK(mode) ? "a socket" : S_ISCHR(mode) ? "a character device" :
	       "not a regular file or block device";
}

/* Sorted by offset: two tensors whose bytes overlap (a zero-byte tensor inside another one
 * counts) give -EADDRINUSE. */
static int check_overlap(const struct tensor_vec *v, uint32_t file, struct dmaio_reason *why)
{
	for (size_t k = 1; k < v->n; k++) {
		const struct model_tensor *a = &v->t[k - 1], *b = &v->t[k];
		char sa[MODEL_SHOW_MAX], sb[MODEL_SHOW_MAX];

		if (b->offset >= a->offset + a->size)
			continue;
		return dmaio_reason_set(why, -EADDRINUSE, "file %u: tensors \"%s\" [%llu, %llu) and "
					"\"%s\" [%llu, %llu) overlap", file,
					model_show(sa, a->name, strlen(a->name)),
					(unsigned long long)a->offset,
					(unsigned long long)(a->offset + a->size),
					model_show(sb, b->name, strlen(b->name)),
					(unsigned long long)b->offset,
					(unsigned long long)(b->offset + b->size));
	}
	return 0;
}

/* every fd: open for reading, a regular file or a block device */
static int check_fds(const int *fds, uint32_t nfds, struct dmaio_reason *why)
{
	for (uint32_t i = 0; i < nfds; i++) {
		struct stat st;
		int fl;

		if (fds[i] < 0)
			return dmaio_reason_set(why, -EBADF, "file %u: fd %d is negative", i, fds[i]);
		fl = fcntl(fds[i], F_GETFL);
		if (fl < 0)
			return dmaio_reason_set(why, -EBADF, "file %u: fd %d is not open", i, fds[i]);
		if (fl & O_PATH)
			return dmaio_reason_set(why, -EBADF, "file %u: fd %d is an O_PATH descriptor",
						i, fds[i]);
		if ((fl & O_ACCMODE) == O_WRONLY)
			return dmaio_reason_set(why, -EBADF, "file %u: fd %d is not open for reading",
						i, fds[i]);
		if (fstat(fds[i], &st) < 0) {
			int r = neg_errno();

			return dmaio_reason_set(why, r, "file %u: fstat of fd %d: %s", i, fds[i],
						strerror(-r));
		}
		if (!S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode))
			return dmaio_reason_set(why, -ESPIPE, "file %u: fd %d is %s, not a regular file "
						"or block device", i, fds[i],
						file_kind(st.st_mode));
	}
	return 0;
}

/* the library's own descriptor of a shard and its size */
static int open_shard(struct model_file *f, int fd, uint32_t idx, struct dmaio_reason *why)
{
	struct stat st;
	off_t end;
	int r;

	f->fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	if (f->fd < 0) {
		r = errno == EMFILE || errno == ENFILE ? -EMFILE : neg_errno();
		return dmaio_reason_set(why, r, "file %u: duplicating fd %d: %s", idx, fd,
					strerror(errno));
	}
	if (fstat(f->fd, &st) < 0) {
		r = neg_errno();
		return dmaio_reason_set(why, r, "file %u: fstat: %s", idx, strerror(-r));
	}
	if (S_ISBLK(st.st_mode)) {
		end = lseek(f->fd, 0, SEEK_END);
		if (end < 0) {
			r = neg_errno();
			return dmaio_reason_set(why, r, "file %u: the size of the block device: %s",
						idx, strerror(-r));
		}
		f->size = (uint64_t)end;
	} else {
		f->size = (uint64_t)st.st_size;
	}
	return 0;
}

DMAIO_EXPORT int dmaio_model_open(struct dmaio_ctx *ctx, const int *fds, uint32_t nfds,
				  uint32_t flags, struct dmaio_model **model,
				  struct dmaio_reason *reason)
{
	struct dmaio_model *m;
	struct tensor_vec v = { 0 };
	int r;

	if (dmaio_reason_check(reason))
		return -EINVAL;
	dmaio_reason_clear(reason);
	if (!fds)
		return dmaio_reason_set(reason, -EINVAL, "no files (fds NULL)");
	if (!model)
		return dmaio_reason_set(reason, -EINVAL, "no place for the model (model NULL)");
	if (nfds == 0 || nfds > DMAIO_MODEL_MAX_FILES)
		return dmaio_reason_set(reason, -EINVAL, "nfds %u: 1 to %u files", nfds,
					DMAIO_MODEL_MAX_FILES);
	if (flags & ~DMAIO_MODEL_FLAGS_ALL)
		return dmaio_reason_set(reason, -EINVAL, "unknown flags 0x%x",
					flags & ~DMAIO_MODEL_FLAGS_ALL);
	r = check_fds(fds, nfds, reason);
	if (r < 0)
		return r;
	m = calloc(1, sizeof(*m));
	if (!m)
		return dmaio_reason_set(reason, -ENOMEM, "out of memory");
	m->ctx = ctx;
	m->files = calloc(nfds, sizeof(m->files[0]));
	if (!m->files) {
		free(m);
		return dmaio_reason_set(reason, -ENOMEM, "out of memory");
	}
	for (unsigned i = 0; i < nfds; i++)
		m->files[i].fd = -1;
	m->nfiles = nfds;
	for (uint32_t i = 0; i < nfds; i++) {
		struct model_file *f = &m->files[i];
		struct model_tensor *t;

		r = open_shard(f, fds[i], i, reason);
		if (r < 0)
			goto fail;
		r = detect_and_parse(f, i, &v, reason);
		if (r < 0)
			goto fail;
		model_sort_by_offset(&v);
		r = check_overlap(&v, i, reason);
		if (r < 0)
			goto fail;
		if (v.n > DMAIO_MODEL_MAX_TENSORS - m->n) {
			r = dmaio_reason_set(reason, -E2BIG, "file %u: its %zu tensors make the model's "
					     "%llu, above DMAIO_MODEL_MAX_TENSORS (%u)", i, v.n,
					     (unsigned long long)(m->n + v.n),
					     DMAIO_MODEL_MAX_TENSORS);
			goto fail;
		}
		t = realloc(m->t, (m->n + v.n + 1) * sizeof(*t));
		if (!t) {
			r = dmaio_reason_set(reason, -ENOMEM, "out of memory");
			goto fail;
		}
		m->t = t;
		f->first = m->n;
		f->ntensors = (uint32_t)v.n;
		if (v.n) /* a file may have no tensor (and v.t no array) */
			memcpy(m->t + m->n, v.t, v.n * sizeof(*t));
		m->n += (uint32_t)v.n;
		free(v.t);
		v.t = NULL;
		v.n = v.cap = 0;
	}
	m->by_name = malloc((m->n + 1) * sizeof(uint32_t));
	if (!m->by_name) {
		r = dmaio_reason_set(reason, -ENOMEM, "out of memory");
		goto fail;
	}
	for (uint32_t i = 0; i < m->n; i++)
		m->by_name[i] = i;
	if (m->n > 1)
		qsort_r(m->by_name, m->n, sizeof(uint32_t), cmp_name_idx, m->t);
	for (uint32_t i = 1; i < m->n; i++) {
		const struct model_tensor *a = &m->t[m->by_name[i - 1]], *b = &m->t[m->by_name[i]];
		char sn[MODEL_SHOW_MAX];

		if (strcmp(a->name, b->name) != 0)
			continue;
		if (a->file > b->file || (a->file == b->file && a->offset > b->offset)) {
			const struct model_tensor *x = a;

			a = b;
			b = x;
		}
		if (a->file == b->file)
			r = dmaio_reason_set(reason, -EEXIST, "file %u: tensor \"%s\" is named twice "
					     "(at offsets %llu and %llu)", a->file,
					     model_show(sn, a->name, strlen(a->name)),
					     (unsigned long long)a->offset,
					     (unsigned long long)b->offset);
		else
			r = dmaio_reason_set(reason, -EEXIST, "file %u: tensor \"%s\" (offset %llu) "
					     "has the name of a tensor of file %u (offset %llu)",
					     b->file, model_show(sn, b->name, strlen(b->name)),
					     (unsigned long long)b->offset, a->file,
					     (unsigned long long)a->offset);
		goto fail;
	}
	*model = m;
	return 0;
fail:
	tensor_vec_free(&v);
	model_free(m);
	return r;
}

DMAIO_EXPORT void dmaio_model_close(struct dmaio_model *model)
{
	model_free(model);
}

DMAIO_EXPORT int dmaio_model_tensor_count(const struct dmaio_model *model)
{
	if (!model)
		return -EINVAL;
	return (int)model->n;
}

DMAIO_EXPORT int dmaio_model_file_count(const struct dmaio_model *model)
{
	if (!model)
		return -EINVAL;
	return (int)model->nfiles;
}

DMAIO_EXPORT int dmaio_model_get_tensor(const struct dmaio_model *model, uint32_t index,
					struct dmaio_tensor_info *info)
{
	struct dmaio_tensor_info ti = { .struct_size = sizeof(ti) };
	const struct model_tensor *t;

	if (!model || dmaio_abi_check_out(info, DMAIO_SIZE_TENSOR_INFO))
		return -EINVAL;
	if (index >= model->n)
		return -ERANGE;
	t = &model->t[index];
	ti.name = t->name;
	ti.dtype_name = dmaio_dtype_name(t->dtype);
	ti.dtype = t->dtype;
	ti.ndims = t->ndims;
	memcpy(ti.shape, t->shape, sizeof(ti.shape));
	ti.nelems = t->nelems;
	ti.file = t->file;
	ti.format = model->files[t->file].format;
	ti.offset = t->offset;
	ti.nbytes = t->size;
	dmaio_abi_copy_out(info, &ti, sizeof(ti));
	return 0;
}

DMAIO_EXPORT int dmaio_model_find_tensor(const struct dmaio_model *model, const char *name)
{
	size_t lo = 0, hi;

	if (!model || !name)
		return -EINVAL;
	hi = model->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint32_t idx = model->by_name[mid];
		int c = strcmp(name, model->t[idx].name);

		if (c == 0)
			return (int)idx;
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return -ENOENT;
}

DMAIO_EXPORT int dmaio_model_get_file(const struct dmaio_model *model, uint32_t index,
				      struct dmaio_model_file_info *info)
{
	struct dmaio_model_file_info fi = { .struct_size = sizeof(fi) };
	const struct model_file *f;

	if (!model || dmaio_abi_check_out(info, DMAIO_SIZE_MODEL_FILE_INFO))
		return -EINVAL;
	if (index >= model->nfiles)
		return -ERANGE;
	f = &model->files[index];
	fi.format = f->format;
	fi.version = f->version;
	fi.file_size = f->size;
	fi.data_offset = f->data_offset;
	fi.data_size = f->data_size;
	fi.alignment = f->alignment;
	fi.ntensors = f->ntensors;
	dmaio_abi_copy_out(info, &fi, sizeof(fi));
	return 0;
}
