"""Shared helpers: the repository, the `tcrtl` command line built by cargo (the independent
front door every function is compared with), and .npy files for it."""

import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]


def _cli_path() -> Path:
    env = os.environ.get("TCRTL_BIN")
    if env:
        return Path(env)
    for profile in ("release", "debug"):
        p = REPO / "target" / profile / "tcrtl"
        if p.exists():
            return p
    raise RuntimeError("build the command line first: cargo build --release (or set TCRTL_BIN)")


CLI = _cli_path()


def cli(*args, check=True):
    """Runs `tcrtl ARGS`; returns (exit code, stdout, stderr)."""
    p = subprocess.run([str(CLI), *map(str, args)], capture_output=True, text=True)
    if check and p.returncode != 0:
        raise AssertionError(f"tcrtl {' '.join(map(str, args))} failed ({p.returncode}): {p.stderr}")
    return p.returncode, p.stdout, p.stderr


def cli_json(*args):
    return json.loads(cli(*args, "--json")[1])


def cli_error(*args) -> str:
    """The one-line message of a refused command (stderr 'error: MSG', exit 2)."""
    rc, _, err = cli(*args, check=False)
    assert rc == 2, f"tcrtl {' '.join(map(str, args))}: exit {rc}, stderr {err!r}"
    line = err.strip().splitlines()[-1]
    assert line.startswith("error: "), err
    return line[len("error: "):]


@pytest.fixture
def npy(tmp_path):
    """Writes arrays to .npy files in a temporary folder: npy(name, array) -> path."""

    def save(name, arr):
        p = tmp_path / f"{name}.npy"
        np.save(p, arr)
        return p

    return save


def rng(seed=1):
    return np.random.default_rng(seed)


def random_patterns(fmt, shape, seed=1, finite=True):
    """Random bit patterns of `fmt` with exponents near the bias (sums that carry, cancel and
    round), drawn with numpy (not by the code under test)."""
    g = rng(seed)
    if fmt in ("fp16",):
        sign = g.integers(0, 2, shape) << 15
        exp = g.integers(10, 20, shape) << 10
        frac = g.integers(0, 1 << 10, shape)
        return (sign | exp | frac).astype(np.uint16)
    if fmt == "bf16":
        sign = g.integers(0, 2, shape) << 15
        exp = g.integers(120, 134, shape) << 7
        frac = g.integers(0, 1 << 7, shape)
        return (sign | exp | frac).astype(np.uint16)
    if fmt == "e4m3":
        sign = g.integers(0, 2, shape) << 7
        exp = g.integers(3, 12, shape) << 3
        frac = g.integers(0, 8, shape)
        return (sign | exp | frac).astype(np.uint8)
    if fmt == "e5m2":
        sign = g.integers(0, 2, shape) << 7
        exp = g.integers(10, 20, shape) << 2
        frac = g.integers(0, 4, shape)
        return (sign | exp | frac).astype(np.uint8)
    if fmt == "tf32":
        sign = g.integers(0, 2, shape).astype(np.uint64) << 31
        exp = g.integers(120, 134, shape).astype(np.uint64) << 23
        frac = g.integers(0, 1 << 10, shape).astype(np.uint64) << 13
        return (sign | exp | frac).astype(np.uint32)
    raise ValueError(fmt)


def random_c(rows, seed=2, fp16=False):
    g = rng(seed)
    vals = g.uniform(-4, 4, rows)
    if fp16:
        return vals.astype(np.float16).view(np.uint16)
    return vals.astype(np.float32).view(np.uint32)
