#!/usr/bin/env python3
"""The source tree's layering check: which folder may use which.

src/LAYERS orders the trees (common, preload, cli) and src/<tree>/LAYERS orders the
folders of each tree. Both files list names lowest first, one level per line; names on
one line are peers. A folder may use its own files and those of folders on lines above
its own, never a peer's or a higher one's, so the graph between folders has no cycle.

Two readings of "use", both checked:
  - includes: every `#include "..."` of a .c or .h file, resolved as the compiler does
    (the including file's directory first, then the tree roots the file's tree may use);
  - symbols (with BUILD_DIR): every symbol an object file of the library or the CLI
    leaves undefined, against the object files that define it. A call up that declares
    its callee by hand, with no include, is caught here. Only the project's own names
    count (hs_*, heapsift_*): malloc and the other C library names the library defines
    are the program's API, which any module may call.

Every .c and .h of a tree lies in one of its listed folders. Exit status 0 when nothing
breaks the order, 1 with one line per breach (file:line: what, and the rule), 2 on a bad
configuration.

usage: layers.py [--graph] [--only TREE[,TREE]] SOURCE_DIR [BUILD_DIR]
  --graph  also print the graph between folders: "tree/a -> tree/b N" per edge
  --only   check only these trees' folders (the others count as one unit each)
"""
import os
import re
import subprocess
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
# Object files of these targets are read for symbols (not the tests', nor the sanitizer
# copies' which are the same sources).
TARGETS = ("hs_common.dir", "hs_core.dir", "heapsift.dir", "heapsift_cli.dir")


def read_levels(path):
    """Lines of names, lowest first: {name: level}. Comments (#) and blanks skipped."""
    levels, level = {}, 0
    with open(path) as f:
        for line in f:
            names = line.split("#", 1)[0].split()
            if not names:
                continue
            for n in names:
                if n in levels:
                    raise ValueError(f"{path}: {n} listed twice")
                levels[n] = level
            level += 1
    return levels


class Layout:
    def __init__(self, src, only):
        self.src = src
        self.trees = read_levels(os.path.join(src, "src", "LAYERS"))
        self.checked = [t for t in self.trees if only is None or t in only]
        self.folders = {}
        for t in self.checked:
            p = os.path.join(src, "src", t, "LAYERS")
            if not os.path.exists(p):
                raise ValueError(f"{p}: missing (every tree lists its folders)")
            self.folders[t] = read_levels(p)

    def unit(self, rel):
        """src/TREE/FOLDER/... -> (tree, folder), or None outside the trees."""
        parts = rel.split("/")
        if len(parts) < 3 or parts[0] != "src" or parts[1] not in self.trees:
            return None
        if parts[1] not in self.checked:
            return (parts[1], "*")  # a tree not checked (--only) is one unit
        return (parts[1], parts[2] if len(parts) > 3 else None)

    def may_use(self, a, b):
        """Whether unit a may use unit b: why not, or None when it may."""
        (ta, fa), (tb, fb) = a, b
        if ta != tb:
            if self.trees[tb] < self.trees[ta]:
                return None
            return f"tree {ta} may not use tree {tb} (src/LAYERS)"
        if fa == fb or "*" in (fa, fb):
            return None
        la, lb = self.folders[ta][fa], self.folders[tb][fb]
        if lb < la:
            return None
        how = "a peer" if lb == la else "above it"
        return f"{ta}/{fa} may not use {tb}/{fb}, {how} (src/{ta}/LAYERS)"

    def roots_for(self, tree):
        """The tree roots a file of TREE finds includes under: its own and lower ones."""
        return [t for t in self.trees if t == tree or self.trees[t] < self.trees[tree]]


def source_files(src, tree):
    root = os.path.join(src, "src", tree)
    for d, _, files in os.walk(root):
        for f in sorted(files):
            if f.endswith((".c", ".h")):
                yield os.path.relpath(os.path.join(d, f), src)


def check_placement(lay, errors):
    for t in lay.checked:
        for rel in source_files(lay.src, t):
            tree, folder = lay.unit(rel)
            if folder is None:
                errors.append(f"{rel}: not in a folder of src/{t}/LAYERS")
            elif folder not in lay.folders[t]:
                errors.append(f"{rel}: folder {folder} is not in src/{t}/LAYERS")


def resolve(lay, rel, name):
    """Where `#include "name"` in rel lands: the repository-relative path or None."""
    here = os.path.join(os.path.dirname(rel), name)
    if os.path.exists(os.path.join(lay.src, here)):
        return os.path.normpath(here)
    tree = lay.unit(rel)[0]
    found = [os.path.join("src", r, name) for r in lay.roots_for(tree)
             if os.path.exists(os.path.join(lay.src, "src", r, name))]
    if len(found) > 1:
        raise LookupError(f"{name} is found in {' and '.join(found)}")
    if found:
        return os.path.normpath(found[0])
    # Not reachable by the compiler's search: name the tree it is in, if any, as a
    # breach (a file that is compiled finds it through an include path it must not have).
    for r in lay.trees:
        if os.path.exists(os.path.join(lay.src, "src", r, name)):
            return os.path.normpath(os.path.join("src", r, name))
    return None  # include/, generated, or system: outside the layering


def check_includes(lay, errors, edges):
    for t in lay.checked:
        for rel in source_files(lay.src, t):
            a = lay.unit(rel)
            if a[1] is None:
                continue
            with open(os.path.join(lay.src, rel), errors="replace") as f:
                for no, line in enumerate(f, 1):
                    m = INCLUDE.match(line)
                    if not m:
                        continue
                    try:
                        dest = resolve(lay, rel, m.group(1))
                    except LookupError as e:
                        errors.append(f"{rel}:{no}: ambiguous include: {e}")
                        continue
                    b = dest and lay.unit(dest)
                    if not b or b[1] is None:
                        continue
                    edges[(a, b)] = edges.get((a, b), 0) + 1
                    why = lay.may_use(a, b)
                    if why:
                        errors.append(f"{rel}:{no}: includes {dest}: {why}")


def objects(build):
    """(source path, object path) for the library's and the CLI's objects."""
    base = os.path.join(build, "CMakeFiles")
    for tdir in TARGETS:
        root = os.path.join(base, tdir)
        for d, _, files in os.walk(root):
            for f in files:
                if f.endswith(".c.o"):
                    obj = os.path.join(d, f)
                    yield os.path.relpath(obj, root)[: -len(".o")], obj


def nm_symbols(obj):
    out = subprocess.run(["nm", "-P", obj], capture_output=True, text=True, check=True)
    defined, undefined = set(), set()
    for line in out.stdout.splitlines():
        f = line.split()
        if len(f) < 2:
            continue
        if f[1] == "U":
            undefined.add(f[0])
        elif f[1] in "TDBRVWGSC" or f[1] in "iu":
            defined.add(f[0])
    return defined, undefined


def check_symbols(lay, build, errors, edges):
    owners, uses = {}, []
    seen = set()
    for rel, obj in objects(build):
        if rel in seen or lay.unit(rel) is None or lay.unit(rel)[1] is None:
            continue
        seen.add(rel)
        d, u = nm_symbols(obj)
        for s in d:
            owners.setdefault(s, set()).add(rel)
        uses.append((rel, u))
    if not uses:
        errors.append(f"{build}: no object files of {', '.join(TARGETS)} (not built?)")
    for rel, undefined in uses:
        a = lay.unit(rel)
        for s in sorted(undefined):
            if not s.startswith(("hs_", "heapsift_")):
                continue
            defs = owners.get(s)
            if not defs:
                continue  # a library's (libc, libdw, zlib)
            whys = [(d, lay.may_use(a, lay.unit(d))) for d in sorted(defs)]
            if all(w for _, w in whys):
                d, w = whys[0]
                errors.append(f"{rel}: uses {s} of {d}: {w}")
            else:
                for d, w in whys:
                    if not w:
                        b = lay.unit(d)
                        edges[(a, b)] = edges.get((a, b), 0) + 1


def main(argv):
    args, graph, only = argv[1:], False, None
    while args and args[0].startswith("--"):
        if args[0] == "--graph":
            graph, args = True, args[1:]
        elif args[0] == "--only" and len(args) > 1:
            only, args = args[1].split(","), args[2:]
        else:
            args = []
    if not 1 <= len(args) <= 2:
        print(__doc__.strip().split("usage: ", 1)[1], file=sys.stderr)
        return 2
    try:
        lay = Layout(args[0], only)
    except (OSError, ValueError) as e:
        print(f"layers: {e}", file=sys.stderr)
        return 2
    errors, edges = [], {}
    check_placement(lay, errors)
    check_includes(lay, errors, edges)
    if len(args) == 2:
        check_symbols(lay, args[1], errors, edges)
    if graph:
        for (a, b), n in sorted(edges.items()):
            if a != b:
                print(f"{a[0]}/{a[1]} -> {b[0]}/{b[1]} {n}")
    for e in errors:
        print(f"layers: {e}", file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
