/*
 * dwarfmix: a program whose units mix DWARF versions and whose .debug_aranges libdw 0.188
 * cannot read (tests/integration/dwarf_mix.sh builds it). This unit is built -gdwarf-4;
 * sites.c is built -gdwarf-5 -ffunction-sections and linked with --gc-sections, which
 * drops its empty function and leaves a pair (0, 0) inside its set of .debug_aranges, as
 * jemalloc's arena.c does in the Rust programs that link jemalloc-sys.
 * Known sites, all live at exit: v4_site 300 x 4000 bytes, v5_site 200 x 6000 bytes.
 */
#include <stdlib.h>
#include <string.h>

void **v5_site(size_t n, size_t size);

static void **held4;

__attribute__((noinline)) static void **v4_site(size_t n, size_t size)
{
    void **keep = calloc(n, sizeof(*keep)); /* site: v4 keep */
    for (size_t i = 0; keep != NULL && i < n; i++) {
        keep[i] = malloc(size); /* site: v4 */
        memset(keep[i], 4, size);
    }
    return keep;
}

int main(void)
{
    held4 = v4_site(300, 4000);
    void **held5 = v5_site(200, 6000);
    return held4 == NULL || held5 == NULL;
}
