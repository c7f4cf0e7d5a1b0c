#!/bin/sh
# docs_links: the README is a front door that stays one. Every relative link and picture
# of README.md, docs/*.md and bench/*.md names a file that exists, and every #anchor a
# heading of its target by GitHub's rule (tests/lib/mdlinks.py); the README is at most 250
# lines, shows its picture (a PNG in the repository, under 200 KB) and has one row in its
# command table for each verb `heapsift --help` lists, and none for a verb it does not.
# First the checker is run on a scratch tree with known broken links (a missing file, a
# missing heading, a duplicate heading's -2 that does not exist, a link inside code that
# must be ignored), so a checker that accepts everything fails here.
# Usage: docs_links.sh BUILD_DIR SOURCE_DIR.
set -eu
. "$(dirname "$0")/../lib/common.sh"
hs_setup "$1" docs_links
SRC=$(cd "$2" && pwd)
CHECK="python3 $SRC/tests/lib/mdlinks.py"
hs_need_built "$CLI"

# 1. The checker on known links: 4 good ones, 3 broken ones, found by line.
mkdir -p "$T/k/docs"
cat >"$T/k/docs/a.md" <<'EOF'
# Title: `code` and more
## Same
## Same
See [b](../b.md), [title](#title-code-and-more), [second](#same-1) and ![p](../b.md).
Broken: [none](../nofile.md), [heading](../b.md#nowhere).
Also [third](#same-2). Code is not checked: `[x](missing.md)`.
```
[y](missing-too.md)
```
EOF
echo "# B" >"$T/k/b.md"
(cd "$T/k" && $CHECK docs/a.md) >"$T/k.out" && fail "the checker passed a file with broken links"
cut -d: -f1,2 "$T/k.out" >"$T/k.lines"
printf 'docs/a.md:5\ndocs/a.md:5\ndocs/a.md:6\n' | diff - "$T/k.lines" >/dev/null ||
    { fail "the checker's findings on the known file (want lines 5, 5, 6)"; show "$T/k.out"; }

# 2. The repository's documents.
cd "$SRC"
$CHECK README.md docs/*.md bench/*.md >"$T/links" || { fail "broken links"; show "$T/links"; }

# 3. The README's size and picture.
n=$(wc -l <README.md)
[ "$n" -le 250 ] || fail "README.md has $n lines (at most 250)"
pic=$(sed -n 's/^!\[[^]]*\](\([^)#]*\)).*/\1/p' README.md | head -n 1)
if [ -z "$pic" ]; then
    fail "README.md shows no picture (a line starting with ![...](FILE))"
elif ! head -c 8 "$pic" | od -An -tx1 | grep -q '89 50 4e 47 0d 0a 1a 0a'; then
    fail "README.md's picture $pic is not a PNG"
elif [ "$(wc -c <"$pic")" -gt 204800 ]; then
    fail "README.md's picture $pic is $(wc -c <"$pic") bytes (at most 200 KB)"
fi

# 4. One command-table row per verb of `heapsift --help`.
"$CLI" --help 2>&1 | awk '/^  [a-z]+ / { print $1 }' | sort >"$T/verbs"
sed -n 's/^| `heapsift \([a-z]*\).*/\1/p' README.md | sort >"$T/rows"
[ "$(wc -l <"$T/verbs")" -ge 20 ] || { fail "heapsift --help listed few verbs"; show "$T/verbs"; }
diff "$T/verbs" "$T/rows" >"$T/diff" ||
    { fail "heapsift --help's verbs (<) and README's command rows (>) differ"; show "$T/diff"; }

[ "$FAILS" -eq 0 ] || exit 1
echo "docs_links: $(tail -n 1 "$T/links"); README $n lines, picture $pic, $(wc -l <"$T/verbs") verbs"
