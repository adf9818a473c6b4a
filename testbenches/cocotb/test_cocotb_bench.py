"""The cocotb benches, proved on known designs: run.py passes the Verilog reference PE and mesh,
and fails the course's skeletons and the reference with one injected bug each.

Each case runs `run.py` as a program (its own simulator process) and reads its exit status
and `RESULT` lines. The injected bugs are the reference with one line changed: the three PE
bugs the Rust grading tests inject (a subnormal FP16 operand given exponent 0 instead of 1,
truncation instead of round-to-nearest-even, -0 + -0 = +0), two more from lab 1's list of
frequent bugs (a NaN C's payload kept instead of the canonical NaN, FP32 subnormal sums
flushed to zero) and a mesh whose row 3 skew is one register short. A PE with one more output register (latency 3, the
fixture `fixtures/pe_latency3.v`) must pass: the bench samples by `acc_vld` and assumes no
latency.

Needs Icarus Verilog, cocotb and the `tcrtl` package; without them each case is skipped
with the reason, or fails when `CI=true`.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
VERILOG = HERE.parent / "verilog"
RUN = HERE / "run.py"
PE_FILES = ["rtl/fp16_mul.v", "rtl/fp32_add.v", "rtl/pe.v"]
# (name, file, the line's text, its replacement, the cocotb test that must fail, what its
# report must say)
INJECTED_PE_BUGS = [
    (
        "subnormal_exponent",
        "rtl/fp16_mul.v",
        "(ea == 5'd0) ? 10'sd1",
        "(ea == 5'd0) ? 10'sd0",
        "pe_random_chains",
        "acc got",
    ),
    (
        "truncation",
        "rtl/fp32_add.v",
        "up = (rem > half) || ((rem == half) && q[0]);",
        "up = 1'b0;",
        "pe_random_chains",
        "acc got",
    ),
    (
        "negative_zero_sum",
        "rtl/fp32_add.v",
        "sum = {c_sign & p_sign, 31'd0};",
        "sum = 32'd0;",
        "pe_special_pairs",
        "acc got 0x00000000 want 0x80000000",
    ),
    (
        "nan_payload_kept",
        "rtl/fp32_add.v",
        "sum = 32'h7FC0_0000;",
        "sum = c_nan ? acc : 32'h7FC0_0000;",
        "pe_random_chains",
        "acc got",
    ),
    (
        "subnormal_sum_flushed",
        "rtl/fp32_add.v",
        "sum = {sb_, 8'd0, q2[22:0]};",
        "sum = {sb_, 31'd0};",
        "pe_random_chains",
        "acc got",
    ),
    (
        "acc_vld_never_raised",
        "rtl/pe.v",
        "acc_vld <= s1_vld && !load;",
        "acc_vld <= 1'b0;",
        "pe_random_chains",
        "stopped after 3 timeouts",
    ),
]


def _missing() -> str | None:
    for tool in ("iverilog", "vvp"):
        if shutil.which(tool) is None:
            return f"{tool} not installed"
    for module in ("cocotb", "cocotb_tools", "tcrtl"):
        if importlib.util.find_spec(module) is None:
            return f"Python module {module} not installed"
    return None


@pytest.fixture(autouse=True)
def _tools():
    why = _missing()
    if why:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true but {why}")
        pytest.skip(why)


def run_bench(tmp_path: Path, *args: str) -> tuple[int, dict[str, tuple[int, int]], str]:
    """Run run.py with `args`; (exit status, {bench: (tests, failed)}, output)."""
    env = dict(os.environ)
    env.pop("PYTEST_CURRENT_TEST", None)
    proc = subprocess.run(
        [sys.executable, str(RUN), "--build-dir", str(tmp_path / "sim"), *args],
        check=False,
        capture_output=True,
        text=True,
        env=env,
        timeout=1200,
    )
    out = proc.stdout + proc.stderr
    results = {}
    for m in re.finditer(
        r"^RESULT (\w+) .*: (\d+) tests, (\d+) failed$", proc.stdout, re.MULTILINE
    ):
        results[m.group(1)] = (int(m.group(2)), int(m.group(3)))
    return proc.returncode, results, out


def patched(tmp_path: Path, name: str, file: str, old: str, new: str) -> str:
    """The reference PE's files with `old` replaced by `new` once in `file`, as a --pe list."""
    out = []
    for f in PE_FILES + ["rtl/mesh4x4.v"]:
        text = (VERILOG / f).read_text()
        if f == file:
            assert old in text, f"the patch for {name} no longer applies to {file}"
            text = text.replace(old, new, 1)
        dst = tmp_path / f"{name}-{f.replace('/', '-')}"
        dst.write_text(text)
        out.append(str(dst))
    return ",".join(out)


def test_reference_pe_and_mesh_pass(tmp_path):
    code, results, out = run_bench(tmp_path, "--bench", "all")
    assert code == 0, out[-4000:]
    assert results == {"pe": (3, 0), "mesh": (2, 0)}, out[-4000:]


def test_skeleton_pe_fails_every_test(tmp_path):
    code, results, out = run_bench(tmp_path, "--bench", "pe", "--pe", "skeleton", "--chains", "60")
    assert code == 1, out[-4000:]
    assert results == {"pe": (3, 3)}, out[-4000:]
    assert "acc got" in out


def test_skeleton_mesh_fails_every_test(tmp_path):
    code, results, out = run_bench(
        tmp_path, "--bench", "mesh", "--mesh", "skeleton", "--tiles", "10"
    )
    assert code == 1, out[-4000:]
    assert results == {"mesh": (2, 2)}, out[-4000:]


@pytest.mark.parametrize(
    "name,file,old,new,caught_by,says", INJECTED_PE_BUGS, ids=[b[0] for b in INJECTED_PE_BUGS]
)
def test_injected_pe_bug_fails(tmp_path, name, file, old, new, caught_by, says):
    files = patched(tmp_path, name, file, old, new)
    pe_files = ",".join(files.split(",")[:3])
    code, results, out = run_bench(
        tmp_path, "--bench", "pe", "--pe", pe_files, "--chains", "120", "--test", caught_by
    )
    assert code == 1, out[-4000:]
    assert results == {"pe": (1, 1)}, out[-4000:]
    assert says in out, out[-4000:]


def test_mesh_with_row_3_skew_one_short_fails(tmp_path):
    files = patched(
        tmp_path,
        "row3",
        "rtl/mesh4x4.v",
        "assign a_edge[3] = a_dly[5];",
        "assign a_edge[3] = a_dly[4];",
    ).split(",")
    code, results, out = run_bench(
        tmp_path,
        "--bench",
        "mesh",
        "--pe",
        ",".join(files[:3]),
        "--mesh",
        files[3],
        "--tiles",
        "10",
        "--test",
        "mesh_random_tiles",
    )
    assert code == 1, out[-4000:]
    assert results == {"mesh": (1, 1)}, out[-4000:]
    assert "PE (3, " in out


def test_pe_with_latency_3_passes(tmp_path):
    files = [str(VERILOG / f) for f in PE_FILES] + [str(HERE / "fixtures" / "pe_latency3.v")]
    code, results, out = run_bench(
        tmp_path,
        "--bench",
        "pe",
        "--pe",
        ",".join(files),
        "--pe-top",
        "pe_latency3",
        "--chains",
        "120",
        "--test",
        "pe_random_chains",
        "--test",
        "pe_full_rate",
    )
    assert code == 0, out[-4000:]
    assert results == {"pe": (2, 0)}, out[-4000:]


def test_bad_design_argument_is_one_error_line(tmp_path):
    code, results, out = run_bench(tmp_path, "--pe", str(tmp_path / "missing.v"))
    assert code == 2
    assert results == {}
    lines = [line for line in out.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: --pe "), out


def test_fixture_is_lint_clean(tmp_path):
    """The fixture meets the course's lint bar (tests/reference/verilog_lint.rs): no output
    from iverilog -Wall as Verilog-2005 and -2012, nor from verilator --lint-only -Wall."""
    files = [str(VERILOG / f) for f in PE_FILES] + [str(HERE / "fixtures" / "pe_latency3.v")]
    runs = [
        ["iverilog", std, "-Wall", "-s", "pe_latency3", "-o", str(tmp_path / "lint.vvp"), *files]
        for std in ("-g2005", "-g2012")
    ]
    if shutil.which("verilator"):
        runs.append(["verilator", "--lint-only", "-Wall", "--top-module", "pe_latency3", *files])
    for cmd in runs:
        proc = subprocess.run(cmd, check=False, capture_output=True, text=True)
        text = (proc.stdout + proc.stderr).strip()
        assert proc.returncode == 0 and not text, f"{' '.join(cmd)}:\n{text}"


def test_design_that_does_not_compile_fails_with_iverilogs_message(tmp_path):
    broken = tmp_path / "pe.v"
    broken.write_text("module pe(input wire clk);\n  wire x = ;\nendmodule\n")
    code, results, out = run_bench(tmp_path, "--bench", "pe", "--pe", str(broken))
    assert code == 1, out
    assert results == {}
    assert "syntax error" in out and "did not compile" in out, out
