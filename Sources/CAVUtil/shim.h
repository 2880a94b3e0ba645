// The part of libavutil that VMergeCore sees: its hashes, so that vmerge carries no digest code of
// its own (Foundation has none on Linux). Only libavutil, not the media libraries, so the pure logic
// stays apart from decoding and muxing. What is declared here reads the same in every FFmpeg vmerge
// supports (5.1 to 9.x; av_sha_update's length has been a size_t since 5.0, av_hmac's lengths are
// unsigned ints throughout), so this shim wraps nothing; the media libraries' differences live in
// CFFmpeg's shim. hmac.h is for the webhooks' signatures (issue 46).
#ifndef VMERGE_CAVUTIL_SHIM_H
#define VMERGE_CAVUTIL_SHIM_H

#include <libavutil/hmac.h>
#include <libavutil/mem.h>
#include <libavutil/sha.h>

#endif
