/* SPDX-License-Identifier: MIT */
/* The GStreamer plugin of libdmaio (libgstdmaio.so): dmaiosink and dmaiosrc, on the public API. */
#ifndef GST_DMAIO_H
#define GST_DMAIO_H

#include <gst/gst.h>
#include <gst/base/gstbasesink.h>
#include <gst/base/gstpushsrc.h>

G_BEGIN_DECLS

#define GST_TYPE_DMAIO_SINK (gst_dmaio_sink_get_type())
G_DECLARE_FINAL_TYPE(GstDmaioSink, gst_dmaio_sink, GST, DMAIO_SINK, GstBaseSink)

#define GST_TYPE_DMAIO_SRC (gst_dmaio_src_get_type())
G_DECLARE_FINAL_TYPE(GstDmaioSrc, gst_dmaio_src, GST, DMAIO_SRC, GstPushSrc)

/* qsort comparison of two guint64 */
int gst_dmaio_cmp_u64(const void *a, const void *b);

G_END_DECLS

#endif
