#!/usr/bin/env python3
# mdlinks.py: the relative links of Markdown files, checked. Every inline link or image
# ([text](dest), ![alt](dest)), reference definition ([name]: dest) and HTML href/src
# outside code (fenced blocks and `code spans`) whose destination has no scheme must name
# an existing file or folder, relative to the file that holds it; a #fragment must name a
# heading of the target Markdown file (the file itself when the path is empty) by GitHub's
# rule, or an explicit <a name/id>. Absolute URLs are not fetched.
#
# GitHub's heading ids: the heading's text (inline code, links and HTML reduced to their
# text), lower-cased, every character that is not a letter, digit, '_', '-' or space
# dropped, spaces turned into '-'; the second heading with the same id gets "-1", the
# third "-2", and so on. Non-Markdown targets accept only GitHub's line fragments (#L12,
# #L12-L20).
#
# Usage: mdlinks.py FILE.md...  Prints one line per broken link (FILE:LINE: DEST: why)
# and exits 1 when there is any, else prints the number of links checked and exits 0.
import os
import re
import sys

FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
CODE_SPAN = re.compile(r"(`+)(.+?)\1")
INLINE = re.compile(
    r"!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*(<[^>]*>|[^\s)]+)(?:\s+(?:\"[^\"]*\"|'[^']*'))?\s*\)"
)
REFDEF = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)")
HTML_REF = re.compile(r"""<(?:a|img)\b[^>]*?\b(?:href|src)\s*=\s*["']([^"']+)["']""", re.I)
HTML_ANCHOR = re.compile(r"""<[a-z]+\b[^>]*?\b(?:name|id)\s*=\s*["']([^"']+)["']""", re.I)
SCHEME = re.compile(r"^(?:[a-zA-Z][a-zA-Z0-9+.-]*:|//)")
LINE_FRAGMENT = re.compile(r"^L\d+(?:-L\d+)?$")


def prose_lines(path):
    """(line number, text) of the lines outside fenced code blocks."""
    fence = None
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            m = FENCE.match(line)
            if fence is None and m:
                fence = m.group(1)[0] * len(m.group(1))
                continue
            if fence is not None:
                if m and m.group(1).startswith(fence):
                    fence = None
                continue
            yield n, line.rstrip("\n")


def slug(text):
    text = CODE_SPAN.sub(lambda m: m.group(2), text)
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"<[^>]+>", "", text)
    text = text.strip().lower()
    text = "".join(c for c in text if c.isalnum() or c in "_- ")
    return text.replace(" ", "-")


_anchors = {}


def anchors(path):
    """The ids GitHub gives path's headings, with its explicit HTML anchors."""
    if path not in _anchors:
        seen, ids = {}, set()
        for _, line in prose_lines(path):
            ids.update(HTML_ANCHOR.findall(line))
            m = HEADING.match(line)
            if not m:
                continue
            base = slug(m.group(2))
            n = seen.get(base, 0)
            seen[base] = n + 1
            ids.add(base if n == 0 else "%s-%d" % (base, n))
        _anchors[path] = ids
    return _anchors[path]


def destinations(line):
    prose = CODE_SPAN.sub("", line)
    found = [m.group(1) for m in INLINE.finditer(prose)]
    m = REFDEF.match(prose)
    if m:
        found.append(m.group(1))
    found.extend(HTML_REF.findall(prose))
    return [d[1:-1] if d.startswith("<") else d for d in found]


def why_broken(src, dest):
    """None when dest, a link found in src, resolves; else what is wrong."""
    path, _, frag = dest.partition("#")
    target = os.path.normpath(os.path.join(os.path.dirname(src), path)) if path else src
    if not os.path.exists(target):
        return "no such file %s" % target
    if not frag:
        return None
    if not target.endswith(".md"):
        return None if LINE_FRAGMENT.match(frag) else "fragment into a non-Markdown file"
    if os.path.isdir(target):
        return "fragment into a folder"
    if frag not in anchors(target):
        return "no heading #%s in %s" % (frag, target)
    return None


def main(files):
    broken = checked = 0
    for src in files:
        for n, line in prose_lines(src):
            for dest in destinations(line):
                if SCHEME.match(dest):
                    continue
                checked += 1
                why = why_broken(src, dest)
                if why:
                    broken += 1
                    print("%s:%d: %s: %s" % (src, n, dest, why))
    if broken:
        return 1
    print("%d relative links checked in %d files" % (checked, len(files)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
