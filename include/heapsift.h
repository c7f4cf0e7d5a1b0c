/*
 * heapsift public API: what a program may call when libheapsift.so is preloaded or linked.
 * Nothing internal lives here. Every function is safe to call from any thread (not from a
 * signal handler) and returns 0 or a negative errno; -ENOTSUP means profiling is off
 * (HEAPSIFT_RATE=0, a bad HEAPSIFT_* value, or a failed start).
 *
 * Without the library: define HEAPSIFT_WEAK before including this header. Every function
 * then becomes a static inline stub that calls the library when it is loaded and
 * otherwise returns -ENOSYS (heapsift_version: NULL), through weak references. The
 * program compiles and links with no -lheapsift and runs with or without LD_PRELOAD
 * (position-independent executables, the default on Debian; with -no-pie, link with
 * -Wl,-z,dynamic-undefined-weak).
 */
#ifndef HEAPSIFT_H
#define HEAPSIFT_H

#ifdef __cplusplus
extern "C" {
#endif

#define HEAPSIFT_VERSION_MAJOR 0
#define HEAPSIFT_VERSION_MINOR 1

/* heapsift_write formats */
#define HEAPSIFT_FORMAT_PPROF_GZ 0 /* gzipped pprof, what the profile files hold */
#define HEAPSIFT_FORMAT_PPROF 1    /* uncompressed pprof protobuf */

/* What heapsift_stats reports. Byte counts are requested bytes unless said otherwise. */
struct heapsift_stats {
    unsigned long long allocs;          /* allocation calls since start (exact) */
    unsigned long long frees;           /* free calls of non-NULL pointers (exact) */
    unsigned long long bytes_allocated; /* bytes requested since start (exact) */
    unsigned long long threads;         /* threads that allocated and are alive */
    double live_bytes;                  /* live heap: the sampled estimate */
    double live_bytes_ci95;             /* half-width of its 95% interval */
    double live_objects;                /* live objects: the sampled estimate */
    unsigned long long live_samples;    /* sampled objects still live */
    double peak_bytes;                  /* live bytes at the kept peak (HEAPSIFT_PEAK) */
    unsigned long long rate;            /* the sampling rate now */
    unsigned long long rss;             /* resident set size of the process */
    unsigned long long profiler_bytes;  /* the profiler's own memory (tables, kept peak) */
    unsigned long long dumps;           /* profiles written */
    unsigned long long dump_failures;   /* dumps that failed */
    int active;                         /* 0 after heapsift_set_active(0) */
    unsigned long long reserved[8];     /* zero; room to grow without breaking callers */
};

#ifndef HEAPSIFT_WEAK
/*
 * Write a heap profile now. path: the file to write (gzipped pprof); NULL means the next
 * name from HEAPSIFT_OUT's pattern. The write is atomic (temporary file, then rename).
 * Like write(2) it is a cancellation point, acted on once the profile is complete.
 */
int heapsift_dump(const char *path);
/* Write the kept peak (HEAPSIFT_PEAK=1): the live set at the highest live heap seen
 * (an empty profile if none was kept yet). path as for heapsift_dump, kind "peak". */
int heapsift_dump_peak(const char *path);
/* Write the heap profile to fd (format HEAPSIFT_FORMAT_*); fd stays open. */
int heapsift_write(int fd, int format);
/* Sampling on (non-zero) or off (0). Off, no new allocation is sampled; frees of objects
 * sampled before still leave the live set, and dumps still work. */
int heapsift_set_active(int active);
/* Zero every stack's cumulative counts (alloc_objects, alloc_space) and forget the kept
 * peak; the live set and the exact counters stay. */
int heapsift_reset(void);
/* A new mean sampling period in bytes (1 = every allocation, up to 2^40). Each thread
 * switches at its next sample; weights stay unbiased across the change. */
int heapsift_set_rate(unsigned long long bytes);
/* Fill *out (see struct heapsift_stats). Costs a pass over the live samples. */
int heapsift_stats(struct heapsift_stats *out);
/* The library's version as "MAJOR.MINOR.PATCH"; a static string. */
const char *heapsift_version(void);

#else /* HEAPSIFT_WEAK: the same functions, as stubs over weak references */
#define HEAPSIFT_STUB_(ret, name, params, args, absent)                                            \
    extern ret heapsift_weak_##name##_ params __asm__("heapsift_" #name) __attribute__((weak));    \
    static inline ret heapsift_stub_##name##_ params                                               \
    {                                                                                              \
        return heapsift_weak_##name##_ ? heapsift_weak_##name##_ args : absent;                    \
    }
HEAPSIFT_STUB_(int, dump, (const char *path), (path), -38)
HEAPSIFT_STUB_(int, dump_peak, (const char *path), (path), -38)
HEAPSIFT_STUB_(int, write, (int fd, int format), (fd, format), -38)
HEAPSIFT_STUB_(int, set_active, (int active), (active), -38)
HEAPSIFT_STUB_(int, reset, (void), (), -38)
HEAPSIFT_STUB_(int, set_rate, (unsigned long long bytes), (bytes), -38)
HEAPSIFT_STUB_(int, stats, (struct heapsift_stats * out), (out), -38)
HEAPSIFT_STUB_(const char *, version, (void), (), (const char *)0)
#undef HEAPSIFT_STUB_
/* -38 is -ENOSYS on Linux. The names below now call the stubs (function-like macros, so
 * `struct heapsift_stats` keeps its name); heapsift_loaded() says if the library is. */
#define heapsift_dump(path) heapsift_stub_dump_(path)
#define heapsift_dump_peak(path) heapsift_stub_dump_peak_(path)
#define heapsift_write(fd, format) heapsift_stub_write_(fd, format)
#define heapsift_set_active(active) heapsift_stub_set_active_(active)
#define heapsift_reset() heapsift_stub_reset_()
#define heapsift_set_rate(bytes) heapsift_stub_set_rate_(bytes)
#define heapsift_stats(out) heapsift_stub_stats_(out)
#define heapsift_version() heapsift_stub_version_()
#define heapsift_loaded() (heapsift_stub_version_() != (const char *)0)
#endif

#ifdef __cplusplus
}
#endif
#endif
