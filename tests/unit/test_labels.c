/*
 * Unit test of label sets (src/preload/record/labels.c): a set is the same id whatever order its
 * keys were set in; setting a key again replaces its value; clearing one key or all; the
 * pairs come back sorted by key; refusals (empty, too long, NULL from a bad id, a 17th
 * key); 4 threads interning the same 500 sets concurrently agree on every id; and the
 * bound: new sets past HS_LABELS_MAX_SETS are refused with -ENOSPC while known ones are
 * still found, and the fallback id reads as heapsift=label_sets_full.
 */
#include "check.h"
#include "record/labels.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>

static int64_t with(int64_t from, const char *k, const char *v)
{
    return from < 0 ? from : hs_labels_with((uint32_t)from, k, v);
}

static void test_basic(void)
{
    const char *k[HS_LABELS_MAX_PAIRS], *v[HS_LABELS_MAX_PAIRS];
    int64_t ab = with(with(0, "tenant", "acme"), "region", "eu");
    int64_t ba = with(with(0, "region", "eu"), "tenant", "acme");
    CHECK(ab > 0 && ab == ba, "order matters: %lld %lld", (long long)ab, (long long)ba);
    CHECK(hs_labels_get((uint32_t)ab, k, v, HS_LABELS_MAX_PAIRS) == 2, "two pairs");
    CHECK(strcmp(k[0], "region") == 0 && strcmp(v[0], "eu") == 0 && strcmp(k[1], "tenant") == 0 &&
              strcmp(v[1], "acme") == 0,
          "pairs %s=%s %s=%s", k[0], v[0], k[1], v[1]);
    int64_t g = with(ab, "tenant", "globex");
    CHECK(g > 0 && g != ab, "a new value is a new set");
    CHECK(with(g, "tenant", "acme") == ab, "back to acme: the old set");
    CHECK(with(ab, "tenant", NULL) == with(0, "region", "eu"), "clear one key");
    CHECK(with(ab, "nosuchkey", NULL) == ab, "clearing an absent key changes nothing");
    CHECK(with(ab, NULL, NULL) == HS_LABELS_EMPTY, "clear all");
    CHECK(hs_labels_get(HS_LABELS_EMPTY, k, v, HS_LABELS_MAX_PAIRS) == 0, "the empty set");

    char big[HS_LABELS_MAX_LEN + 2];
    memset(big, 'x', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    CHECK(with(0, "", "x") == -EINVAL && with(0, "k", "") == -EINVAL, "empty accepted");
    CHECK(with(0, big, "x") == -EINVAL && with(0, "k", big) == -EINVAL, "256 bytes accepted");
    big[HS_LABELS_MAX_LEN] = '\0';
    CHECK(with(0, big, big) > 0, "255 bytes refused");
    CHECK(hs_labels_with(1u << 30, "k", "v") == -EINVAL, "unknown id accepted");

    int64_t s = 0;
    char key[8];
    for (int i = 0; i < HS_LABELS_MAX_PAIRS; i++) {
        snprintf(key, sizeof(key), "k%02d", i);
        s = with(s, key, "v");
    }
    CHECK(s > 0 && hs_labels_get((uint32_t)s, k, v, HS_LABELS_MAX_PAIRS) == HS_LABELS_MAX_PAIRS,
          "16 keys");
    CHECK(with(s, "zz", "v") == -E2BIG, "17 keys accepted");
    CHECK(with(s, "k03", "w") > 0, "replacing a value in a full set refused");
}

/* Each thread interns sets {worker=w<i % 50>, job=j<i>} for i < 500, in its own order. */
static int64_t ids[4][500];

static void *intern(void *arg)
{
    int t = (int)(long)arg;
    char w[16], j[16];
    for (int n = 0; n < 500; n++) {
        int i = (n * 7 + t * 131) % 500;
        snprintf(w, sizeof(w), "w%d", i % 50);
        snprintf(j, sizeof(j), "j%d", i);
        ids[t][i] =
            t & 1 ? with(with(0, "job", j), "worker", w) : with(with(0, "worker", w), "job", j);
    }
    return NULL;
}

static void test_threads(void)
{
    pthread_t th[4];
    for (long t = 0; t < 4; t++)
        CHECK(pthread_create(&th[t], NULL, intern, (void *)t) == 0);
    for (int t = 0; t < 4; t++)
        pthread_join(th[t], NULL);
    int bad = 0;
    for (int i = 0; i < 500; i++)
        for (int t = 1; t < 4; t++)
            bad += ids[t][i] != ids[0][i] || ids[0][i] <= 0;
    CHECK(bad == 0, "%d ids differ between threads", bad);
}

static void test_bound(void)
{
    char v[16];
    int64_t known = with(0, "tenant", "acme"), id = 0;
    int i = 0;
    while (id >= 0 && i < 2 * HS_LABELS_MAX_SETS) {
        snprintf(v, sizeof(v), "b%d", i++);
        id = with(0, "bound", v);
    }
    CHECK(id == -ENOSPC && hs_labels_count() == HS_LABELS_MAX_SETS, "bound: %lld after %u sets",
          (long long)id, hs_labels_count());
    CHECK(with(0, "tenant", "acme") == known, "a known set is still found");
    const char *k[1], *val[1];
    CHECK(hs_labels_get(HS_LABELS_OVERFLOW, k, val, 1) == 1 && strcmp(k[0], "heapsift") == 0 &&
              strcmp(val[0], "label_sets_full") == 0,
          "fallback");
    CHECK(hs_labels_with(HS_LABELS_OVERFLOW, "tenant", "acme") == known, "fallback starts afresh");
}

int main(void)
{
    test_basic();
    test_threads();
    test_bound();
    return hs_check_done("test_labels");
}
