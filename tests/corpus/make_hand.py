#!/usr/bin/env python3
"""Writes the hand-made pprof protobuf cases of the corpus (no tool writes them): function
names with a NUL inside (two that differ only after it), names that are not valid
UTF-8, and a delta profile (negative values). Usage: make_hand.py OUT_DIR. Deterministic; the outputs are committed."""
import sys


def varint(n):
    out = b""
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out += bytes([b | 0x80])
        else:
            return out + bytes([b])


def field(num, payload):  # length-delimited
    return varint(num << 3 | 2) + varint(len(payload)) + payload


def num(num_, v):
    return varint(num_ << 3) + varint(v & 0xFFFFFFFFFFFFFFFF)


def packed(num_, vals):
    return field(num_, b"".join(varint(v & 0xFFFFFFFFFFFFFFFF) for v in vals))


def profile(names, stacks):
    """names: list of bytes; stacks: list of (list of function indexes leaf first, objects, bytes)."""
    strs = [b"", b"inuse_objects", b"count", b"inuse_space", b"bytes", b"space", b"main.c"]
    base = len(strs)
    strs += names
    out = field(1, num(1, 1) + num(2, 2)) + field(1, num(1, 3) + num(2, 4))
    for locs, n, s in stacks:
        out += field(2, packed(1, [i + 1 for i in locs]) + packed(2, [n, s]))
    out += field(3, num(1, 1) + num(2, 0x400000) + num(3, 0x500000) + num(5, 6) + num(7, 1))
    for i in range(len(names)):
        out += field(4, num(1, i + 1) + num(2, 1) + num(3, 0x401000 + 16 * i) +
                     field(4, num(1, i + 1) + num(2, 10 + i)))
        out += field(5, num(1, i + 1) + num(2, base + i) + num(3, base + i) + num(4, 6))
    for s in strs:
        out += field(6, s)
    out += field(11, num(1, 5) + num(2, 4)) + num(12, 524288)
    return out


def main():
    d = sys.argv[1]
    nul = [b"main", b"alloc\x00first", b"alloc\x00second", b"ctl\x01\x1f\x7fname"]
    open(d + "/nul_names.pb", "wb").write(
        profile(nul, [([1, 0], 1, 1024), ([2, 0], 2, 4096), ([3, 0], 3, 300)]))
    bad = [b"main", b"caf\xc3\xa9_ok", b"bad\xff\xfe<&>", b"cut\xe2\x82", b"overlong\xc0\xaf",
           b"surrogate\xed\xa0\x80"]
    open(d + "/invalid_utf8.pb", "wb").write(
        profile(bad, [([1, 0], 1, 1000), ([2, 0], 2, 2000), ([3, 0], 3, 3000),
                      ([4, 0], 4, 4000), ([5, 0], 5, 5000)]))

    delta = [b"main", b"grew", b"shrank", b"mixed"]
    open(d + "/delta.pb", "wb").write(
        profile(delta, [([1, 0], 3, 3072), ([2, 0], -2, -8192), ([3, 0], 1, 100),
                        ([3, 1, 0], -1, -50)]))


main()
