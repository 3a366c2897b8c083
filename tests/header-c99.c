/* SPDX-License-Identifier: MIT */
/*
 * The public headers alone, compiled as strict C99 (-std=c99 -pedantic -Werror, see
 * meson.build), without _GNU_SOURCE, then linked and called.
 */
#undef _GNU_SOURCE
#undef _DEFAULT_SOURCE
#include <dmaio.h>
#include <dmaio.h> /* include guard */
#include <dmaio-model.h>
#include <dmaio-model.h> /* include guard */
#include <dmaio-account.h>
#include <dmaio-account.h> /* include guard */

/* the header provides every type it uses; a struct is initialised with its size */
static size_t sizes(void)
{
	struct dmaio_xfer x = { .struct_size = sizeof(struct dmaio_xfer) };
	struct dmaio_stats st = { .struct_size = sizeof(struct dmaio_stats) };
	struct dmaio_sys_info si = { .struct_size = sizeof(struct dmaio_sys_info) };
	struct dmaio_heap_info hi = { .struct_size = sizeof(struct dmaio_heap_info) };
	struct dmaio_file_info fi = { .struct_size = sizeof(struct dmaio_file_info) };
	struct dmaio_reason why = { .struct_size = sizeof(struct dmaio_reason) };
	int64_t r = 0;

	x.done = 0;
	st.ops = 0;
	si.page_size = 0;
	hi.name[0] = 0;
	fi.file_size = 0;
	return sizeof(x) + sizeof(st) + sizeof(si) + sizeof(hi) + sizeof(fi) + (size_t)r +
	       x.done + st.ops + si.page_size + (size_t)hi.name[0] + fi.file_size +
	       why.struct_size;
}

int main(void)
{
	const char *n = dmaio_path_name(DMAIO_PATH_BUFFERED);
	uint32_t fl = DMAIO_RW_PATH(DMAIO_PATH_SENDFILE) | DMAIO_RW_NO_FALLBACK;

	if (!n || dmaio_path_from_name(n) != DMAIO_PATH_BUFFERED)
		return 1;
	if ((fl & ~DMAIO_RW_FLAGS_ALL) != 0 || (DMAIO_ALLOC_FLAGS_ALL & ~0xfu) != 0)
		return 1;
	if (DMAIO_PATH_COUNT != 7 || DMAIO_VERSION_MAJOR != 1)
		return 1;
	/* the library the program runs with is the one of this header (generated from meson.build) */
	if (dmaio_version() != DMAIO_VERSION_NUMBER ||
	    DMAIO_VERSION_NUMBER != DMAIO_VERSION_ENCODE(DMAIO_VERSION_MAJOR, DMAIO_VERSION_MINOR,
							 DMAIO_VERSION_MICRO) ||
	    DMAIO_VERSION_NUMBER < DMAIO_VERSION_ENCODE(1, 0, 0))
		return 1;
	if (DMAIO_FOURCC('N', 'V', '1', '2') != 0x3231564eu || DMAIO_MOD_LINEAR != 0)
		return 1;
	/* the 1.0 sizes (tests/abi/ has the whole ABI; these are the documented minimums, on
	 * LP64) */
	if (sizeof(void *) == 8 &&
	    (DMAIO_SIZE_REASON != 256 || DMAIO_SIZE_ALLOC_OPTS != 24 || DMAIO_SIZE_IMAGE_DESC != 40 ||
	     DMAIO_SIZE_IMAGE_LAYOUT != 120 || DMAIO_SIZE_XFER != 40 || DMAIO_SIZE_IO != 64 ||
	     DMAIO_SIZE_DONE != 56 || DMAIO_SIZE_PROGRESS != 56 || DMAIO_SIZE_STATS != 216 ||
	     DMAIO_SIZE_HEAP_INFO != 88 || DMAIO_SIZE_SYS_INFO != 104 ||
	     DMAIO_SIZE_PROPOSED_INFO != 36 || DMAIO_SIZE_HEAP_PROPOSED != 16 ||
	     DMAIO_SIZE_FILE_INFO != 48 || DMAIO_SIZE_TENSOR_INFO != 128 ||
	     DMAIO_SIZE_MODEL_FILE_INFO != 48 || DMAIO_SIZE_LOAD_OPTS != 88 ||
	     DMAIO_SIZE_TENSOR_PLACE != 32 || DMAIO_SIZE_LOAD_STATS != 200))
		return 1;
	/* a struct's 1.0 size is never more than its size in this header */
	if (sizeof(struct dmaio_io) < DMAIO_SIZE_IO || sizeof(struct dmaio_done) < DMAIO_SIZE_DONE ||
	    sizeof(struct dmaio_stats) < DMAIO_SIZE_STATS || DMAIO_IMAGE_MAX_PLANES != 4 ||
	    DMAIO_BUF_NAME_MAX != 32)
		return 1;
	if (dmaio_model_tensor_count(NULL) != -22 || dmaio_dtype_name(DMAIO_DTYPE_Q4_K) == NULL)
		return 1;
	/* libdmaio-account (1.1) */
	if (sizeof(void *) == 8 &&
	    (DMAIO_SIZE_SNAPSHOT_OPTS != 24 || DMAIO_SIZE_SNAPSHOT_INFO != 88 ||
	     DMAIO_SIZE_SNAPSHOT_BUFFER != 48 || DMAIO_SIZE_SNAPSHOT_HOLDER != 32 ||
	     DMAIO_SIZE_SNAPSHOT_PROCESS != 56 || DMAIO_SIZE_SNAPSHOT_CGROUP != 48 ||
	     sizeof(struct dmaio_snapshot_info) != 96 || sizeof(struct dmaio_snapshot_process) != 64))
		return 1;
	if (dmaio_snapshot_get_info(NULL, NULL) != -22 || dmaio_snapshot_find_buffer(NULL, 1) != -22)
		return 1;
	return sizes() > 0 ? 0 : 1;
}
