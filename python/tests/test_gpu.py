"""gpu= and instr=: a GPU and its matrix instruction name the nvidia rule instead of preset=.
On the first E4M3 row of our H200 capture (C = 0), where the two Hopper rules differ, the H100
and H200 through mma.sync give the bits that H200 returned through mma.sync (CUDA 13.0), and
through their default (wgmma) the bits cuBLAS returned on it; errors are the command line's,
without command-line flags."""

import numpy as np
import pytest

import tcrtl
from conftest import REPO, cli, cli_error, cli_json

H200 = REPO / "data" / "tensor-core-measurements" / "H200"


def _fp32_words(path, line=0):
    return [int(w, 16) for w in path.read_text().splitlines()[line].split()]


def _e4m3_row1():
    """A, B of the first E4M3 row as float8_e4m3fn values (from their FP32 words), its C and the
    D the H200 returned through mma.sync."""
    import ml_dtypes

    d = H200 / "E4M3"
    to8 = lambda ws: np.array(ws, np.uint32).view(np.float32).astype(ml_dtypes.float8_e4m3fn)
    a = to8(_fp32_words(d / "a_H200_E4M3.txt"))
    b = to8(_fp32_words(d / "b_H200_E4M3.txt"))
    c = int((d / "c_H200_fp32.txt").read_text().split()[0], 2)
    dd = int((d / "d_H200_fp32.txt").read_text().split()[0], 2)
    return a, b, c, dd


def _cublas_row1():
    lines = (H200 / "cublas" / "scaled_mm_fp8.txt").read_text().splitlines()
    i = lines.index("E4M3 fast=False out=float32")
    return int(lines[i + 1].split()[0], 16)


def test_gpu_and_instr_give_the_measured_bits():
    a, b, c, mma_sync = _e4m3_row1()
    assert c == 0
    native = _cublas_row1()
    assert mma_sync != native
    run = lambda **kw: int(tcrtl.dot(a, b, fmt="e4m3", acc="nvidia", **kw).bits[0])
    assert run(gpu="h100", instr="mma.sync") == mma_sync
    assert run(gpu="h200", instr="mma.sync") == mma_sync
    assert run(preset="h200") == mma_sync
    assert run(gpu="h100") == native
    assert run(gpu="H200", instr="wgmma") == native
    assert run(preset="hopper") == native
    # The same through matmul (one row by one column).
    m = tcrtl.matmul(a.reshape(1, 32), b.reshape(32, 1), fmt="e4m3", acc="nvidia",
                     gpu="h100", instr="mma.sync", width=32)
    assert int(m.bits[0, 0]) == mma_sync


def test_gemm_json_names_the_rule():
    for kw, want in [
        (dict(gpu="b200"), ("blackwell", "b200", "mma.sync")),
        (dict(gpu="h100", instr="mma.sync"), ("h200", "h100", "mma.sync")),
        (dict(preset="hopper"), ("hopper", "h100", "wgmma")),
    ]:
        g = tcrtl.gemm(m=4, n=4, k=32, fmt="e4m3", acc="nvidia", width=32, **kw)
        assert (g.json["preset"], g.json["gpu"], g.json["instr"]) == want, kw
    g = tcrtl.gemm(m=4, n=4, k=16, fmt="fp16")
    assert (g.json["preset"], g.json["gpu"], g.json["instr"]) == (None, None, None)
    # The command line's JSON for the same run.
    j = cli_json("gemm", "--m", "4", "--n", "4", "--k", "32", "--format", "e4m3", "--acc",
                 "nvidia", "--width", "32", "--gpu", "h100", "--instr", "mma.sync")
    assert (j["preset"], j["gpu"], j["instr"]) == ("h200", "h100", "mma.sync")


def test_pe_takes_a_gpu():
    pe = tcrtl.PE("fp16", "nvidia", 16, gpu="h100")
    assert pe.width == 16
    with pytest.raises(ValueError):
        tcrtl.PE("fp16", "nvidia", 16, gpu="b200", instr="tcgen05")


ERROR_CASES = [
    (dict(preset="h200", gpu="h100"), ["--preset", "h200", "--gpu", "h100"]),
    (dict(instr="wgmma"), ["--instr", "wgmma"]),
    (dict(gpu="b200", instr="tcgen05"), ["--gpu", "b200", "--instr", "tcgen05"]),
    (dict(gpu="a100", instr="wgmma"), ["--gpu", "a100", "--instr", "wgmma"]),
    (dict(gpu="h100", instr="wmma"), ["--gpu", "h100", "--instr", "wmma"]),
    (dict(gpu="v100"), ["--gpu", "v100"]),
    (dict(gpu="gtx1080"), ["--gpu", "gtx1080"]),
]


@pytest.mark.parametrize("kw,flags", ERROR_CASES, ids=lambda x: str(x))
def test_errors_are_the_command_lines_without_flags(kw, flags):
    msg = cli_error("dot", "--format", "e4m3", "--acc", "nvidia", *flags, "--a", "1", "--b", "1")
    assert "--" not in msg, msg
    a = np.array([[0x38]], np.uint8)
    with pytest.raises(ValueError) as e:
        tcrtl.dot(a, a, fmt="e4m3", acc="nvidia", **kw)
    assert str(e.value) == msg


def test_gpu_rows_is_the_command_lines_table():
    rows = tcrtl.gpu_rows()
    assert rows == cli_json("verify", "gpus")
    h100 = [r for r in rows if r["gpu"] == "h100"]
    assert [(r["instr"], r["preset"], r["default"]) for r in h100] == [
        ("wgmma", "hopper", True), ("mma.sync", "h200", False)]
    assert all(r["evidence"] for r in rows)
