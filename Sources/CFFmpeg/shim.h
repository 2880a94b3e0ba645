// The one C header Swift sees for FFmpeg. It includes what vmerge uses and wraps, as static
// inline functions, what Swift cannot import: function-like macros (AVERROR, AVERROR_EOF,
// AV_NOPTS_VALUE, AV_TIME_BASE_Q), bitfields, and the API differences between FFmpeg 5.1,
// 6.x, 7.x, 8.x and 9.x. Swift code never needs `#if` on FFmpeg versions: that all lives here.
#ifndef VMERGE_CFFMPEG_SHIM_H
#define VMERGE_CFFMPEG_SHIM_H

#include <errno.h>
#include <stdio.h>
#include <libavcodec/avcodec.h>
#include <libavfilter/avfilter.h>
#include <libavfilter/buffersink.h>
#include <libavfilter/buffersrc.h>
#include <libavformat/avformat.h>
#include <libavutil/audio_fifo.h>
#include <libavutil/channel_layout.h>
#include <libavutil/cpu.h>
#include <libavutil/display.h>
#include <libavutil/dovi_meta.h>
#include <libavutil/opt.h>
#include <libavutil/pixdesc.h>
#include <libavutil/samplefmt.h>
#include <libswresample/swresample.h>
#include <libswscale/swscale.h>

// MARK: error codes and constants

/* swscale's flags: macros up to FFmpeg 7, `enum SwsFlags` from 8.0 (which Swift imports as a type
   of its own): as plain ints on every version. */
static inline int vm_sws_bilinear(void) { return SWS_BILINEAR; }

static inline int vm_averror_eagain(void) { return AVERROR(EAGAIN); }
static inline int vm_averror_eof(void) { return AVERROR_EOF; }
static inline int vm_averror_enomem(void) { return AVERROR(ENOMEM); }
static inline int vm_averror_invaliddata(void) { return AVERROR_INVALIDDATA; }
static inline int64_t vm_nopts(void) { return AV_NOPTS_VALUE; }
static inline AVRational vm_time_base_q(void) { return AV_TIME_BASE_Q; }

// MARK: frames

/// Whether a decoded picture is a keyframe (IDR/IRAP, or an H.264 recovery point): the flag moved
/// from AVFrame.key_frame into AVFrame.flags in FFmpeg 6.1 (key_frame is gone in 8.0).
static inline int vm_frame_is_key(const AVFrame *f) {
#ifdef AV_FRAME_FLAG_KEY
    return (f->flags & AV_FRAME_FLAG_KEY) != 0;
#else
    return f->key_frame != 0;
#endif
}

// MARK: filter graphs

/* The video buffer source's colour parameters for the frame a graph is made for, as filter
   arguments (":colorspace=1:range=1", numbers so every version parses them). libavfilter 9.16
   (FFmpeg 7.0) added these options, and from 7.1 format negotiation carries colour space and range
   through the graph from them: left unset, every picture reads as unknown there, and the scaler
   converts BT.709 as BT.601 and full range as limited. Before 9.16 there are no such options and
   the filters read each frame's own. */
static inline void vm_buffersrc_colour_args(const AVFrame *f, char *buf, size_t size) {
    if (!size) return;
    buf[0] = 0;
#if LIBAVFILTER_VERSION_INT >= AV_VERSION_INT(9, 16, 100)
    snprintf(buf, size, ":colorspace=%d:range=%d", (int)f->colorspace, (int)f->color_range);
#else
    (void)f;
#endif
}

// MARK: display matrix (stream side data until 6.0; codecpar->coded_side_data from 6.1 on,
// where av_stream_get_side_data is deprecated and then removed in 7.0)

static inline const int32_t *vm_stream_display_matrix(const AVStream *st) {
#if LIBAVCODEC_VERSION_MAJOR > 60 || (LIBAVCODEC_VERSION_MAJOR == 60 && LIBAVCODEC_VERSION_MINOR >= 31)
    const AVPacketSideData *sd = av_packet_side_data_get(st->codecpar->coded_side_data,
                                                         st->codecpar->nb_coded_side_data,
                                                         AV_PKT_DATA_DISPLAYMATRIX);
    if (sd && sd->size >= (size_t)(9 * sizeof(int32_t)))
        return (const int32_t *)sd->data;
    return NULL;
#else
    size_t size = 0;
    const uint8_t *data = av_stream_get_side_data(st, AV_PKT_DATA_DISPLAYMATRIX, &size);
    if (data && size >= 9 * sizeof(int32_t))
        return (const int32_t *)data;
    return NULL;
#endif
}

// MARK: Dolby Vision configuration (same side-data move as the display matrix)

/// The stream's Dolby Vision profile (5, 8, ...), or -1; `compatibility` receives the base
/// layer's signal compatibility id (8.1 = HDR10, 8.2 = SDR, 8.4 = HLG).
static inline int vm_stream_dovi_profile(const AVStream *st, int *compatibility) {
    const AVDOVIDecoderConfigurationRecord *dovi = NULL;
#if LIBAVCODEC_VERSION_MAJOR > 60 || (LIBAVCODEC_VERSION_MAJOR == 60 && LIBAVCODEC_VERSION_MINOR >= 31)
    const AVPacketSideData *sd = av_packet_side_data_get(st->codecpar->coded_side_data,
                                                         st->codecpar->nb_coded_side_data,
                                                         AV_PKT_DATA_DOVI_CONF);
    if (sd && sd->size >= sizeof(AVDOVIDecoderConfigurationRecord))
        dovi = (const AVDOVIDecoderConfigurationRecord *)sd->data;
#else
    size_t size = 0;
    const uint8_t *data = av_stream_get_side_data(st, AV_PKT_DATA_DOVI_CONF, &size);
    if (data && size >= sizeof(AVDOVIDecoderConfigurationRecord))
        dovi = (const AVDOVIDecoderConfigurationRecord *)data;
#endif
    if (!dovi) return -1;
    if (compatibility) *compatibility = dovi->dv_bl_signal_compatibility_id;
    return dovi->dv_profile;
}

// MARK: index entries (bitfields are not visible to Swift)

/// Byte offset just past the sample an index entry points at.
static inline int64_t vm_index_entry_end(const AVIndexEntry *e) { return e->pos + e->size; }

// MARK: channel layouts (the AV_CHANNEL_LAYOUT_* literals are compound-literal macros)

static inline void vm_channel_layout_default(AVChannelLayout *layout, int channels) {
    av_channel_layout_uninit(layout);
    av_channel_layout_default(layout, channels);
}

/// True when the layout says only how many channels there are, not which ones.
static inline int vm_channel_layout_is_unspecified(const AVChannelLayout *layout) {
    return layout->order == AV_CHANNEL_ORDER_UNSPEC;
}

#endif
