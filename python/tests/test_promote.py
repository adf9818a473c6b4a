"""``promote_every`` of tcrtl.dot and tcrtl.matmul against ``tcrtl dot --promote-every`` and
``tcrtl gemm --promote-every`` on the same operands, and the refusals with the command line's
messages."""

import numpy as np
import pytest

import tcrtl
from conftest import cli, cli_error, random_c, random_patterns

ROWS, K = 200, 300


def cli_batch(npy, a, b, c, *opts):
    out = npy("D", np.zeros(1, np.uint8)).with_name("D_out.npy")
    cli("dot", "--a", npy("A", a), "--b", npy("B", b), "--c", npy("C", c), "--out", out, *opts)
    return np.load(out)


@pytest.mark.parametrize("fmt,acc,preset,every", [
    ("e4m3", "nvidia", "hopper", 128),
    ("e5m2", "nvidia", "hopper", 64),
    ("fp16", "nvidia", "ampere", 24),
    ("bf16", "ieee", None, 7),
    ("e4m3", "fused", None, 50),
])
def test_dot_batch_matches_cli(npy, fmt, acc, preset, every):
    a = random_patterns(fmt, (ROWS, K), seed=11)
    b = random_patterns(fmt, (ROWS, K), seed=12)
    c = random_c(ROWS)
    opts = ["--format", fmt, "--acc", acc, "--promote-every", every]
    if preset:
        opts += ["--preset", preset]
    want = cli_batch(npy, a, b, c, *opts)
    got = tcrtl.dot(a, b, c, fmt=fmt, acc=acc, preset=preset, promote_every=every)
    assert np.array_equal(got.bits, want)
    # Promotion changes the result of these long rows (the unpromoted bits differ somewhere).
    plain = tcrtl.dot(a, b, c, fmt=fmt, acc=acc, preset=preset)
    assert not np.array_equal(plain.bits, got.bits)


def test_interval_of_k_or_more_is_no_promotion():
    a = random_patterns("e4m3", (20, 64), seed=13)
    b = random_patterns("e4m3", (20, 64), seed=14)
    c = random_c(20)
    plain = tcrtl.dot(a, b, c, fmt="e4m3", acc="nvidia", preset="hopper")
    for n in (64, 96, 4096):
        r = tcrtl.dot(a, b, c, fmt="e4m3", acc="nvidia", preset="hopper", promote_every=n)
        assert np.array_equal(r.bits, plain.bits)


def test_matmul_matches_cli_gemm(npy, tmp_path):
    a = random_patterns("e4m3", (6, 200), seed=15)
    b = random_patterns("e4m3", (200, 5), seed=16)
    c = np.linspace(-2, 2, 30, dtype=np.float32).reshape(6, 5)
    out = tmp_path / "D_gemm.npy"
    cli("gemm", "--a", npy("A", a), "--b", npy("B", b), "--c", npy("C", c), "--format", "e4m3",
        "--acc", "nvidia", "--preset", "hopper", "--width", "4", "--promote-every", "64",
        "--check", "--out", out)
    want = np.load(out).view(np.uint32)
    mm = tcrtl.matmul(a, b, c, fmt="e4m3", acc="nvidia", preset="hopper", width=4,
                      promote_every=64)
    assert np.array_equal(mm.bits, want)
    # Each element is tcrtl.dot of its row and column promoted the same way.
    rows = np.repeat(a, 5, axis=0)
    cols = np.tile(b.T, (6, 1))
    dd = tcrtl.dot(rows, cols, c.reshape(-1), fmt="e4m3", acc="nvidia", preset="hopper",
                   promote_every=64)
    assert np.array_equal(dd.bits.reshape(6, 5), mm.bits)


def test_refusals_carry_the_cli_messages():
    a = random_patterns("e4m3", (2, 64), seed=17)
    b = random_patterns("e4m3", (2, 64), seed=18)
    msg = cli_error("dot", "--format", "e4m3", "--acc", "nvidia", "--preset", "hopper",
                    "--a", "1", "--b", "1", "--promote-every", "48")
    with pytest.raises(ValueError) as e:
        tcrtl.dot(a, b, fmt="e4m3", acc="nvidia", preset="hopper", promote_every=48)
    assert str(e.value) == msg
    msg = cli_error("dot", "--format", "fp16", "--a", "1", "--b", "1", "--out-format", "fp16",
                    "--promote-every", "2")
    with pytest.raises(ValueError) as e:
        tcrtl.dot(np.ones((1, 4), np.uint16), np.ones((1, 4), np.uint16), out_fmt="fp16",
                  promote_every=2)
    assert str(e.value) == msg
    msg = cli_error("dot", "--format", "s8", "--a", "1", "--b", "1", "--promote-every", "2")
    with pytest.raises(ValueError) as e:
        tcrtl.dot(np.ones((1, 4), np.int8), np.ones((1, 4), np.int8), fmt="s8", promote_every=2)
    assert str(e.value) == msg
    with pytest.raises(ValueError, match="at least 1 product"):
        tcrtl.matmul(np.ones((2, 4), np.uint16), np.ones((4, 2), np.uint16), promote_every=0)
