/*
 * lru_cache: heapsift's bundled example, a statement plan cache like the one a SQL database
 * keeps (TiDB's SimpleLRUCache, the seed document's case: "which part of the heap is the
 * plan cache?"). Keys are query strings; values are "plans", small trees whose nodes,
 * expression arrays, column statistics and SQL fragments are allocated in distinct
 * functions (plan_alloc_node, plan_alloc_exprs, plan_alloc_stats, plan_copy_sql, all under
 * build_plan), so a heap profile can attribute the cache's memory to them. The cache is a
 * chained hash table plus a doubly linked LRU list with a capacity in entries; a miss builds
 * a plan and evicts (frees) the least recently used entry when full. Every query also
 * allocates and frees scratch buffers at once (the SQL text, a token array, a result
 * buffer), so the profile shows the difference between memory in use (the cache) and
 * memory allocated (mostly scratch). The run is deterministic: statement ids come from a
 * Zipf distribution drawn with the program's own PRNG and a fixed seed, so hits, misses and
 * the checksum are the same on every machine; only the timing differs. The cache is left
 * live at exit on purpose, as a server's would be, so an at-exit profile shows it. It never
 * links or calls heapsift; examples/demo.sh runs it under `heapsift run`.
 *
 * Usage: lru_cache [QUERIES [CAPACITY]]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/*
 * Allocation sites are noinline so -O2 keeps each one a frame of its own, and each does
 * work after malloc returns so the call cannot become a tail jump that drops the frame.
 */
#define NOINLINE __attribute__((noinline))

#define DEFAULT_QUERIES 250000UL
#define DEFAULT_CAPACITY 4000UL
#define STATEMENTS 50000 /* distinct statements the workload draws from */
#define SQL_MAX 1024     /* the scratch buffer a statement is formatted into */

/* ---- deterministic randomness ------------------------------------------------------ */

static uint64_t rng_state = 0x7d1b5eed2020ULL;

/* splitmix64: the mixing function is also used to derive a statement's shape from its id. */
static uint64_t mix64(uint64_t x)
{
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

static double rng_unit(void)
{
    rng_state += 0x9e3779b97f4a7c15ULL;
    return (double)(mix64(rng_state) >> 11) * 0x1.0p-53;
}

static NOINLINE __attribute__((cold, noreturn)) void out_of_memory(size_t size)
{
    fprintf(stderr, "lru_cache: out of memory (%zu bytes)\n", size);
    exit(3);
}

/*
 * A macro, not a function: even an inlined helper shows up as a frame of its own in a
 * symbolized profile, and the leaf should be the function that wanted the memory.
 */
#define xmalloc(size)                                                                              \
    ({                                                                                             \
        size_t xmalloc_size = (size);                                                              \
        void *xmalloc_p = malloc(xmalloc_size);                                                    \
        if (!xmalloc_p)                                                                            \
            out_of_memory(xmalloc_size);                                                           \
        xmalloc_p;                                                                                 \
    })

/* Zipf with exponent 1 over ids 0..n-1: a few statements are hot, most are rare. */
struct zipf {
    double *cdf;
    size_t n;
};

static NOINLINE void zipf_init(struct zipf *z, size_t n)
{
    double sum = 0;

    z->cdf = xmalloc(n * sizeof(*z->cdf));
    z->n = n;
    for (size_t k = 0; k < n; k++) {
        sum += 1.0 / (double)(k + 1);
        z->cdf[k] = sum;
    }
    for (size_t k = 0; k < n; k++)
        z->cdf[k] /= sum;
}

static uint32_t zipf_draw(const struct zipf *z)
{
    double u = rng_unit();
    size_t lo = 0, hi = z->n - 1;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (z->cdf[mid] < u)
            lo = mid + 1;
        else
            hi = mid;
    }
    return (uint32_t)lo;
}

/* ---- statements ----------------------------------------------------------------------- */

/* A statement's shape, derived from its id; the offsets locate clauses in its SQL text. */
struct query_spec {
    uint32_t id;
    int table;  /* first table, t0..t96 */
    int ncols;  /* projected columns, 1..12 */
    int npreds; /* WHERE predicates, 0..6 */
    int njoins; /* joined tables, 0..3 */
    int order_by;
    int limit;
    int sel_off, sel_len, from_off, from_len, where_off, where_len, tail_off, tail_len;
};

static void query_spec_init(struct query_spec *q, uint32_t id)
{
    uint64_t h = mix64(id + 1);

    memset(q, 0, sizeof(*q));
    q->id = id;
    q->table = (int)(h % 97);
    q->ncols = 1 + (int)((h >> 8) % 12);
    q->npreds = (int)((h >> 16) % 7);
    q->njoins = (int)((h >> 24) % 4);
    q->order_by = (int)((h >> 32) & 1);
    q->limit = ((h >> 33) & 1) ? 10 + (int)((h >> 34) % 990) : 0;
}

/*
 * A bounded string builder. Hand-rolled rather than snprintf: formatting is most of a
 * query's cost otherwise, and the example should spend its time in the cache and malloc.
 */
struct sql_buf {
    char *p;
    int len;
};

static void sql_str(struct sql_buf *b, const char *s)
{
    while (*s && b->len < SQL_MAX - 1)
        b->p[b->len++] = *s++;
    b->p[b->len] = '\0';
}

static void sql_int(struct sql_buf *b, int v)
{
    char tmp[12];
    int n = 0;

    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v > 0 && n < (int)sizeof(tmp));
    while (n > 0 && b->len < SQL_MAX - 1)
        b->p[b->len++] = tmp[--n];
    b->p[b->len] = '\0';
}

/* Formats the statement into a fresh scratch buffer; the caller frees it. */
static NOINLINE char *query_format(struct query_spec *q)
{
    struct sql_buf b = {xmalloc(SQL_MAX), 0};

    sql_str(&b, "SELECT");
    q->sel_off = b.len;
    for (int i = 0; i < q->ncols; i++) {
        sql_str(&b, i ? ", c" : " c");
        sql_int(&b, (int)((q->id + (uint32_t)i * 7) % 40));
    }
    q->sel_len = b.len - q->sel_off;
    q->from_off = b.len;
    sql_str(&b, " FROM t");
    sql_int(&b, q->table);
    for (int j = 1; j <= q->njoins; j++) {
        int t = (q->table + j * 13) % 97;
        sql_str(&b, " JOIN t");
        sql_int(&b, t);
        sql_str(&b, " ON t");
        sql_int(&b, t);
        sql_str(&b, ".id = ref_id");
    }
    q->from_len = b.len - q->from_off;
    q->where_off = b.len;
    for (int i = 0; i < q->npreds; i++) {
        sql_str(&b, i ? " AND c" : " WHERE c");
        sql_int(&b, (int)((q->id + (uint32_t)i * 3) % 40));
        sql_str(&b, " > ");
        sql_int(&b, (int)(q->id % 1000) + i);
    }
    q->where_len = b.len - q->where_off;
    q->tail_off = b.len;
    if (q->order_by) {
        sql_str(&b, " ORDER BY c");
        sql_int(&b, (int)(q->id % 40));
    }
    if (q->limit) {
        sql_str(&b, " LIMIT ");
        sql_int(&b, q->limit);
    }
    q->tail_len = b.len - q->tail_off;
    return b.p;
}

/* A token of the statement; the tokens, not the raw bytes, make the cache key's hash. */
struct token {
    const char *text;
    size_t len;
};

/* FNV-1a over the statement's tokens, as a database hashes a normalized statement. */
static NOINLINE uint64_t query_digest(const char *sql)
{
    size_t cap = 16, n = 0;
    struct token *tok = xmalloc(cap * sizeof(*tok));
    uint64_t h = 0xcbf29ce484222325ULL;

    for (const char *p = sql; *p;) {
        while (*p == ' ')
            p++;
        if (!*p)
            break;
        if (n == cap) {
            cap *= 2;
            tok = realloc(tok, cap * sizeof(*tok));
            if (!tok)
                out_of_memory(cap * sizeof(*tok));
        }
        tok[n].text = p;
        while (*p && *p != ' ')
            p++;
        tok[n].len = (size_t)(p - tok[n].text);
        n++;
    }
    for (size_t i = 0; i < n; i++) {
        for (size_t k = 0; k < tok[i].len; k++)
            h = (h ^ (unsigned char)tok[i].text[k]) * 0x100000001b3ULL;
        h = (h ^ ' ') * 0x100000001b3ULL;
    }
    free(tok);
    return h;
}

/* ---- plans ------------------------------------------------------------------------------ */

enum plan_op {
    OP_TABLE_SCAN,
    OP_INDEX_SCAN,
    OP_HASH_JOIN,
    OP_SELECTION,
    OP_SORT,
    OP_LIMIT,
    OP_PROJECTION
};

struct plan_expr {
    int kind;
    int column;
    int64_t constant;
    double selectivity;
    char name[40];
};

struct stats_bucket {
    double upper;
    double count;
};

struct plan_node {
    enum plan_op op;
    int nexprs;
    int nbuckets;
    double rows;
    double cost;
    struct plan_node *child[2];
    struct plan_expr *exprs;
    struct stats_bucket *stats; /* scans only: a copy of the column's histogram */
    char *sql;                  /* the clause this operator came from */
};

struct plan {
    struct plan_node *root;
    size_t bytes; /* requested from malloc for this plan, its own struct included */
    int nnodes;
};

static NOINLINE struct plan_node *plan_alloc_node(struct plan *p, enum plan_op op)
{
    struct plan_node *n = xmalloc(sizeof(*n));

    memset(n, 0, sizeof(*n));
    n->op = op;
    p->bytes += sizeof(*n);
    p->nnodes++;
    return n;
}

static NOINLINE void plan_alloc_exprs(struct plan *p, struct plan_node *n, int count, int seed)
{
    n->exprs = xmalloc((size_t)count * sizeof(*n->exprs));
    n->nexprs = count;
    for (int i = 0; i < count; i++) {
        struct plan_expr *e = &n->exprs[i];
        e->kind = (int)n->op;
        e->column = (seed + i) % 40;
        e->constant = seed * 31 + i;
        e->selectivity = 1.0 / (double)(2 + (seed + i) % 9);
        memcpy(e->name, "expr_c", 7);
        e->name[5] = (char)('a' + e->column % 26);
    }
    p->bytes += (size_t)count * sizeof(*n->exprs);
}

static NOINLINE void plan_alloc_stats(struct plan *p, struct plan_node *n, int nbuckets, int seed)
{
    double rows = 0;

    n->stats = xmalloc((size_t)nbuckets * sizeof(*n->stats));
    n->nbuckets = nbuckets;
    for (int i = 0; i < nbuckets; i++) {
        n->stats[i].upper = (double)(i + 1) * 100.0;
        n->stats[i].count = (double)(1 + (seed * 7 + i * 13) % 500);
        rows += n->stats[i].count;
    }
    n->rows = rows;
    p->bytes += (size_t)nbuckets * sizeof(*n->stats);
}

static NOINLINE void plan_copy_sql(struct plan *p, struct plan_node *n, const char *sql, int off,
                                   int len)
{
    n->sql = xmalloc((size_t)len + 1);
    memcpy(n->sql, sql + off, (size_t)len);
    n->sql[len] = '\0';
    p->bytes += (size_t)len + 1;
}

/* A scan of one table: the node, its column references and its statistics. */
static NOINLINE struct plan_node *plan_build_scan(struct plan *p, const struct query_spec *q,
                                                  const char *sql, int table)
{
    struct plan_node *n = plan_alloc_node(p, q->npreds ? OP_INDEX_SCAN : OP_TABLE_SCAN);

    plan_alloc_exprs(p, n, 1 + q->ncols / (q->njoins + 1), table);
    plan_alloc_stats(p, n, 32 << ((q->id + (uint32_t)table) % 4), table);
    plan_copy_sql(p, n, sql, q->from_off, q->from_len);
    n->cost = n->rows * 1.5;
    return n;
}

/* A node above `child` covering one clause of the statement. */
static NOINLINE struct plan_node *plan_build_unary(struct plan *p, enum plan_op op,
                                                   struct plan_node *child, int nexprs,
                                                   const char *sql, int off, int len)
{
    struct plan_node *n = plan_alloc_node(p, op);

    n->child[0] = child;
    plan_alloc_exprs(p, n, nexprs, (int)op);
    plan_copy_sql(p, n, sql, off, len);
    n->rows = child->rows * 0.5;
    n->cost = child->cost + n->rows;
    return n;
}

/* Builds the plan of a statement the cache missed; the plan is owned by the cache entry. */
static NOINLINE struct plan *build_plan(const struct query_spec *q, const char *sql)
{
    struct plan *p = xmalloc(sizeof(*p));
    struct plan_node *root;

    memset(p, 0, sizeof(*p));
    p->bytes = sizeof(*p);
    root = plan_build_scan(p, q, sql, q->table);
    for (int j = 1; j <= q->njoins; j++) {
        struct plan_node *join = plan_alloc_node(p, OP_HASH_JOIN);
        join->child[0] = root;
        join->child[1] = plan_build_scan(p, q, sql, (q->table + j * 13) % 97);
        plan_alloc_exprs(p, join, 1, j);
        plan_copy_sql(p, join, sql, q->from_off, q->from_len);
        join->rows = root->rows * join->child[1]->rows / 1000.0;
        join->cost = root->cost + join->child[1]->cost + join->rows;
        root = join;
    }
    if (q->npreds)
        root = plan_build_unary(p, OP_SELECTION, root, q->npreds, sql, q->where_off, q->where_len);
    if (q->order_by || q->limit)
        root = plan_build_unary(p, q->order_by ? OP_SORT : OP_LIMIT, root, 1, sql, q->tail_off,
                                q->tail_len);
    root = plan_build_unary(p, OP_PROJECTION, root, q->ncols, sql, q->sel_off, q->sel_len);
    p->root = root;
    return p;
}

static void plan_free_node(struct plan_node *n)
{
    if (!n)
        return;
    plan_free_node(n->child[0]);
    plan_free_node(n->child[1]);
    free(n->exprs);
    free(n->stats);
    free(n->sql);
    free(n);
}

static void plan_free(struct plan *p)
{
    plan_free_node(p->root);
    free(p);
}

/*
 * "Executes" a plan: a result buffer sized by the plan's row estimate, filled and folded into
 * a checksum, then freed. This is the transient memory that dominates alloc_space.
 */
static NOINLINE uint64_t execute_plan(const struct plan *p, const struct query_spec *q)
{
    size_t rows = 16 + (size_t)(mix64(q->id * 31 + 7) % 496);
    uint64_t *out = xmalloc(rows * 4 * sizeof(*out));
    uint64_t sum = (uint64_t)p->nnodes;

    for (size_t r = 0; r < rows; r++) {
        out[r * 4] = r * 2654435761u + q->id;
        out[r * 4 + 1] = (uint64_t)p->root->nexprs;
    }
    for (size_t r = 0; r < rows; r += 8)
        sum = sum * 31 + out[r * 4] + out[r * 4 + 1];
    free(out);
    return sum;
}

/* ---- the cache -------------------------------------------------------------------------- */

struct cache_entry {
    struct cache_entry *hnext;       /* hash chain */
    struct cache_entry *prev, *next; /* LRU list; the sentinel's next is the newest */
    uint64_t hash;
    char *key;
    struct plan *plan;
};

struct lru_cache {
    struct cache_entry **buckets;
    size_t mask; /* bucket count - 1; a power of two at least twice the capacity */
    struct cache_entry lru;
    size_t len, capacity;
    uint64_t hits, misses, evictions;
    size_t bytes; /* requested from malloc for entries, keys and plans now held */
};

static NOINLINE void cache_init(struct lru_cache *c, size_t capacity)
{
    size_t nb = 16;

    while (nb < capacity * 2)
        nb *= 2;
    memset(c, 0, sizeof(*c));
    c->buckets = xmalloc(nb * sizeof(*c->buckets));
    memset(c->buckets, 0, nb * sizeof(*c->buckets));
    c->mask = nb - 1;
    c->lru.next = c->lru.prev = &c->lru;
    c->capacity = capacity;
}

static void lru_unlink(struct cache_entry *e)
{
    e->prev->next = e->next;
    e->next->prev = e->prev;
}

static void lru_push_front(struct lru_cache *c, struct cache_entry *e)
{
    e->prev = &c->lru;
    e->next = c->lru.next;
    c->lru.next->prev = e;
    c->lru.next = e;
}

/* Returns the entry for key, moved to the front of the LRU list, or NULL. */
static struct plan *cache_get(struct lru_cache *c, const char *key, uint64_t hash)
{
    for (struct cache_entry *e = c->buckets[hash & c->mask]; e; e = e->hnext) {
        if (e->hash == hash && strcmp(e->key, key) == 0) {
            lru_unlink(e);
            lru_push_front(c, e);
            c->hits++;
            return e->plan;
        }
    }
    c->misses++;
    return NULL;
}

static NOINLINE char *cache_copy_key(struct lru_cache *c, const char *key)
{
    size_t len = strlen(key) + 1;
    char *copy = xmalloc(len);

    memcpy(copy, key, len);
    c->bytes += len;
    return copy;
}

static NOINLINE void cache_evict(struct lru_cache *c)
{
    struct cache_entry *victim = c->lru.prev;
    struct cache_entry **pp = &c->buckets[victim->hash & c->mask];

    while (*pp != victim)
        pp = &(*pp)->hnext;
    *pp = victim->hnext;
    lru_unlink(victim);
    c->bytes -= strlen(victim->key) + 1 + victim->plan->bytes + sizeof(*victim);
    plan_free(victim->plan);
    free(victim->key);
    free(victim);
    c->len--;
    c->evictions++;
}

/* Inserts a key the cache does not hold; takes ownership of plan, copies key. */
static NOINLINE void cache_put(struct lru_cache *c, const char *key, uint64_t hash,
                               struct plan *plan)
{
    struct cache_entry *e;

    if (c->len == c->capacity)
        cache_evict(c);
    e = xmalloc(sizeof(*e));
    e->hash = hash;
    e->key = cache_copy_key(c, key);
    e->plan = plan;
    e->hnext = c->buckets[hash & c->mask];
    c->buckets[hash & c->mask] = e;
    lru_push_front(c, e);
    c->len++;
    c->bytes += sizeof(*e) + plan->bytes;
}

/* ---- the workload ----------------------------------------------------------------------- */

/* One query: format, digest, look up, build on a miss, execute; scratch freed at once. */
static NOINLINE uint64_t run_query(struct lru_cache *c, uint32_t id)
{
    struct query_spec q;
    char *sql;
    uint64_t hash, sum;
    struct plan *plan;

    query_spec_init(&q, id);
    sql = query_format(&q);
    hash = query_digest(sql);
    plan = cache_get(c, sql, hash);
    if (!plan) {
        plan = build_plan(&q, sql);
        cache_put(c, sql, hash, plan);
    }
    sum = execute_plan(plan, &q);
    free(sql);
    return sum;
}

static int parse_count(const char *s, const char *what, unsigned long *out)
{
    char *end;
    unsigned long v;

    errno = 0;
    v = strtoul(s, &end, 10);
    if (errno || end == s || *end || v == 0 || s[0] == '-') {
        fprintf(stderr, "lru_cache: %s must be a positive integer, got '%s'\n", what, s);
        return -EINVAL;
    }
    *out = v;
    return 0;
}

static double now_seconds(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    unsigned long queries = DEFAULT_QUERIES, capacity = DEFAULT_CAPACITY;
    static struct lru_cache cache; /* left live at exit so an at-exit profile shows it */
    static struct zipf zipf;
    uint64_t checksum = 0;
    double start, wall;

    if (argc > 3 || (argc > 1 && argv[1][0] == '-')) {
        fprintf(stderr, "usage: %s [QUERIES [CAPACITY]]  (defaults %lu, %lu)\n", argv[0],
                DEFAULT_QUERIES, DEFAULT_CAPACITY);
        return 1;
    }
    if (argc > 1 && parse_count(argv[1], "QUERIES", &queries) < 0)
        return 1;
    if (argc > 2 && parse_count(argv[2], "CAPACITY", &capacity) < 0)
        return 1;

    zipf_init(&zipf, STATEMENTS);
    cache_init(&cache, capacity);
    printf("lru_cache: %lu queries over %d distinct statements, capacity %lu entries\n", queries,
           STATEMENTS, capacity);
    start = now_seconds();
    for (unsigned long i = 0; i < queries; i++)
        checksum = checksum * 1099511628211ULL + run_query(&cache, zipf_draw(&zipf));
    wall = now_seconds() - start;

    printf("hits: %" PRIu64 " (%.1f%%)\n", cache.hits, 100.0 * (double)cache.hits / queries);
    printf("misses: %" PRIu64 "\n", cache.misses);
    printf("evictions: %" PRIu64 "\n", cache.evictions);
    printf("live entries: %zu\n", cache.len);
    printf("live cache bytes: %zu (%.2f MiB requested for entries, keys and plans)\n", cache.bytes,
           (double)cache.bytes / 1048576.0);
    printf("checksum: %016" PRIx64 "\n", checksum);
    printf("wall: %.3f s\n", wall);
    printf("queries/s: %.0f\n", wall > 0 ? (double)queries / wall : 0.0);
    return 0;
}
