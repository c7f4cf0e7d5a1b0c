/*
 * What core.h declares and every part of the library reads: the thread's state block
 * (initial-exec TLS) and the global state. Defined here, at the bottom, so that the
 * lowest users (log, threads, descriptors) reach them without reaching the recorder,
 * which owns their meaning (record/recorder.c: hs_init, the sampled path).
 */
#include "core.h"

__thread hs_tls_t hs_tls __attribute__((tls_model("initial-exec")));
int hs_state = HS_STATE_UNINIT;
