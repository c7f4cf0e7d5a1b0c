/*
 * heapsift diagnose on a live target (docs/diagnose.md, "Live targets"): a PID or an
 * endpoint URL. live.c takes the profiles (one, or a series over --seconds N, the last a
 * leak check with --leak-check) into a temporary directory and hands them to the engine
 * (hs_diagnose_files); live_fetch.c is the HTTP client; live_pid.c finds a process's
 * endpoint or attaches one for the while. main dispatches here when
 * hs_live_is_target says so, else to the diagnose verb.
 */
#ifndef HS_LIVE_H
#define HS_LIVE_H

#include "base/buf.h"

#include <stdbool.h>
#include <stddef.h>

/* True when argv (argv[0] the verb name) names a PID or an http(s):// URL target. */
bool hs_live_is_target(int argc, char **argv);
/* `heapsift diagnose PID|URL [--seconds N] [--leak-check] [--keep DIR] [--json]`. */
int hs_live_diagnose(int argc, char **argv);

/* One GET (post false) or POST with an optional bearer token; the body in out. 0, or -1
 * with a message in err. */
int hs_live_fetch(const char *url, bool post, const char *token, hs_buf_t *out, char *err,
                  size_t errlen);

/* A process's endpoint: base (http://HOST:PORT) and token ("" when none) from its
 * environment (HEAPSIFT_HTTP, HEAPSIFT_HTTP_PORTFILE, HEAPSIFT_HTTP_TOKEN). 0, or -1 when
 * it serves none that can be told. */
int hs_live_pid_endpoint(long pid, char *base, size_t baselen, char *token, size_t toklen);
/* Attaches heapsift to pid with an endpoint on a free loopback port (its port file in
 * dir), the base URL in base. 0, or the attach's exit status. */
int hs_live_pid_attach(long pid, const char *dir, const char *token, char *base, size_t baselen);
/* Detaches what hs_live_pid_attach attached. */
int hs_live_pid_detach(long pid);

#endif
