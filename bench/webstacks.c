/*
 * webstacks: a heap of STACKS distinct call stacks for bench/webpaint.sh (issue 30's
 * 35,000 by default), spread over 16 named functions so that the web UI's views have
 * something real to draw: a call graph of 16 boxes with many edges, a flame graph a few
 * thousand frames wide. Object i is allocated at the end of a path of DEPTH calls (4 by
 * default), the k-th call going to the function named by the k-th hexadecimal digit of
 * i % STACKS (so 16^DEPTH must be at least STACKS); each stack holds LIVE / STACKS objects
 * of 16 to 520 bytes, kept live to the end. Run it at HEAPSIFT_RATE=1 with HEAPSIFT_OUT
 * for an exact profile written at exit.
 *
 * usage: webstacks [LIVE [STACKS [DEPTH]]]   (70000 35000 4)
 */
#include <stdio.h>
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))

typedef void *(*step_fn)(unsigned long id, int depth, size_t size);
static step_fn steps[16];

/* One call deeper, to the function of the next digit; malloc at the end. The empty asm
 * keeps the call a real call (no tail call folding two frames into one). */
static inline void *step(unsigned long id, int depth, size_t size)
{
    void *p =
        depth == 0 ? malloc(size) : steps[(id >> (4 * (depth - 1))) & 15](id, depth - 1, size);
    __asm__ volatile("" : : "r"(p) : "memory");
    return p;
}

#define STEP(name)                                                                                 \
    static NOINLINE void *name(unsigned long id, int depth, size_t size)                           \
    {                                                                                              \
        return step(id, depth, size);                                                              \
    }
STEP(parse_request)
STEP(read_headers)
STEP(decode_body)
STEP(build_index)
STEP(insert_row)
STEP(grow_table)
STEP(cache_lookup)
STEP(cache_fill)
STEP(render_page)
STEP(format_json)
STEP(compress_block)
STEP(load_config)
STEP(spawn_worker)
STEP(queue_push)
STEP(log_event)
STEP(flush_batch)

int main(int argc, char **argv)
{
    unsigned long live = argc > 1 ? strtoul(argv[1], NULL, 10) : 70000;
    unsigned long stacks = argc > 2 ? strtoul(argv[2], NULL, 10) : 35000;
    int depth = argc > 3 ? atoi(argv[3]) : 4;
    step_fn all[16] = {parse_request, read_headers, decode_body,    build_index,
                       insert_row,    grow_table,   cache_lookup,   cache_fill,
                       render_page,   format_json,  compress_block, load_config,
                       spawn_worker,  queue_push,   log_event,      flush_batch};
    if (!stacks || depth < 1 || depth > 15 || (1ul << (4 * depth)) < stacks) {
        fprintf(stderr, "usage: webstacks [LIVE [STACKS [DEPTH]]] (16^DEPTH >= STACKS)\n");
        return 1;
    }
    for (int i = 0; i < 16; i++)
        steps[i] = all[i];
    void **objs = calloc(live, sizeof(*objs));
    if (!objs)
        return 1;
    for (unsigned long i = 0; i < live; i++)
        objs[i] = step(i % stacks, depth, 16 + (i % 64) * 8);
    printf("webstacks: %lu objects from %lu stacks, depth %d\n", live, stacks, depth);
    return 0;
}
