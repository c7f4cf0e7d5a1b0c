/*
 * What dump.c and dump_loc.c share (internal to the preload library): the context a
 * profile is built in, and the locations' side of building it.
 */
#ifndef HS_DUMP_INT_H
#define HS_DUMP_INT_H

#include "base/maps.h"
#include "model/profile.h"
#include "symbolize/symbolize.h"

#include <stdbool.h>
#include <stdint.h>

#define HS_DUMP_UNLOADED 32

/* The live mappings' symbolizer: off (HEAPSIFT_SYMBOLIZE=none), not made yet, made, or
 * failed to be made. */
typedef enum { DUMP_SYM_OFF, DUMP_SYM_LAZY, DUMP_SYM_READY, DUMP_SYM_FAILED } dump_sym_t;

typedef struct {
    hs_profile_t *prof;
    hs_maps_t maps;
    uint64_t *map_ids;    /* mapping id per maps entry, 0 = not added yet */
    hs_symbolizer_t *sym; /* made on the first address the symbol cache lacks */
    dump_sym_t sym_state;
    uint64_t *loc_pc, *loc_id; /* open-addressing (pc, unloaded module) -> location id */
    int32_t *loc_mod;          /* the unloaded module's index + 1, 0 for the live set */
    size_t loc_cap;
    /* Unloaded libraries (modules.c): a mapping and a symbolizer of the file, each made
     * on first use, for the first HS_DUMP_UNLOADED of them. */
    uint64_t umap[HS_DUMP_UNLOADED];
    hs_symbolizer_t *usym[HS_DUMP_UNLOADED];
    bool utried[HS_DUMP_UNLOADED];
    bool reach; /* the exit scan ran: live samples are labelled reachable=yes|no */
    /* The addresses the samples' stacks will ask the symbolizer about (pc - 1 each, NULL
     * when there are too many to be worth it): hs_symbolizer_hint's list. */
    uint64_t *hint;
    size_t nhint;
} dump_ctx_t;

/* HEAPSIFT_SYMBOLIZE's mode, or hs_dumploc_sym_mode when set (the leak report's). */
extern const char *hs_dumploc_sym_mode;
const char *hs_dumploc_sym_mode_now(void);
/* The main executable's mapping first, as pprof expects it. */
void hs_dumploc_main_mapping(dump_ctx_t *c);
/* The location id of pc (unloaded: its unloaded module's index + 1, 0 for the live set),
 * made with its mapping and symbolized on first use; 0 when none can be made. */
uint64_t hs_dumploc_location(dump_ctx_t *c, uint64_t pc, int unloaded);

#endif
