/*
 * Symbolizer benchmark and cross-check: places ELF files as the CLI does (each executable
 * PT_LOAD segment registered with hs_symbolizer_add_file, PIE files 4 GiB apart) and
 * resolves every STEP-th address of their code in a scattered order, as a profile's
 * locations come. Prints the time per address, cold and cached, and the heap in use before
 * the symbolizer is freed; with --print, every frame of every address (address, name,
 * system name, file, line, declaration line), so two builds of the symbolizer can be
 * diffed on the same files. Built and run by bench/symbolize_bench.sh against a build
 * directory's libhs_common.a.
 * Usage: symbolize_bench [--print] [--step N] [--names-only] FILE...
 */
#define _GNU_SOURCE
#include "symbolize/symbolize.h"

#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define SB_MAX_RANGES 256
#define SB_PIE_BIAS 0x555500000000ull

typedef struct {
    uint64_t lo, hi;
} sb_range_t;

static double sb_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Registers path's executable segments; appends their address ranges. 0 or -1. */
static int sb_add(hs_symbolizer_t *s, const char *path, int idx, sb_range_t *r, size_t *nr)
{
    int fd = open(path, O_RDONLY);
    Elf *elf = fd >= 0 ? elf_begin(fd, ELF_C_READ, NULL) : NULL;
    GElf_Ehdr eh;
    size_t nph = 0;
    int rc = -1;
    if (elf == NULL || gelf_getehdr(elf, &eh) == NULL || elf_getphdrnum(elf, &nph) != 0)
        goto out;
    uint64_t bias = eh.e_type == ET_DYN ? SB_PIE_BIAS + ((uint64_t)idx << 32) : 0;
    for (size_t i = 0; i < nph && *nr < SB_MAX_RANGES; i++) {
        GElf_Phdr ph;
        if (gelf_getphdr(elf, (int)i, &ph) == NULL || ph.p_type != PT_LOAD || !(ph.p_flags & PF_X))
            continue;
        uint64_t pad = ph.p_offset & 4095, start = bias + ph.p_vaddr - pad;
        if (hs_symbolizer_add_file(s, path, start, start + pad + ph.p_memsz, ph.p_offset - pad) !=
            0)
            goto out;
        r[(*nr)++] = (sb_range_t){bias + ph.p_vaddr, bias + ph.p_vaddr + ph.p_memsz};
    }
    rc = 0;
out:
    if (elf != NULL)
        elf_end(elf);
    if (fd >= 0)
        close(fd);
    return rc;
}

static void sb_print(uint64_t addr, const hs_symbol_t *f, size_t n)
{
    printf("%#" PRIx64 ":", addr);
    for (size_t i = 0; i < n; i++)
        printf(" | %s [%s] %s:%" PRId64 " (%" PRId64 ")", f[i].name ? f[i].name : "-",
               f[i].system_name ? f[i].system_name : "-", f[i].file ? f[i].file : "-", f[i].line,
               f[i].start_line);
    printf("\n");
}

/* Resolves every step-th address of the ranges in a scattered order; returns seconds. */
static double sb_pass(hs_symbolizer_t *s, const sb_range_t *r, size_t nr, uint64_t step, bool print,
                      size_t *count, size_t *found)
{
    uint64_t total = 0;
    for (size_t i = 0; i < nr; i++)
        total += (r[i].hi - r[i].lo + step - 1) / step;
    const uint64_t stride = 1000003; /* a prime: i * stride % total visits each once */
    double t0 = sb_now();
    *count = *found = 0;
    for (uint64_t i = 0; i < total; i++) {
        uint64_t k = total % stride ? i * stride % total : i, addr = 0;
        for (size_t j = 0; j < nr; j++) {
            uint64_t n = (r[j].hi - r[j].lo + step - 1) / step;
            if (k < n) {
                addr = r[j].lo + k * step;
                break;
            }
            k -= n;
        }
        hs_symbol_t f[64];
        size_t n = hs_symbolize(s, addr, f, 64);
        (*count)++;
        *found += n > 0;
        if (print)
            sb_print(addr, f, n);
    }
    return sb_now() - t0;
}

int main(int argc, char **argv)
{
    bool print = false, names_only = false;
    uint64_t step = 16;
    int i = 1;
    for (; i < argc && argv[i][0] == '-'; i++) {
        if (strcmp(argv[i], "--print") == 0)
            print = true;
        else if (strcmp(argv[i], "--names-only") == 0)
            names_only = true;
        else if (strcmp(argv[i], "--step") == 0 && i + 1 < argc)
            step = strtoull(argv[++i], NULL, 0);
    }
    if (i == argc || step == 0) {
        fprintf(stderr, "usage: symbolize_bench [--print] [--step N] [--names-only] FILE...\n");
        return 1;
    }
    elf_version(EV_CURRENT);
    sb_range_t r[SB_MAX_RANGES];
    size_t nr = 0, count, found;
    double t0 = sb_now();
    hs_symbolizer_t *s = hs_symbolizer_new();
    for (; i < argc; i++) {
        if (s == NULL || sb_add(s, argv[i], i, r, &nr) != 0) {
            fprintf(stderr, "symbolize_bench: cannot add %s\n", argv[i]);
            return 2;
        }
    }
    hs_symbolizer_names_only(s, names_only);
    double t_add = sb_now() - t0;
    double cold = sb_pass(s, r, nr, step, print, &count, &found);
    double warm = sb_pass(s, r, nr, step, false, &count, &found);
    size_t heap = mallinfo2().uordblks;
    t0 = sb_now();
    hs_symbolizer_free(s);
    fprintf(stderr,
            "symbolize_bench: %zu addresses (%zu resolved): add %.1f ms, cold %.2f us/address "
            "(%.1f ms), cached %.3f us/address, free %.1f ms, heap %.1f MiB\n",
            count, found, t_add * 1e3, cold * 1e6 / (double)count, cold * 1e3,
            warm * 1e6 / (double)count, (sb_now() - t0) * 1e3, (double)heap / 1048576);
    return 0;
}
