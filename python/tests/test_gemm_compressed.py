"""tcrtl.gemm with a pre-compressed 2:4-sparse A (`a_values`, `a_meta`), against `tcrtl gemm
--sparse --a-values V.npy --a-meta M.npy --out --json` on the same arrays: D bit for bit and
the counters; the pair `tcrtl sparse compress` writes runs as the dense A it came from; any
valid metadata (not only the compressor's) is honoured, checked against a float64 product of
A decompressed by this test; every refusal raises ValueError with the command line's message
(its file named by the argument)."""

import numpy as np
import pytest

import tcrtl
from conftest import cli, cli_error, random_patterns
from test_gemm_mx_sparse import cli_run, mx_problem, sparse_a

# The six valid metadata nibbles (first index in the low two bits, second in the high two,
# strictly increasing), written out here from PTX's ordered-metadata encoding.
NIBBLES = {(f, s): f | (s << 2) for f in range(4) for s in range(4) if f < s}


def decompress(values, meta, k):
    """The dense A (as float64) of kept values and metadata, decoded by this test."""
    m = values.shape[0]
    dense = np.zeros((m, k))
    for i in range(m):
        for g in range(k // 4):
            nib = int(meta[i, g])
            first, second = nib & 3, nib >> 2
            dense[i, 4 * g + first] = values[i, 2 * g]
            dense[i, 4 * g + second] = values[i, 2 * g + 1]
    return dense


def compress_with_cli(tmp_path, npy, a, fmt):
    """`tcrtl sparse compress` of the dense A: its values and metadata files, loaded."""
    pv, pm = tmp_path / "V.npy", tmp_path / "M.npy"
    cli("sparse", "compress", "--a", npy("Adense", a), "--format", fmt, "--values", pv,
        "--meta", pm)
    return pv, pm, np.load(pv), np.load(pm)


RUNS = [
    dict(fmt="fp16", m=8, n=8, k=32, width=2),
    dict(fmt="bf16", m=6, n=9, k=40, acc="fused", width=4),
    dict(fmt="e4m3", m=8, n=8, k=64, acc="nvidia", preset="hopper", width=8),
    dict(fmt="fp16", m=8, n=6, k=32, width=2, rows=2, cols=3, dataflow="ws"),
    dict(fmt="fp16", m=8, n=8, k=32, width=2, memory="tma"),
]


@pytest.mark.parametrize("run", RUNS, ids=lambda r: "-".join(f"{k}={v}" for k, v in r.items()))
def test_compressed_a_matches_cli(tmp_path, npy, run):
    run = dict(run)
    fmt, m, n, k = run.pop("fmt"), run.pop("m"), run.pop("n"), run.pop("k")
    a = sparse_a(fmt, m, k, seed=2 * m + k)
    b = random_patterns(fmt, (k, n), seed=m + k + 7)
    c = np.random.default_rng(k + 1).uniform(-2, 2, (m, n)).astype(np.float32)
    pv, pm, values, meta = compress_with_cli(tmp_path, npy, a, fmt)
    assert values.shape == (m, k // 2) and meta.shape == (m, k // 4) and meta.dtype == np.uint8
    opts = ["--format", fmt, "--sparse", "--a-values", pv, "--a-meta", pm, "--b", npy("B", b),
            "--c", npy("C", c), "--check"]
    for key, v in run.items():
        opts += [f"--{key}", v]
    j, d = cli_run(tmp_path, *opts)
    r = tcrtl.gemm(b=b, c=c, a_values=values, a_meta=meta, fmt=fmt, sparse=True, check=True,
                   **run)
    assert np.array_equal(r.d, d.reshape(m, n))
    assert np.count_nonzero(r.values) > m * n // 2
    for key in ("m", "n", "k", "cycles", "tiles", "macs", "mac_slots_used", "mac_slots_offered",
                "utilization", "dataflow", "acc", "width", "flags", "check"):
        assert r.json[key] == j[key], key
    assert r.check["mismatches"] == 0 and r.macs == m * n * k // 2
    for key, v in j["memory"].items():
        if key in r.json["memory"]:
            assert r.json["memory"][key] == v, key
    # The compressed pair runs as the dense A it came from (compressed by the library).
    rd = tcrtl.gemm(a, b, c, fmt=fmt, sparse=True, **run)
    assert np.array_equal(rd.d, r.d) and rd.cycles == r.cycles


def test_any_valid_metadata_is_honoured(tmp_path, npy):
    """Metadata the compressor would not write (every valid nibble in turn, kept zeros at any
    position): D is the command line's, and close to the float64 product of A decompressed
    by this test (so the nibbles mean what PTX says)."""
    m, n, k = 6, 5, 48
    g = np.random.default_rng(77)
    pairs = list(NIBBLES.values())
    meta = np.array([[pairs[(i + gi) % 6] for gi in range(k // 4)] for i in range(m)],
                    dtype=np.uint8)
    values = g.uniform(-2, 2, (m, k // 2)).astype(np.float16)
    values[0, 3] = 0.0
    values[2, 0] = -0.0
    b = g.uniform(-1, 1, (k, n)).astype(np.float16)
    c = g.uniform(-1, 1, (m, n)).astype(np.float32)
    j, d = cli_run(tmp_path, "--sparse", "--a-values", npy("V", values), "--a-meta",
                   npy("M", meta), "--b", npy("B", b), "--c", npy("C", c), "--width", 2,
                   "--acc", "fused")
    r = tcrtl.gemm(b=b, c=c, a_values=values, a_meta=meta, sparse=True, width=2, acc="fused")
    assert np.array_equal(r.d, d.reshape(m, n))
    want = decompress(values.astype(np.float64), meta, k) @ b.astype(np.float64) + c
    assert np.allclose(r.values, want, rtol=1e-5, atol=1e-5)
    # The metadata is not ignored: the same values under other nibbles give another D.
    other = np.roll(meta, 1, axis=1)
    r2 = tcrtl.gemm(b=b, c=c, a_values=values, a_meta=other, sparse=True, width=2, acc="fused")
    assert not np.array_equal(r2.d, r.d)
    # Values as bit patterns are the same A.
    r3 = tcrtl.gemm(b=b, c=c, a_values=values.view(np.uint16), a_meta=meta, sparse=True,
                    width=2, acc="fused")
    assert np.array_equal(r3.d, r.d)


def test_compressed_refusals_match_cli(npy):
    """Bad metadata, shapes and dimensions: the command line's one-line message, its file
    named by the argument."""
    m, k, n = 4, 16, 4
    values = np.random.default_rng(5).uniform(-2, 2, (m, k // 2)).astype(np.float16)
    meta = np.full((m, k // 4), NIBBLES[(0, 2)], np.uint8)
    b = random_patterns("fp16", (k, n), seed=6)

    def case(values_=values, meta_=meta, b_=b, flags=(), needle="", **kw):
        pv, pm, pb = npy("V", values_), npy("M", meta_), npy("B", b_)
        msg = cli_error("gemm", "--sparse", "--a-values", pv, "--a-meta", pm, "--b", pb,
                        *flags)
        assert needle in msg, msg
        msg = msg.replace(str(pv), "a_values").replace(str(pm), "a_meta")
        with pytest.raises(ValueError) as e:
            tcrtl.gemm(b=b_, a_values=values_, a_meta=meta_, sparse=True, **kw)
        assert str(e.value) == msg
        return msg

    # Nibbles outside the six valid ones: equal indices, decreasing, wider than 4 bits.
    for bad, needle in [(0b0000, "both indices are 0"), (0b0110, "first index 2 is above"),
                        (0x14, "does not fit in 4 bits")]:
        md = meta.copy()
        md[2, 3] = bad
        msg = case(meta_=md, flags=("--width", 2), needle=needle, width=2)
        assert msg.startswith("metadata row 2, group 3: invalid 2:4 nibble"), msg
    # Shapes that do not pair up, metadata that is not one nibble a byte.
    case(meta_=meta[:, :3], needle="metadata is 4 x 3 but values are 4 x 8; expected 4 x 4")
    case(meta_=meta[:3], needle="metadata is 3 x 4")
    msg = case(meta_=meta.astype(np.uint16), needle="must be uint8")
    assert msg.startswith("a_meta: metadata must be uint8 (one nibble per byte), found uint16")
    case(meta_=meta.view(np.int8), needle="found int8")
    case(meta_=meta.reshape(-1), needle="expected a 2-D array")
    case(meta_=np.zeros((m, 0), np.uint8), needle="empty matrix")
    case(values_=np.zeros((0, 8), np.float16), needle="empty matrix")
    # B's inner dimension, and the B bus of the sparse PE.
    case(b_=random_patterns("fp16", (12, n), seed=7), needle="inner dimensions differ")
    tv = random_patterns("tf32", (m, k // 2), seed=8)
    tb = random_patterns("tf32", (k, n), seed=9)
    case(values_=tv, b_=tb, flags=("--format", "tf32", "--width", 1), needle="bit bus",
         fmt="tf32", width=1)
    # No B.
    msg = cli_error("gemm", "--sparse", "--a-values", npy("V", values), "--a-meta",
                    npy("M", meta))
    with pytest.raises(ValueError) as e:
        tcrtl.gemm(a_values=values, a_meta=meta, sparse=True)
    # The command line names its option, the package the argument (the job's own check).
    assert msg == "give --b B.npy"
    assert str(e.value) == "a compressed A needs b, the B operand"


def test_compressed_argument_combinations():
    """Combinations the command line's parser refuses raise ValueError too."""
    m, k = 4, 16
    values = np.ones((m, k // 2), np.float16)
    meta = np.full((m, k // 4), NIBBLES[(0, 1)], np.uint8)
    b = np.ones((k, 4), np.float16)
    with pytest.raises(ValueError, match="needs the sparse option"):
        tcrtl.gemm(b=b, a_values=values, a_meta=meta)
    with pytest.raises(ValueError, match="a_values and a_meta"):
        tcrtl.gemm(b=b, a_values=values, sparse=True)
    with pytest.raises(ValueError, match="a_values and a_meta"):
        tcrtl.gemm(np.ones((m, k), np.float16), b, a_values=values, a_meta=meta, sparse=True)
    with pytest.raises(ValueError, match="a_values and a_meta"):
        tcrtl.gemm(m=4, n=4, k=16, a_values=values, a_meta=meta, sparse=True)
    # Block-scaled GEMMs run dense.
    a, bb, sa, sb, _ = mx_problem("mxfp4", 4, 4, 64, seed=2)
    with pytest.raises(ValueError, match="--sparse is not available with MX formats"):
        tcrtl.gemm(b=bb, a_values=a[:, :32], a_meta=meta, a_scales=sa, b_scales=sb,
                   fmt="mxfp4")
    # With the pair given, prune (for a dense A) has nothing to prune, as on the command line.
    r = tcrtl.gemm(b=b, a_values=values, a_meta=meta, sparse=True, width=2, prune=True)
    assert np.all(r.values == k // 2)


def test_docs_example_runs():
    """The pre-compressed example of docs/python.md."""
    b = np.random.default_rng(3).uniform(-1, 1, (32, 8)).astype(np.float16)
    vals = np.random.default_rng(4).uniform(-2, 2, (8, 16)).astype(np.float16)  # m x K/2
    meta = np.full((8, 8), 0b1100, np.uint8)       # each group of four keeps columns 0 and 3
    r = tcrtl.gemm(b=b, a_values=vals, a_meta=meta, sparse=True, width=2, check=True)
    assert r.check["mismatches"] == 0 and r.macs == 8 * 8 * 32 // 2
    dense = np.zeros((8, 32))
    dense[:, 0::4], dense[:, 3::4] = vals[:, 0::2], vals[:, 1::2]
    assert np.allclose(r.values, dense @ b.astype(np.float64), rtol=1e-5, atol=1e-5)
