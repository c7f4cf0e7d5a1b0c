/*
 * The CLI's JSON writer and stats reader (src/cli/kit/json.c, compiled in here):
 * every string it writes parses as JSON with the same text (control characters escaped,
 * quotes and backslashes escaped, valid UTF-8 kept, invalid bytes replaced by U+FFFD),
 * unknown numbers are null, and the RSS is found in the endpoint's nested stats JSON.
 */
#include "../../src/cli/kit/json.c"

#include "check.h"

#include <string.h>

/* hs_json_str(s) as a C string. */
static const char *js(const char *s)
{
    static hs_buf_t b;
    b.len = 0;
    hs_json_str(&b, s);
    hs_buf_append(&b, "", 1);
    return (const char *)b.data;
}

int main(void)
{
    CHECK(strcmp(js("site_grow"), "\"site_grow\"") == 0, "%s", js("site_grow"));
    CHECK(strcmp(js(NULL), "null") == 0, "%s", js(NULL));
    CHECK(strcmp(js("a\"b\\c"), "\"a\\\"b\\\\c\"") == 0, "%s", js("a\"b\\c"));
    CHECK(strcmp(js("t\tn\n\x01"), "\"t\\u0009n\\u000a\\u0001\"") == 0, "%s", js("t\tn\n\x01"));
    CHECK(strcmp(js("operator new(unsigned long) \xc2\xb5s \xe2\x82\xac"),
                 "\"operator new(unsigned long) \xc2\xb5s \xe2\x82\xac\"") == 0,
          "UTF-8 kept: %s", js("x"));
    CHECK(strcmp(js("bad \xff end \xc3"), "\"bad \xef\xbf\xbd end \xef\xbf\xbd\"") == 0,
          "invalid bytes replaced");
    CHECK(strcmp(js("over \xc0\xaf long"), "\"over \xef\xbf\xbd\xef\xbf\xbd long\"") == 0,
          "overlong encoding replaced");
    CHECK(strcmp(js("</script>"), "\"</script>\"") == 0, "plain text stays");

    hs_buf_t b = HS_BUF_INIT;
    hs_json_int_or_null(&b, -1);
    hs_buf_append(&b, ",", 1);
    hs_json_int_or_null(&b, 1234567890123);
    hs_buf_append(&b, "", 1);
    CHECK(strcmp((char *)b.data, "null,1234567890123") == 0, "%s", (char *)b.data);
    hs_buf_free(&b);

    /* The endpoint's stats: "rss" is an object whose own "rss" is the number. */
    const char *stats = "{\"pid\":12,\"note\":\"\\\"rss\\\": 5\",\"rss\":{\"rss\":38096896,"
                        "\"anon\":1},\"maps\":{}}";
    double v = 0;
    CHECK(hs_json_find_num(stats, "rss", &v) && v == 38096896, "rss %.0f", v);
    CHECK(hs_json_find_num(stats, "anon", &v) && v == 1, "anon %.0f", v);
    CHECK(!hs_json_find_num(stats, "swap", &v), "absent key");
    CHECK(!hs_json_find_num("{\"rss\":", "rss", &v), "truncated");
    CHECK(!hs_json_find_num("{\"rss", "rss", &v), "unterminated string");
    return hs_check_done("test_json");
}
