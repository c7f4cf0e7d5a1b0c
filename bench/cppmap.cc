/*
 * cppmap: the C++ workload of bench/run.sh, heavy in std::string and std::map, as an
 * in-memory index or a configuration store is. A map from string keys ("user:000123:
 * profile", longer than the 15-byte small-string buffer, so each key is a heap allocation)
 * to records holding a std::string value and a std::map<std::string, int> of attributes.
 * Each operation draws a key (skewed, own PRNG, fixed seed) and either inserts or replaces
 * the record (new strings, a new attribute map), appends to its value (string growth by
 * reallocation), reads it, or erases it; the map is kept near a fixed size, so memory is
 * steadily allocated and freed through operator new and delete from many template
 * instantiations, each its own allocation site. Deterministic; it knows nothing of any
 * profiler. It prints a checksum, the wall time of its loop and the operations per second.
 *
 * Usage: cppmap [OPS [KEYS]]
 */
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>

namespace
{

struct Record {
    std::string value;
    std::map<std::string, int> attrs;
};

uint64_t rng_state = 0xc0ffee5eedULL;

uint64_t rng_next()
{
    uint64_t x;

    rng_state += 0x9e3779b97f4a7c15ULL;
    x = rng_state;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

std::string make_key(uint64_t id)
{
    char buf[64];

    std::snprintf(buf, sizeof(buf), "user:%06" PRIu64 ":profile", id);
    return std::string(buf);
}

__attribute__((noinline)) Record make_record(uint64_t id, uint64_t r)
{
    Record rec;
    int nattrs = 2 + (int)(r % 7);

    rec.value = "name=" + std::to_string(id) + ";email=user" + std::to_string(id) +
                "@example.org;bio=" + std::string(16 + r % 200, (char)('a' + r % 26));
    for (int i = 0; i < nattrs; i++)
        rec.attrs["attribute-" + std::to_string((r >> (i * 4)) % 32)] = i;
    return rec;
}

__attribute__((noinline)) uint64_t read_record(const Record &rec)
{
    uint64_t sum = rec.value.size();

    for (const auto &kv : rec.attrs)
        sum += kv.first.size() * 31 + (uint64_t)kv.second;
    return sum;
}

__attribute__((noinline)) void append_value(Record &rec, uint64_t r)
{
    rec.value += ";note=";
    rec.value.append(8 + r % 120, (char)('A' + r % 26));
    if (rec.value.size() > 4096)
        rec.value.erase(0, rec.value.size() / 2); /* bounded, still reallocated */
}

uint64_t run(unsigned long ops, unsigned long keys)
{
    std::map<std::string, Record> index;
    uint64_t sum = 0;

    for (unsigned long i = 0; i < ops; i++) {
        uint64_t r = rng_next();
        /* Skewed keys: the square of a uniform draw favours low ids. */
        uint64_t u = r % keys, id = u * u / keys;
        std::string key = make_key(id);
        unsigned kind = (unsigned)((r >> 40) % 10);

        if (kind < 3) {
            index[key] = make_record(id, r);
        } else if (kind < 5) {
            auto it = index.find(key);
            if (it != index.end())
                append_value(it->second, r);
            else
                index.emplace(key, make_record(id, r));
        } else if (kind < 9) {
            auto it = index.find(key);
            if (it != index.end())
                sum += read_record(it->second);
        } else {
            sum += index.erase(key);
        }
    }
    sum += index.size();
    return sum;
}

bool parse_count(const char *s, const char *what, unsigned long *out)
{
    char *end;

    errno = 0;
    unsigned long v = std::strtoul(s, &end, 10);
    if (errno || end == s || *end || v == 0 || s[0] == '-') {
        std::fprintf(stderr, "cppmap: %s must be a positive integer, got '%s'\n", what, s);
        return false;
    }
    *out = v;
    return true;
}

} // namespace

int main(int argc, char **argv)
{
    unsigned long ops = 400000, keys = 100000;

    if (argc > 3 || (argc > 1 && argv[1][0] == '-')) {
        std::fprintf(stderr, "usage: %s [OPS [KEYS]]  (defaults %lu, %lu)\n", argv[0], ops, keys);
        return 1;
    }
    if ((argc > 1 && !parse_count(argv[1], "OPS", &ops)) ||
        (argc > 2 && !parse_count(argv[2], "KEYS", &keys)))
        return 1;
    auto start = std::chrono::steady_clock::now();
    uint64_t sum = run(ops, keys);
    double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("cppmap: %lu ops over %lu keys, checksum %" PRIu64 "\n", ops, keys, sum);
    std::printf("wall: %.3f s\n", wall);
    std::printf("ops/s: %.0f\n", wall > 0 ? (double)ops / wall : 0.0);
    return 0;
}
