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
    double live_bytes_ci95;             /* the longer side of its 95% interval: hi95 - live */
    double live_objects;                /* live objects: the sampled estimate */
    unsigned long long live_samples;    /* sampled objects still live */
    double peak_bytes;                  /* live bytes at the kept peak (HEAPSIFT_PEAK) */
    unsigned long long rate;            /* the sampling rate now */
    unsigned long long rss;             /* resident set size of the process */
    unsigned long long profiler_bytes;  /* the profiler's own memory (tables, kept peak) */
    unsigned long long dumps;           /* profiles written */
    unsigned long long dump_failures;   /* dumps that failed */
    int active;                         /* 0 after heapsift_set_active(0) */
    /* The 95% interval of live_bytes (exact Poisson limits on its samples: asymmetric when
     * they are few; live_bytes +- live_bytes_ci95 holds it). Once reserved[0..1]. */
    double live_bytes_lo95, live_bytes_hi95;
    unsigned long long reserved[6]; /* zero; room to grow without breaking callers */
};

/* What heapsift_tracker_stats reports: estimates of the live heap allocated under the
 * tracked function (sampled objects still live whose stack passes through it). */
struct heapsift_tracker_stats {
    double bytes;                   /* live bytes (what heapsift_tracker_bytes returns) */
    double bytes_ci95;              /* the longer side of its 95% interval: hi95 - bytes */
    double objects;                 /* live objects */
    unsigned long long samples;     /* live samples the estimates rest on */
    unsigned long long ranges;      /* address ranges of the function's code (copies) */
    double bytes_lo95, bytes_hi95;  /* the 95% interval of bytes; once reserved[0..1] */
    unsigned long long reserved[2]; /* zero; room to grow */
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
/*
 * Leak check: stop the program's other threads, take a copy-on-write snapshot of the
 * process (a fork), let the threads go, scan the snapshot's memory for pointers to the
 * sampled live objects (docs/leaks.md), and write the heap profile with each live sample
 * labelled reachable=yes or reachable=no (`go tool pprof -tagfocus reachable=no`) as it
 * was at the snapshot. path as for heapsift_dump. The scan runs on heapsift's side; the
 * pause it costs, and why the threads stayed stopped throughout where no snapshot could
 * be taken, are in the profile's comments.
 */
int heapsift_leak_check(const char *path);
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

/*
 * Labels: heapsift_label_set(key, value) attaches the string label key=value to every
 * sample the calling thread takes from now on (a key set again takes the new value);
 * the profiles carry them as pprof sample labels (`go tool pprof -tags`, `-tagfocus
 * key=value`). heapsift_label_clear(key) removes that key, heapsift_label_clear(NULL)
 * every label. Per thread (a new thread starts with none), cheap (no lock, no allocation
 * once a label set was seen) and not async-signal-safe. Keys and values are 1 to 255
 * bytes, copied; at most 16 keys per thread (-E2BIG). After 16384 distinct label sets
 * (or 4 MiB of their strings), a thread whose set is new returns -ENOSPC and its samples
 * carry the single label heapsift=label_sets_full until its next set or clear (logged
 * once). Both return 0 or a negative errno (-EINVAL: NULL or bad key or value).
 */
int heapsift_label_set(const char *key, const char *value);
int heapsift_label_clear(const char *key);

/*
 * Trackers: a running estimate of the live heap allocated under one function (its own
 * allocations and its callees'), in O(1), with no profile to dump. heapsift_tracker_new
 * resolves function (as the symbol tables name it: "lru_put", static functions too, their
 * compiler copies, copies inlined where -g DWARF shows them, C++ "ns::Cache::put") in
 * every module loaded now, and counts the live samples already taken under it. Returns a
 * handle (>= 0) or -EINVAL, -ENOENT (no such function), -ENOSPC (32 trackers already) or
 * -ENOMEM. name labels it in the profiles' comments. Costs a scan of the symbol tables.
 * heapsift_tracker_bytes(handle): the estimate in bytes (>= 0), or -EINVAL for a bad
 * handle; two atomic loads. heapsift_tracker_stats fills *out (see above). See
 * docs/labels.md for what is and is not caught.
 */
int heapsift_tracker_new(const char *name, const char *function);
long long heapsift_tracker_bytes(int tracker);
int heapsift_tracker_stats(int tracker, struct heapsift_tracker_stats *out);

#else /* HEAPSIFT_WEAK: the same functions, as stubs over weak references */
#define HEAPSIFT_STUB_(ret, name, params, args, absent)                                            \
    extern ret heapsift_weak_##name##_ params __asm__("heapsift_" #name) __attribute__((weak));    \
    static inline ret heapsift_stub_##name##_ params                                               \
    {                                                                                              \
        return heapsift_weak_##name##_ ? heapsift_weak_##name##_ args : absent;                    \
    }
HEAPSIFT_STUB_(int, dump, (const char *path), (path), -38)
HEAPSIFT_STUB_(int, dump_peak, (const char *path), (path), -38)
HEAPSIFT_STUB_(int, leak_check, (const char *path), (path), -38)
HEAPSIFT_STUB_(int, write, (int fd, int format), (fd, format), -38)
HEAPSIFT_STUB_(int, set_active, (int active), (active), -38)
HEAPSIFT_STUB_(int, reset, (void), (), -38)
HEAPSIFT_STUB_(int, set_rate, (unsigned long long bytes), (bytes), -38)
HEAPSIFT_STUB_(int, stats, (struct heapsift_stats * out), (out), -38)
HEAPSIFT_STUB_(const char *, version, (void), (), (const char *)0)
HEAPSIFT_STUB_(int, label_set, (const char *key, const char *value), (key, value), -38)
HEAPSIFT_STUB_(int, label_clear, (const char *key), (key), -38)
HEAPSIFT_STUB_(int, tracker_new, (const char *name, const char *function), (name, function), -38)
HEAPSIFT_STUB_(long long, tracker_bytes, (int tracker), (tracker), -38)
HEAPSIFT_STUB_(int, tracker_stats, (int tracker, struct heapsift_tracker_stats *out),
               (tracker, out), -38)
#undef HEAPSIFT_STUB_
/* -38 is -ENOSYS on Linux. The names below now call the stubs (function-like macros, so
 * `struct heapsift_stats` keeps its name); heapsift_loaded() says if the library is. */
#define heapsift_dump(path) heapsift_stub_dump_(path)
#define heapsift_dump_peak(path) heapsift_stub_dump_peak_(path)
#define heapsift_leak_check(path) heapsift_stub_leak_check_(path)
#define heapsift_write(fd, format) heapsift_stub_write_(fd, format)
#define heapsift_set_active(active) heapsift_stub_set_active_(active)
#define heapsift_reset() heapsift_stub_reset_()
#define heapsift_set_rate(bytes) heapsift_stub_set_rate_(bytes)
#define heapsift_stats(out) heapsift_stub_stats_(out)
#define heapsift_version() heapsift_stub_version_()
#define heapsift_label_set(key, value) heapsift_stub_label_set_(key, value)
#define heapsift_label_clear(key) heapsift_stub_label_clear_(key)
#define heapsift_tracker_new(name, function) heapsift_stub_tracker_new_(name, function)
#define heapsift_tracker_bytes(tracker) heapsift_stub_tracker_bytes_(tracker)
#define heapsift_tracker_stats(tracker, out) heapsift_stub_tracker_stats_(tracker, out)
#define heapsift_loaded() (heapsift_stub_version_() != (const char *)0)
#endif

#ifdef __cplusplus
}
#endif
#endif
