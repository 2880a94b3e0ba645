// The one C header Swift sees for libpq, PostgreSQL's client library (the job queue). libpq's
// API imports as it is; the header only gathers it, as CFFmpeg's does for FFmpeg.
#ifndef VMERGE_CLIBPQ_SHIM_H
#define VMERGE_CLIBPQ_SHIM_H

#include <libpq-fe.h>

#endif
