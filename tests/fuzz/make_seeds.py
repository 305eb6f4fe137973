#!/usr/bin/env python3
"""Writes the seed corpus of the fuzz targets: tests/fuzz/corpus/<target>/seed-*.

The seeds are small inputs in each harness's byte encoding (the decoders are in
tests/fuzz/fuzz_*.cpp; Bytes in fuzz_support.hpp: one byte per small value, value =
lo + byte % span, two little-endian bytes when the span exceeds 256), so that fuzzing
starts from valid programs: einsum subscripts of the common kinds, view chains, external
layouts inside and outside the buffer, and every op family. Crash reproducers are kept
beside them as crash-<what> (never rewritten here). Deterministic: running it again
rewrites the same files.

Usage: tests/fuzz/make_seeds.py [CORPUS_DIR]   (default: tests/fuzz/corpus)
"""
import os
import random
import sys


def r(lo, v):
    """The byte that Bytes::range(lo, hi) decodes as v (span <= 256)."""
    return bytes([v - lo])


def r16(lo, hi, v):
    """The two bytes Bytes::range(lo, hi) decodes as v (span > 256)."""
    x = v - lo
    return bytes([x & 0xFF, x >> 8])


def flag(b):
    return bytes([1 if b else 0])


# ---------------------------------------------------------------- fuzz_einsum
EINSUM_SUBSCRIPTS = [
    "ij,jk->ik", "ij,jk", "ii->", "ii->i", "iij->ij", "i,i->", "i,j->ij", "ij->ji",
    "...i,...i->...", "ij...,jk...->ik...", "(ij,jk),kl->il", "ij,jk,kl->il",
    "ab,bc,cd,de->ae", "abc,bcd,cde->ae", "ij,ij->ij", "i->", "->", "a,a,a->a",
    "\u03b1\u03b2,\u03b2\u03b3->\u03b1\u03b3", "ij,jk,kl,lm,mn->in", "ab,cd->abcd",
    "ij,jk->", "ijk,jkl,klm->im", "i j , j k -> i k", "a...,a...->...",
]


def einsum_string_seed(subs, optimizer=0, extra=0, dtype=0, extra_bytes=b""):
    b = subs.encode("utf-8")
    assert len(b) <= 48
    n_ops = subs.split("->")[0].count(",") + 1
    out = bytes([0]) + r(0, len(b)) + b
    out += flag(True)  # derive the shapes from the labels
    out += bytes([2, 3, 2, 3, 1, 2, 3, 2, 2, 3, 1, 2, 3, 2, 3, 2])  # label extents 1..3
    out += r(0, 1)  # one ellipsis axis
    out += bytes([1])  # no perturbed extent
    out += bytes([optimizer, 0, 16, 7, extra]) + extra_bytes
    out += bytes([dtype]) * n_ops
    out += bytes([1]) * n_ops  # compact operands
    out += bytes([0])
    return out


def einsum_integer_seed(labels, output, optimizer=0):
    out = bytes([3]) + r(0, len(labels)) + bytes([1])
    for l in labels:
        out += r(0, len(l)) + bytes(l)
    if output is None:
        out += flag(False)
    else:
        out += flag(True) + r(0, len(output)) + bytes(output)
    out += bytes([2, 3, 2, 3, 1, 2, 3, 2])
    out += bytes([1]) * len(labels)  # ranks match
    out += bytes([optimizer, 0, 16, 7, 0])
    out += bytes([0]) * len(labels)
    out += bytes([1]) * len(labels)
    return out


def einsum_seeds():
    seeds = {}
    for k, subs in enumerate(EINSUM_SUBSCRIPTS):
        seeds[f"string-{k:02d}"] = einsum_string_seed(subs, optimizer=k % 5, dtype=[0, 1, 2, 3][k % 4])
    # Memory limits (8 elements, 64 bytes) that force slicing; a linear path and a tree.
    seeds["sliced-elements"] = einsum_string_seed("ij,jk,kl->il", extra=1, extra_bytes=r(0, 8))
    seeds["sliced-bytes"] = einsum_string_seed("abc,bcd,cde->ae", extra=2, extra_bytes=r16(0, 512, 64))
    seeds["path"] = einsum_string_seed("ij,jk,kl->il", extra=3, extra_bytes=r(0, 2) + (r(-1, 0) + r(-1, 1)) * 2)
    seeds["tree"] = einsum_string_seed("ij,jk,kl->il", extra=4, extra_bytes=r(0, 2) + r(-1, 0) + r(-1, 1) + r(-1, 3) + r(-1, 2))
    seeds["bad-utf8"] = bytes([0]) + r(0, 6) + b"\xc0\xaf,\xed\xa0\x80" + bytes(40)
    seeds["integer-matmul"] = einsum_integer_seed([[0, 1], [1, 2]], [0, 2])
    seeds["integer-implicit"] = einsum_integer_seed([[0, 1], [1, 2], [2, 3]], None, optimizer=2)
    seeds["integer-trace"] = einsum_integer_seed([[4, 4]], [])
    seeds["integer-chain"] = einsum_integer_seed([[0, 1], [1, 2], [2, 3], [3, 4]], [0, 4], optimizer=4)
    return seeds


# ---------------------------------------------------------------- fuzz_views
def views_base(complex_, shape):
    return flag(complex_) + r(0, len(shape)) + b"".join(r(-1, e) for e in shape)


def views_seeds():
    rnd = random.Random(14)
    seeds = {}
    base = views_base(False, [3, 4, 2])
    # reshape_view [6, 4], permute, slice step -1, broadcast, as_strided.
    seeds["reshape"] = base + bytes([0]) + r(0, 2) + r(-1, 6) + r(-1, 4)
    seeds["permute"] = base + bytes([2, 1, 0, 1])
    seeds["transpose"] = base + bytes([3]) + r(-4, 0) + r(-4, 2)
    seeds["slice-negative"] = base + bytes([4]) + r(-4, 1) + bytes([0x10 + 0]) + flag(True) + bytes([0xFF])
    seeds["slice-op"] = base + bytes([5]) + (r(-1, 1) + r(-1, 3) + bytes([1]) + r(-1, 2)) * 3
    seeds["broadcast"] = views_base(False, [1, 4]) + bytes([6, 1]) + r(0, 3) + r(-1, 3) + r(-1, 4) + r(-1, 5)
    seeds["broadcast-in-dim"] = views_base(False, [3]) + bytes([7, 1]) + r(0, 2) + r(-1, 4) + r(-1, 3) + r(-7, 1)
    seeds["as-strided"] = base + bytes([8, 1]) + r(0, 2) + r(-1, 3) + r(-1, 3) + r(-8, 2) + r(-8, -1) + bytes([1]) + r(-4, 5)
    seeds["as-strided-wide"] = base + bytes([8, 0]) + r(0, 1) + bytes([12, 0, 15]) + bytes(8) + bytes([1]) + bytes([13, 0])
    seeds["real-imag"] = views_base(True, [2, 3]) + bytes([10, 1, 10, 0])
    seeds["diagonal"] = views_base(False, [3, 3, 2]) + bytes([11, 1]) + r(-4, 0) + r(-4, 1)
    seeds["reverse"] = base + bytes([11, 0]) + r(0, 2) + r(-4, 0) + r(-4, 2)
    seeds["empty"] = views_base(False, [0, 3]) + bytes([1, 0, 2, 1, 0])
    seeds["scalar"] = views_base(False, []) + bytes([6, 1]) + r(0, 2) + r(-1, 5) + r(-1, 5)
    seeds["rank9"] = base + bytes([1]) + r(0, 9) + bytes([1]) * 9
    for k in range(12):
        seeds[f"random-{k:02d}"] = views_base(k % 3 == 0, [2, 3, 2][: k % 4]) + bytes(rnd.randrange(256) for _ in range(48))
    return seeds


# ---------------------------------------------------------------- fuzz_external
def external_desc(dtype, shape, strides, start, null=False, read_only=False, wide=False):
    out = bytes([dtype, len(shape), 0 if wide else 1])
    out += b"".join(r(0, e) for e in shape)
    if strides is None:
        out += bytes([0])
    else:
        out += bytes([1, 1]) + b"".join(r(-6, s) for s in strides)
    out += r16(0, 512, start) + bytes([0 if null else 1]) + flag(read_only)
    return out


def external_seeds():
    rnd = random.Random(15)
    seeds = {}
    f64, c128, b8, i32 = 4, 6, 0, 1
    seeds["compact"] = external_desc(f64, [3, 4], None, 0)
    seeds["strided"] = external_desc(f64, [3, 4], [1, 5], 16)
    seeds["negative"] = external_desc(f64, [3, 4], [-1, -3], 200)
    seeds["negative-outside"] = external_desc(f64, [3, 4], [-1, -3], 8)
    seeds["zero-stride"] = external_desc(f64, [3, 4], [0, 1], 0)
    seeds["overlap"] = external_desc(f64, [3, 3], [1, 1], 0)
    seeds["end"] = external_desc(b8, [6], None, 506)
    seeds["past-end"] = external_desc(c128, [4, 2], None, 480)
    seeds["misaligned"] = external_desc(i32, [2], None, 3)
    seeds["read-only"] = external_desc(f64, [2, 2], None, 8, read_only=True)
    seeds["null-empty"] = external_desc(f64, [0, 3], None, 0, null=True)
    seeds["null"] = external_desc(f64, [2], None, 0, null=True)
    seeds["dtype-outside"] = external_desc(8, [2], None, 0)
    seeds["scalar"] = external_desc(c128, [], None, 32)
    seeds["rank65"] = bytes([f64, 31, 1]) + bytes([1]) * 65 + bytes([0]) + r16(0, 512, 0) + bytes([1, 0])
    seeds["wide"] = bytes([f64, 2, 0, 1, 14, 40, 1, 1, 1, 1, 15]) + bytes([0xFF] * 8) + bytes([1, 2]) + r16(0, 512, 0) + bytes([1, 0])
    seeds["huge-compact"] = bytes([f64, 2, 0, 1, 14, 40, 1, 14, 40, 1, 0]) + r16(0, 512, 0) + bytes([1, 0])
    for k in range(14):
        d = external_desc(rnd.choice([0, 1, 2, 3, 4, 5, 6]), [rnd.randrange(4) for _ in range(k % 4)],
                          None if k % 5 == 0 else [rnd.randrange(-3, 6) for _ in range(k % 4)], rnd.randrange(512))
        seeds[f"random-{k:02d}"] = d + bytes(rnd.randrange(256) for _ in range(40))
    return seeds


# ---------------------------------------------------------------- fuzz_ops
def ops_seeds():
    rnd = random.Random(16)
    seeds = {}
    names = ["binary", "unary", "conversion", "reduction", "along-axis", "blas1", "structural", "indexing",
             "contraction", "analytic"]
    for family, name in enumerate(names):
        for k in range(5):
            body = bytes([rnd.randrange(256)]) + bytes([2, 2, 3, 1, 3]) + bytes(rnd.randrange(256) for _ in range(40))
            seeds[f"{name}-{k}"] = bytes([family]) + body
    # A matmul through dot_general: [2, 3] · [3, 2], contracting (1, 0), f64.
    seeds["contraction-matmul"] = bytes([8]) + r(0, 2) + r(0, 2) + r(0, 3) + bytes([3]) + r(0, 2) + r(0, 3) + r(0, 2) \
        + bytes([4, 0, 4, 0]) + r(0, 1) + r(0, 0) + r(-1, 1) + r(-1, 0) + bytes([0, 0])
    return seeds


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")
    for target, seeds in (("fuzz_einsum", einsum_seeds()), ("fuzz_views", views_seeds()),
                          ("fuzz_external", external_seeds()), ("fuzz_ops", ops_seeds())):
        d = os.path.join(root, target)
        os.makedirs(d, exist_ok=True)
        for name, data in seeds.items():
            with open(os.path.join(d, f"seed-{name}"), "wb") as f:
                f.write(data)
        print(f"{target}: {len(seeds)} seeds")


if __name__ == "__main__":
    main()
