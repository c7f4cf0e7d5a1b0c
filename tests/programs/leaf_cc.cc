/*
 * leaf_cc: C++ allocation sites whose memory comes through libstdc++'s allocator templates
 * (std::allocator<char> -> std::__new_allocator<char>::allocate -> operator new, inlined
 * into the site at -O2 and shown as inline frames by its debug information), for
 * tests/integration/leaf_cxx.sh: with drop_frames the bytes belong to the code that asked
 * (site_alloc, site_new) or to the container method it called (vector::reserve, whose caller
 * is site_vec), never to an allocator frame. Every object stays live until exit.
 *
 * usage: leaf_cc [--expect]
 *   --expect  print the truth, one line per site: NAME flat|cum INUSE_OBJECTS INUSE_SPACE
 *             (flat: the site is the leaf of its stacks; cum: it is their caller of the
 *             container method that is). Sizes are what operator new is asked for.
 */
#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

#include "site.h"

namespace
{
enum { NALLOC = 1000, ALLOCSZ = 4096, NNEW = 500, NEWSZ = 3000, NVEC = 200, VECCAP = 20000 };

char *volatile g_alloc[NALLOC];
char *volatile g_new[NNEW];
/* Raw storage, never destroyed: the vectors' blocks stay live through the exit dump. */
alignas(std::vector<char>) unsigned char g_vec_store[NVEC][sizeof(std::vector<char>)];
} // namespace

/* std::allocator<char>::allocate, through std::__new_allocator<char>::allocate. */
SITE void site_alloc()
{
    std::allocator<char> a;
    for (int i = 0; i < NALLOC; i++) {
        char *p = a.allocate(ALLOCSZ);
        std::memset(p, 1, ALLOCSZ);
        g_alloc[i] = p;
    }
}

/* new char[] straight from the site. */
SITE void site_new()
{
    for (int i = 0; i < NNEW; i++) {
        char *p = new char[NEWSZ];
        p[0] = 2;
        g_new[i] = p;
    }
}

/* std::vector<char>::reserve: the container's method holds the bytes, called from here. */
SITE void site_vec()
{
    for (int i = 0; i < NVEC; i++) {
        std::vector<char> *v = new (g_vec_store[i]) std::vector<char>;
        v->reserve(VECCAP);
        v->push_back(3);
    }
}

int main(int argc, char **argv)
{
    site_alloc();
    site_new();
    site_vec();
    if (argc > 1 && std::strcmp(argv[1], "--expect") == 0) {
        std::printf("site_alloc flat %d %ld\n", NALLOC, (long)NALLOC * ALLOCSZ);
        std::printf("site_new flat %d %ld\n", NNEW, (long)NNEW * NEWSZ);
        std::printf("site_vec cum %d %ld\n", NVEC, (long)NVEC * VECCAP);
        std::printf("std::vector<char, std::allocator<char> >::reserve flat %d %ld\n", NVEC,
                    (long)NVEC * VECCAP);
    }
    return 0;
}
