#!/bin/sh
# Every C and C++ file in the repository is formatted with the repo's .clang-format
# (clang-format 14, as on the project's machines). Skips (77) without clang-format or git.
set -eu
src=$2
command -v clang-format >/dev/null 2>&1 || { echo "SKIP: clang-format not found"; exit 77; }
command -v git >/dev/null 2>&1 && git -C "$src" rev-parse >/dev/null 2>&1 ||
    { echo "SKIP: not a git checkout"; exit 77; }
files=$(git -C "$src" ls-files '*.c' '*.h' '*.cc')
bad=""
for f in $files; do
    clang-format --dry-run --Werror "$src/$f" >/dev/null 2>&1 || bad="$bad $f"
done
if [ -n "$bad" ]; then
    echo "FAIL: not clang-formatted (run make format):$bad"
    exit 1
fi
echo "format: $(echo "$files" | wc -w) files, ok"
