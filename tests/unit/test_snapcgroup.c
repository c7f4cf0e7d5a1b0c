/*
 * Unit test of snapshot.c's cgroup v2 room (hs_snap_cgroup_room): the leak check's fork
 * snapshot falls back to stop-the-world when the copy's page tables would not fit under a
 * memory.max, and a limit is often set on an ancestor (a container's, a systemd slice's)
 * rather than on the process's own cgroup. A fake hierarchy in a temporary directory,
 * passed as the root, stands for /sys/fs/cgroup; each case checks the least room along
 * the path and the level that has it, computed here by hand.
 */
#define _GNU_SOURCE
#include "leaks/snapshot.h"

#include "check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char root[256];

/* Writes text into root/dir/name, making dir. */
static void put(const char *dir, const char *name, const char *text)
{
    char path[768];
    snprintf(path, sizeof(path), "%s%s", root, dir);
    mkdir(path, 0755);
    snprintf(path, sizeof(path), "%s%s/%s", root, dir, name);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL, "cannot write %s", path);
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

/* The room along dir: want (bytes) at level want_at, or none when want_at is NULL. */
static void expect(const char *dir, unsigned long long want, const char *want_at)
{
    unsigned long long room = 0;
    char at[512] = "";
    bool got = hs_snap_cgroup_room(root, dir, &room, at, sizeof(at));
    if (!want_at) {
        CHECK(!got, "%s: a limit found (%llu at %s), want none", dir, room, at);
        return;
    }
    CHECK(got, "%s: no limit found, want %llu at %s", dir, want, want_at);
    CHECK(room == want, "%s: room %llu, want %llu", dir, room, want);
    CHECK(strcmp(at, want_at) == 0, "%s: at %s, want %s", dir, at, want_at);
}

int main(void)
{
    snprintf(root, sizeof(root), "%s/hs-snapcg.XXXXXX",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(root)) {
        perror("mkdtemp");
        return 1;
    }
    /* root: no memory.max (the root cgroup has none); /a: 1 GiB, 900 MiB used;
     * /a/b: unlimited; /a/b/c (the leaf): 4 GiB, 1 GiB used. */
    put("", "memory.current", "5000000000\n");
    put("/a", "memory.max", "1073741824\n");
    put("/a", "memory.current", "943718400\n");
    put("/a/b", "memory.max", "max\n");
    put("/a/b", "memory.current", "10\n");
    put("/a/b/c", "memory.max", "4294967296\n");
    put("/a/b/c", "memory.current", "1073741824\n");
    expect("/a/b/c", 1073741824ull - 943718400ull, "/a"); /* the ancestor is tighter */
    expect("/a/b", 1073741824ull - 943718400ull, "/a");
    expect("/a", 1073741824ull - 943718400ull, "/a");
    expect("/", 0, NULL); /* the root alone: no limit */
    /* The leaf tighter than its ancestors. */
    put("/a/b/d", "memory.max", "104857600\n");
    put("/a/b/d", "memory.current", "94371840\n");
    expect("/a/b/d", 104857600ull - 94371840ull, "/a/b/d");
    /* Over its limit (memory.current above memory.max after a lowered max): no room. */
    put("/a/e", "memory.max", "1000\n");
    put("/a/e", "memory.current", "2000\n");
    expect("/a/e/f", 0, "/a/e");
    /* A level without memory.current is skipped; a path that does not exist, too. */
    put("/g", "memory.max", "1000\n");
    expect("/g/h", 0, NULL);
    expect("/nowhere/x", 0, NULL);
    char cmd[300];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
    if (system(cmd) != 0)
        fprintf(stderr, "test_snapcgroup: %s left behind\n", root);
    return hs_check_done("test_snapcgroup");
}
