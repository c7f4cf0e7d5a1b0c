/*
 * Whole-profile input and output of the transforming verbs (see outfile.h): one place
 * that maps reader errors to exit statuses and writes files atomically, so a failed
 * convert never leaves half a file behind.
 */
#include "outfile.h"
#include "cli.h"
#include "base/hugeheap.h"
#include "model/pprof.h"
#include "readers/readers.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define HEAP_BASE ((size_t)8 << 20) /* a small profile's model, report and debug data */

void hs_cli_heap_for(const char *path)
{
    static bool done;
    struct stat st;
    if (done)
        return;
    done = true;
    if (stat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_size >= 0)
        hs_heap_huge(2 * (size_t)st.st_size + HEAP_BASE);
}

int hs_cli_read_profile(const char *path, hs_profile_t **out)
{
    char err[512];
    hs_cli_heap_for(path);
    int rc = hs_profile_read_any(path, out, err, sizeof(err));
    if (rc == 0)
        return 0;
    hs_cli_error("%s: %s", path, err);
    return rc == -EINVAL ? 2 : 3;
}

int hs_cli_write_out(const hs_buf_t *b, const char *path, bool binary)
{
    if (path && strcmp(path, "-") != 0) {
        int rc = hs_write_file_atomic(path, b->data, b->len);
        if (rc) {
            hs_cli_error("%s: %s", path, strerror(-rc));
            return 3;
        }
        return 0;
    }
    if (binary && isatty(STDOUT_FILENO)) {
        hs_cli_error("refusing to write a binary profile to a terminal (use -o FILE)");
        return 1;
    }
    if ((b->len && fwrite(b->data, 1, b->len, stdout) != b->len) || fflush(stdout) != 0) {
        hs_cli_error("stdout: %s", strerror(errno));
        return 3;
    }
    return 0;
}

int hs_cli_write_pprof(const hs_profile_t *p, const char *path)
{
    hs_buf_t pb = HS_BUF_INIT, gz = HS_BUF_INIT;
    int rc = hs_pprof_encode(p, &pb);
    if (rc == 0)
        rc = hs_gzip(pb.data, pb.len, Z_DEFAULT_COMPRESSION, &gz);
    if (rc) {
        hs_cli_error("encoding the profile: %s", strerror(-rc));
        rc = 3;
    } else {
        rc = hs_cli_write_out(&gz, path, true);
    }
    hs_buf_free(&pb);
    hs_buf_free(&gz);
    return rc;
}
