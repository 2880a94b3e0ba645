// The one C header Swift sees for libpq, PostgreSQL's client library (the job queue). libpq's
// API imports as it is; the header only gathers it, as CFFmpeg's does for FFmpeg.
#ifndef VMERGE_CLIBPQ_SHIM_H
#define VMERGE_CLIBPQ_SHIM_H

#include <libpq-fe.h>
#include <postgres_ext.h>

/* The SQLSTATE field of an error result (PG_DIAG_SQLSTATE is a character-literal macro). */
static inline int vm_pg_diag_sqlstate(void) { return PG_DIAG_SQLSTATE; }

#endif
