/*
 * sites_cc: C++ allocation sites with known totals, for the integration tests. Every site is
 * a non-inlined function in namespace `sites`, so a profile shows demangled names such as
 * `sites::make_nodes`. Objects stay live until exit unless the site deletes them.
 *
 * usage: sites_cc [--expect]
 *   --expect  print the truth, one line per site:
 *             NAME flat|cum ALLOC_OBJECTS ALLOC_SPACE INUSE_OBJECTS INUSE_SPACE
 *             ("flat": the site calls operator new itself, its flat values are exact;
 *             "cum": the call goes through library templates, its cumulative values are).
 * Values are the sizes operator new receives (requested bytes, Itanium C++ ABI).
 */
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "site.h"

namespace sites
{

struct Node {
    long v[32]; /* 256 bytes */
};

struct alignas(64) Aligned {
    char b[192];
};

enum {
    NNODES = 4000,
    NARRAYS = 2000,
    ARRAYLEN = 1000, /* ints: 4000 bytes, trivial destructor so no array cookie */
    NVECS = 100,
    VECCAP = 65536,
    NNOTHROW = 1000,
    NALIGNED = 1000,
    NALIGNEDARR = 100,
    ALIGNEDARRLEN = 10,
    NTEMP = 2000,
    STRLEN = 100000,
};

Node *volatile g_nodes[NNODES];
int *volatile g_arrays[NARRAYS];
/* Built in raw static storage and never destroyed: a static destructor freeing them before
 * the at-exit dump would make the live totals depend on exit ordering. */
alignas(std::vector<char>) unsigned char g_vec_store[NVECS][sizeof(std::vector<char>)];
alignas(std::string) unsigned char g_str_store[sizeof(std::string)];
std::vector<char> *g_vecs[NVECS];
std::string *g_strp;
Node *volatile g_nothrow[NNOTHROW];
Aligned *volatile g_aligned[NALIGNED];
Aligned *volatile g_aligned_arr[NALIGNEDARR];
Node *volatile g_temp[NTEMP];
int *volatile g_temp_arr[NTEMP];
volatile unsigned long g_sink;

long g_str_allocs, g_str_bytes; /* what grow_string's allocations add up to */

SITE void make_nodes()
{
    for (int i = 0; i < NNODES; i++) {
        Node *n = new Node;
        n->v[0] = i;
        g_nodes[i] = n;
    }
}

SITE void make_arrays()
{
    for (int i = 0; i < NARRAYS; i++) {
        int *a = new int[ARRAYLEN];
        a[0] = i;
        a[ARRAYLEN - 1] = i;
        g_arrays[i] = a;
    }
}

SITE void reserve_vectors()
{
    for (int i = 0; i < NVECS; i++) {
        g_vecs[i] = new (g_vec_store[i]) std::vector<char>();
        g_vecs[i]->reserve(VECCAP);
        g_vecs[i]->push_back('x');
    }
}

/* libstdc++ allocates capacity()+1 bytes each time the string grows past its capacity. */
SITE void grow_string()
{
    std::string &s = *(g_strp = new (g_str_store) std::string());
    size_t cap = s.capacity();
    for (int i = 0; i < STRLEN; i++) {
        s.push_back((char)('a' + i % 26));
        if (s.capacity() != cap) {
            cap = s.capacity();
            g_str_allocs++;
            g_str_bytes += (long)cap + 1;
        }
    }
}

SITE void make_nothrow()
{
    for (int i = 0; i < NNOTHROW; i++) {
        Node *n = new (std::nothrow) Node;
        if (!n)
            std::abort();
        n->v[1] = i;
        g_nothrow[i] = n;
    }
}

SITE void make_aligned()
{
    for (int i = 0; i < NALIGNED; i++) {
        Aligned *a = new Aligned;
        if ((unsigned long)a & 63)
            std::abort();
        a->b[0] = (char)i;
        g_aligned[i] = a;
    }
    for (int i = 0; i < NALIGNEDARR; i++) {
        Aligned *a = new Aligned[ALIGNEDARRLEN];
        if ((unsigned long)a & 63)
            std::abort();
        a[0].b[0] = (char)i;
        g_aligned_arr[i] = a;
    }
}

/* Allocates NTEMP nodes and NTEMP arrays, deletes the first half of each. */
SITE void delete_some()
{
    for (int i = 0; i < NTEMP; i++) {
        g_temp[i] = new Node;
        g_temp[i]->v[0] = i;
        g_temp_arr[i] = new int[ARRAYLEN];
        g_temp_arr[i][0] = i;
    }
    for (int i = 0; i < NTEMP / 2; i++) {
        delete g_temp[i];
        delete[] g_temp_arr[i];
        g_temp[i] = nullptr;
        g_temp_arr[i] = nullptr;
    }
}

void expect(const char *name, const char *kind, long aobj, long aspace, long iobj, long ispace)
{
    std::printf("%s %s %ld %ld %ld %ld\n", name, kind, aobj, aspace, iobj, ispace);
}

void print_expectations()
{
    const long node = sizeof(Node), arr = ARRAYLEN * sizeof(int);
    const long al = sizeof(Aligned), alarr = ALIGNEDARRLEN * sizeof(Aligned);
    expect("sites::make_nodes", "flat", NNODES, NNODES * node, NNODES, NNODES * node);
    expect("sites::make_arrays", "flat", NARRAYS, NARRAYS * arr, NARRAYS, NARRAYS * arr);
    expect("sites::reserve_vectors", "cum", NVECS, NVECS * (long)VECCAP, NVECS,
           NVECS * (long)VECCAP);
    expect("sites::grow_string", "cum", g_str_allocs, g_str_bytes, 1, (long)g_strp->capacity() + 1);
    expect("sites::make_nothrow", "flat", NNOTHROW, NNOTHROW * node, NNOTHROW, NNOTHROW * node);
    expect("sites::make_aligned", "flat", NALIGNED + NALIGNEDARR,
           NALIGNED * al + NALIGNEDARR * alarr, NALIGNED + NALIGNEDARR,
           NALIGNED * al + NALIGNEDARR * alarr);
    expect("sites::delete_some", "flat", 2 * NTEMP, NTEMP * (node + arr), 2 * (NTEMP - NTEMP / 2),
           (NTEMP - NTEMP / 2) * (node + arr));
}

} // namespace sites

int main(int argc, char **argv)
{
    bool print = argc > 1 && std::strcmp(argv[1], "--expect") == 0;
    sites::make_nodes();
    sites::make_arrays();
    sites::reserve_vectors();
    sites::grow_string();
    sites::make_nothrow();
    sites::make_aligned();
    sites::delete_some();
    if (print)
        sites::print_expectations();
    std::fflush(stdout);
    sites::g_sink += 1;
    return 0;
}
