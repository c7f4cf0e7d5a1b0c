/*
 * hs_diagnose_files (diagnose.h): reads the profiles of a diagnosis from their files and
 * writes the answer. The error line names the file that could not be read. Used by
 * `heapsift diagnose` and the live targets that save what they fetch to files.
 */
#include "diagnose.h"
#include "readers/readers.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int hs_diagnose_files(const char *const *paths, size_t n, const char *target, bool json, FILE *out)
{
    hs_profile_t **p = calloc(n ? n : 1, sizeof(*p));
    hs_diagnosis_t d = {0};
    char err[512];
    int rc = -1;
    if (!p) {
        fprintf(stderr, "heapsift: error: diagnose: %s\n", strerror(ENOMEM));
        goto out;
    }
    for (size_t i = 0; i < n; i++)
        if (hs_profile_read_any(paths[i], &p[i], err, sizeof(err)) != 0) {
            fprintf(stderr, "heapsift: error: %s: %s\n", paths[i], err);
            goto out;
        }
    if (hs_diagnose_profiles(&d, (const hs_profile_t *const *)p, n, err, sizeof(err)) != 0) {
        fprintf(stderr, "heapsift: error: diagnose: %s: %s\n", target, err);
        goto out;
    }
    if ((json ? hs_diagnosis_write_json(&d, target, out)
              : hs_diagnosis_write_text(&d, target, out)) != 0) {
        fprintf(stderr, "heapsift: error: diagnose: %s\n", strerror(EIO));
        goto out;
    }
    rc = 0;
out:
    hs_diagnosis_free(&d);
    for (size_t i = 0; p && i < n; i++)
        hs_profile_free(p[i]);
    free(p);
    return rc;
}
