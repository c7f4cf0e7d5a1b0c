/*
 * attach_cxx: a running C++ program for `heapsift attach` (tests/integration/attach_cxx.sh):
 * its operator new and delete are libstdc++'s, which call malloc and free. It prints
 * "ready" and waits; when DIR/go appears, site_new allocates 1000 blocks of new int[25]
 * (100 bytes each) and site_string 500 std::string of 200 characters (a 32-byte object and
 * a 201-byte buffer each), all kept, then site_drop allocates and deletes 300 new
 * double[50] (400 bytes each); it prints "done" and waits for DIR/end, then deletes
 * everything and exits 0 after printing "bye".
 *   attach_cxx DIR            run
 *   attach_cxx DIR --expect   the truth of the round (sites_exact.sh's format):
 *                             NAME KIND ALLOC_OBJECTS ALLOC_SPACE INUSE_OBJECTS INUSE_SPACE
 */
#include <cstdio>
#include <cstring>
#include <string>
#include <unistd.h>
#include <vector>

#include "site.h"

static std::vector<int *> ints;
static std::vector<std::string *> strings;

SITE static void site_new()
{
    for (int i = 0; i < 1000; i++)
        ints.push_back(new int[25]);
}

SITE static void site_string()
{
    for (int i = 0; i < 500; i++)
        strings.push_back(new std::string(200, 'x'));
}

SITE static void site_drop()
{
    for (int i = 0; i < 300; i++) {
        double *volatile p = new double[50];
        p[0] = 1;
        delete[] p;
    }
}

static bool exists(const char *dir, const char *name)
{
    std::string path = std::string(dir) + "/" + name;
    return access(path.c_str(), F_OK) == 0;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 1;
    if (argc > 2 && std::strcmp(argv[2], "--expect") == 0) {
        std::printf("site_new flat 1000 100000 1000 100000\n");
        std::printf("site_drop flat 300 120000 0 0\n");
        std::printf("site_string cum 1000 116500 1000 116500\n");
        return 0;
    }
    ints.reserve(1000);
    strings.reserve(500);
    std::printf("ready\n");
    std::fflush(stdout);
    while (!exists(argv[1], "go"))
        usleep(10000);
    site_new();
    site_string();
    site_drop();
    std::printf("done\n");
    std::fflush(stdout);
    while (!exists(argv[1], "end"))
        usleep(10000);
    for (int *p : ints)
        delete[] p;
    for (std::string *s : strings)
        delete s;
    std::printf("bye\n");
    return 0;
}
