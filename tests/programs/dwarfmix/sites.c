/*
 * dwarfmix's DWARF 5 unit (main.c says how it is built): v5_site, and an empty function
 * that --gc-sections drops, whose .debug_aranges entry becomes the pair (0, 0).
 */
#include <stdlib.h>
#include <string.h>

void **v5_site(size_t n, size_t size);
void dwarfmix_dropped(void);

void dwarfmix_dropped(void)
{
    __builtin_unreachable();
}

__attribute__((noinline)) void **v5_site(size_t n, size_t size)
{
    void **keep = calloc(n, sizeof(*keep)); /* site: v5 keep */
    for (size_t i = 0; keep != NULL && i < n; i++) {
        keep[i] = malloc(size); /* site: v5 */
        memset(keep[i], 5, size);
    }
    return keep;
}
