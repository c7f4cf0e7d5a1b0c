/*
 * heapsift public API: what a program may call when libheapsift.so is preloaded or linked.
 * Nothing internal lives here. Every function is safe to call from any thread. When the
 * library is absent, declare the functions weak (HEAPSIFT_WEAK) and test them for NULL.
 */
#ifndef HEAPSIFT_H
#define HEAPSIFT_H

#ifdef __cplusplus
extern "C" {
#endif

#define HEAPSIFT_VERSION_MAJOR 0
#define HEAPSIFT_VERSION_MINOR 1

/*
 * Write a heap profile now. path: the file to write (gzipped pprof); NULL means the next
 * name from HEAPSIFT_OUT's pattern. The write is atomic (temporary file, then rename).
 * Returns 0 on success, a negative errno on failure (-ENOTSUP when profiling is off).
 */
int heapsift_dump(const char *path);

/* The library's version as "MAJOR.MINOR.PATCH"; a static string. */
const char *heapsift_version(void);

#ifdef __cplusplus
}
#endif
#endif
