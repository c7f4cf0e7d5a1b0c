/*
 * Reading and writing whole profiles for the verbs that transform them (convert, merge,
 * symbolize): errors are reported through hs_cli_error and come back as the CLI's exit
 * status (2 bad input, 3 I/O), so a verb just returns what these return.
 */
#ifndef HS_CLI_OUTFILE_H
#define HS_CLI_OUTFILE_H

#include "base/buf.h"
#include "model/profile.h"

#include <stdbool.h>

/* Before the first profile is read: gives this process's heap the memory that reading path
 * and building views of it is expected to take (twice the file's size and 8 MiB), in
 * transparent huge pages at once (base/hugeheap.h). Once per process; later calls and an
 * unreadable path do nothing. Not for a process that keeps running (heapsift web). */
void hs_cli_heap_for(const char *path);
/* Reads any profile format (hs_cli_heap_for first); 0, or 2/3 after printing "heapsift: error:
 * PATH: why". */
int hs_cli_read_profile(const char *path, hs_profile_t **out);
/* Writes b to path atomically, or to stdout when path is NULL or "-". binary refuses a
 * terminal as stdout (exit 1). Returns 0 or an exit status. */
int hs_cli_write_out(const hs_buf_t *b, const char *path, bool binary);
/* Encodes p as gzipped protobuf and writes it as above. */
int hs_cli_write_pprof(const hs_profile_t *p, const char *path);

#endif
