/*
 * stress_newfail: C++ operator new and delete at the edge: failing new throws
 * std::bad_alloc, nothrow new returns nullptr, a new_handler runs before the throw, new(0)
 * gives a distinct pointer, aligned new aligns; then, under RLIMIT_AS, new throws once
 * the address space is used up and works again after the memory is given back. Each check
 * prints "NAME: OBSERVED" (the same with any allocator, no addresses) with " UNEXPECTED"
 * appended when it breaks the C++ standard; run ROUNDS times (default 50), every round
 * must print what the first did.
 *
 * usage: stress_newfail [ROUNDS]     Exit 0 when nothing is UNEXPECTED, 1 otherwise.
 */
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <sys/resource.h>
#include <vector>

namespace
{

volatile size_t g_absurd = SIZE_MAX / 4;
void *volatile g_sink; /* a new-expression whose result is used cannot be elided */
int g_handler_calls;
bool g_unexpected;
std::string g_out;

void note(const char *name, bool ok, const std::string &obs)
{
    g_out += std::string(name) + ": " + obs + (ok ? "" : " UNEXPECTED") + "\n";
    if (!ok)
        g_unexpected = true;
}

void handler()
{
    g_handler_calls++;
    std::set_new_handler(nullptr); /* the next attempt throws */
}

template <typename F> std::string outcome(F f)
{
    try {
        void *p = f();
        std::string r = p ? "non-null" : "nullptr";
        return r;
    } catch (const std::bad_array_new_length &) {
        return "bad_array_new_length";
    } catch (const std::bad_alloc &) {
        return "bad_alloc";
    }
}

void checks()
{
    size_t huge = g_absurd;
    std::string r = outcome([&] { return ::operator new(huge); });
    note("operator new(huge)", r == "bad_alloc", r);
    r = outcome([&] { return ::operator new[](huge); });
    note("operator new[](huge)", r == "bad_alloc", r);
    r = outcome([&] { return ::operator new(huge, std::nothrow); });
    note("operator new(huge, nothrow)", r == "nullptr", r);
    r = outcome([&] { return ::operator new[](huge, std::nothrow); });
    note("operator new[](huge, nothrow)", r == "nullptr", r);
    r = outcome([&] { return ::operator new(huge, std::align_val_t(64)); });
    note("operator new(huge, align 64)", r == "bad_alloc", r);
    r = outcome([&] { return ::operator new(huge, std::align_val_t(64), std::nothrow); });
    note("operator new(huge, align 64, nothrow)", r == "nullptr", r);
    r = outcome([&] {
        char *p = new char[huge];
        g_sink = p;
        return (void *)p;
    });
    note("new char[huge]", r == "bad_alloc", r);

    g_handler_calls = 0;
    std::set_new_handler(handler);
    r = outcome([&] { return ::operator new(huge); });
    note("new_handler then throw", r == "bad_alloc" && g_handler_calls == 1,
         r + " handler_calls=" + std::to_string(g_handler_calls));
    std::set_new_handler(nullptr);

    void *a = ::operator new(0), *b = ::operator new(0);
    note("operator new(0) twice", a && b && a != b, a && b && a != b ? "distinct" : "same");
    ::operator delete(a);
    ::operator delete(b, size_t(0));
    for (size_t al = 16; al <= 4096; al *= 4) {
        void *p = ::operator new(100, std::align_val_t(al));
        bool ok = ((uintptr_t)p & (al - 1)) == 0;
        note(("operator new(100, align " + std::to_string(al) + ")").c_str(), ok,
             ok ? "aligned" : "misaligned");
        ::operator delete(p, std::align_val_t(al));
    }
    std::vector<std::string> v;
    for (int i = 0; i < 1000; i++)
        v.push_back(std::string(100 + i % 50, 'x'));
    bool same = true;
    for (int i = 0; i < 1000; i++)
        same &= v[i].size() == size_t(100 + i % 50) && v[i][99] == 'x';
    note("vector<string> of 1000", same, same ? "intact" : "corrupt");
}

/* Under RLIMIT_AS, 1 MiB news until one throws; all given back, new works again. */
void rlimit_check()
{
    struct rlimit old, lim;
    getrlimit(RLIMIT_AS, &old);
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long pages = 0;
    if (!f || fscanf(f, "%lu", &pages) != 1) {
        note("RLIMIT_AS", false, "cannot read /proc/self/statm");
        if (f)
            fclose(f);
        return;
    }
    fclose(f);
    lim = old;
    lim.rlim_cur = pages * 4096ul + (256ul << 20);
    if (setrlimit(RLIMIT_AS, &lim) != 0) {
        note("RLIMIT_AS", false, "setrlimit failed");
        return;
    }
    std::vector<char *> blocks;
    blocks.reserve(4096);
    bool threw = false;
    for (int i = 0; i < 4000; i++) {
        try {
            char *p = new char[1 << 20];
            p[0] = p[(1 << 20) - 1] = 1;
            blocks.push_back(p);
        } catch (const std::bad_alloc &) {
            threw = true;
            break;
        }
    }
    size_t n = blocks.size();
    void *nt = ::operator new(64 << 20, std::nothrow);
    for (char *p : blocks)
        delete[] p;
    blocks.clear();
    bool again = true;
    try {
        char *p = new char[1 << 20];
        delete[] p;
    } catch (const std::bad_alloc &) {
        again = false;
    }
    setrlimit(RLIMIT_AS, &old);
    note("RLIMIT_AS: 1 MiB news until bad_alloc", threw && n > 10,
         threw && n > 10 ? "threw after some" : "n=" + std::to_string(n));
    note("RLIMIT_AS: nothrow new of 64 MiB at the limit", nt == nullptr,
         nt ? "non-null" : "nullptr");
    ::operator delete(nt);
    note("RLIMIT_AS: new after freeing", again, again ? "works" : "still throws");
}

} // namespace

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? std::atoi(argv[1]) : 50;
    std::string first;
    for (int r = 0; r < rounds; r++) {
        g_out.clear();
        checks();
        if (r == 0) {
            first = g_out;
            rlimit_check();
            std::fputs(g_out.c_str(), stdout);
        } else if (g_out != first) {
            std::printf("round %d differs from round 0:\n%s", r, g_out.c_str());
            g_unexpected = true;
            break;
        }
    }
    return g_unexpected ? 1 : 0;
}
