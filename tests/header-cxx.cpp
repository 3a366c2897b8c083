// SPDX-License-Identifier: MIT
//
// The public headers compiled as C++ (-pedantic -Werror, see meson.build), linked and called:
// proves the extern "C" blocks and that nothing in them is C-only.
#include <dmaio.h>
#include <dmaio-model.h>
#include <dmaio-account.h>
#include <cstring>

int main()
{
	const char *n = dmaio_path_name(DMAIO_PATH_SENDFILE);
	dmaio_stats st{};
	dmaio_xfer x{};
	dmaio_buf *buf = nullptr;
	int kind = DMAIO_BUF_MEMFD;
	uint32_t fl = DMAIO_RW_PATH(DMAIO_PATH_BUFFERED) | DMAIO_RW_NO_FALLBACK;

	st.struct_size = sizeof st;
	x.struct_size = sizeof x;
	if (!n || std::strcmp(n, "sendfile") != 0)
		return 1;
	if (dmaio_path_from_name("sendfile") != DMAIO_PATH_SENDFILE)
		return 1;
	if (dmaio_buf_get_stats(buf, &st) >= 0 || x.done != 0 || kind != 5 || (fl & ~DMAIO_RW_FLAGS_ALL))
		return 1;
	dmaio_load_opts lo{};
	dmaio_model *m = nullptr;
	lo.struct_size = sizeof lo;
	lo.mode = DMAIO_LOAD_PACKED;
	if (dmaio_model_tensor_count(m) >= 0 || std::strcmp(dmaio_dtype_name(DMAIO_DTYPE_BF16), "BF16") != 0 ||
	    lo.mode != 2 || DMAIO_SIZE_LOAD_OPTS > sizeof lo)
		return 1;
	dmaio_snapshot_opts so{};
	so.struct_size = sizeof so;
	so.source = DMAIO_SNAPSHOT_PROC;
	dmaio_snapshot *snap = nullptr;
	if (dmaio_snapshot_new(&so, nullptr, nullptr) != -22 || snap != nullptr ||
	    DMAIO_SIZE_SNAPSHOT_OPTS > sizeof so)
		return 1;
	return 0;
}
