#!/usr/bin/env python3
"""Build a PE and/or mesh design with Icarus Verilog and run the cocotb benches on it.

    python3 testbenches/cocotb/run.py                      # both benches on the reference
    python3 testbenches/cocotb/run.py --bench pe --pe skeleton
    python3 testbenches/cocotb/run.py --bench mesh --mesh my_mesh.v --seed 7 --tiles 200

`--pe` and `--mesh` take `reference` (testbenches/verilog/rtl), `skeleton`
(testbenches/verilog/skeleton) or a comma-separated list of Verilog files (a student's
design); the mesh bench compiles the PE's files with the mesh's. Prints one line per bench,
`RESULT <bench> <design>: <n> tests, <f> failed` (or `did not compile`, after iverilog's
messages), and exits 0 when every test passed, 1 when one failed or a design did not compile,
2 on bad input (one `error:` line). The golden model is the `tcrtl` Python
package, which must be importable by this Python (`pip install ./python`).
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
VERILOG = REPO / "testbenches" / "verilog"

# The Verilog files of each named design, relative to testbenches/verilog.
PE_DESIGNS = {
    "reference": ["rtl/fp16_mul.v", "rtl/fp32_add.v", "rtl/pe.v"],
    "skeleton": ["skeleton/pe.v"],
}
MESH_DESIGNS = {
    "reference": ["rtl/mesh4x4.v"],
    "skeleton": ["skeleton/mesh4x4.v"],
}
BENCHES = {
    "pe": ("pe", "pe_bench"),
    "mesh": ("mesh4x4", "mesh_bench"),
}


class UsageError(Exception):
    """Bad input: reported as one line, exit 2."""


def design_files(spec: str, named: dict[str, list[str]], what: str) -> list[Path]:
    """The files of a named design, or of a comma-separated list of existing files."""
    if spec in named:
        return [VERILOG / f for f in named[spec]]
    files = [Path(p).resolve() for p in spec.split(",") if p.strip()]
    if not files:
        raise UsageError(f"--{what} {spec!r}: expected reference, skeleton or Verilog files")
    for f in files:
        if not f.is_file():
            raise UsageError(
                f"--{what} {spec!r}: {f} is not a file (expected reference, skeleton or "
                "a comma-separated list of Verilog files)"
            )
    return files


def preflight() -> None:
    """Refuse to start without the simulator, cocotb or the golden model."""
    for tool in ("iverilog", "vvp"):
        if shutil.which(tool) is None:
            raise UsageError(f"{tool} not found: install Icarus Verilog (apt-get install iverilog)")
    for module, hint in (
        ("cocotb", "pip install \"cocotb>=2.0,<3\""),
        ("cocotb_tools", "pip install \"cocotb>=2.0,<3\" (cocotb 2 has cocotb_tools)"),
        ("tcrtl", "pip install ./python from the repository root"),
        ("numpy", "pip install numpy"),
    ):
        if importlib.util.find_spec(module) is None:
            raise UsageError(f"Python module {module} not importable by {sys.executable}: {hint}")
    import find_libpython  # a dependency of cocotb

    if find_libpython.find_libpython() is None:
        raise UsageError(
            "no shared libpython for cocotb to embed in the simulator "
            "(Debian: apt-get install libpython3-dev)"
        )


def run_bench(bench: str, sources: list[Path], label: str, args) -> tuple[int, int]:
    """Build `sources` with `bench`'s top level and run its cocotb module; (tests, failed)."""
    from cocotb_tools.check_results import get_results
    from cocotb_tools.runner import get_runner

    top, module = BENCHES[bench]
    if bench == "pe":
        top = args.pe_top
    key = hashlib.sha1("\n".join([top] + [str(s) for s in sources]).encode()).hexdigest()[:10]
    build_dir = Path(args.build_dir).resolve() / f"{bench}-{key}"
    build_dir.mkdir(parents=True, exist_ok=True)
    runner = get_runner("icarus")
    log = build_dir / "build.log"
    try:
        runner.build(
            sources=sources,
            hdl_toplevel=top,
            build_dir=build_dir,
            always=True,
            timescale=("1ns", "1ps"),
            waves=args.waves,
            log_file=log,
        )
    except (RuntimeError, subprocess.CalledProcessError):
        text = log.read_text(errors="replace") if log.is_file() else ""
        sys.stderr.write(text[-4000:])
        print(f"RESULT {bench} {label}: did not compile (iverilog messages above, in {log})")
        return (0, 1)
    env = {
        "PYTHONPATH": os.pathsep.join(
            [str(HERE)] + ([os.environ["PYTHONPATH"]] if os.environ.get("PYTHONPATH") else [])
        ),
        "TCRTL_COCOTB_SEED": str(args.seed),
        "TCRTL_COCOTB_CHAINS": str(args.chains),
        "TCRTL_COCOTB_TILES": str(args.tiles),
    }
    results = build_dir / "results.xml"
    try:
        runner.test(
            test_module=module,
            hdl_toplevel=top,
            build_dir=build_dir,
            test_dir=build_dir,
            results_xml=str(results),
            extra_env=env,
            waves=args.waves,
            testcase=args.test or None,
            seed=args.seed,
        )
    except SystemExit as exc:  # the simulator itself failed; results may still exist
        print(f"simulator exited with {exc.code}", file=sys.stderr)
    if not results.is_file():
        print(f"RESULT {bench} {label}: no results (simulator failed to start)")
        return (1, 1)
    tests, failed = get_results(results)
    print(f"RESULT {bench} {label}: {tests} tests, {failed} failed")
    return tests, failed


class _Parser(argparse.ArgumentParser):
    """argparse with bad options reported as one `error:` line (exit 2), no usage dump."""

    def error(self, message: str):
        raise UsageError(message)


def parse_args(argv):
    p = _Parser(description=__doc__.split("\n\n")[0])
    p.add_argument("--bench", choices=["pe", "mesh", "all"], default="all")
    p.add_argument("--pe", default="reference", help="reference, skeleton or FILE[,FILE...]")
    p.add_argument("--mesh", default="reference", help="reference, skeleton or FILE[,FILE...]")
    p.add_argument(
        "--pe-top",
        default="pe",
        help="the PE bench's top-level module (default pe; another name for a wrapper with "
        "pe's ports)",
    )
    p.add_argument("--seed", type=int, default=1, help="stimulus seed (default 1)")
    p.add_argument("--chains", type=int, default=300, help="PE chains per test (default 300)")
    p.add_argument("--tiles", type=int, default=60, help="mesh tiles per test (default 60)")
    p.add_argument("--test", action="append", help="run only this cocotb test (repeatable)")
    p.add_argument("--waves", action="store_true", help="dump an FST waveform per bench")
    p.add_argument(
        "--build-dir",
        default=str(REPO / "target" / "cocotb-sim"),
        help="where the simulator builds and runs (default target/cocotb-sim)",
    )
    args = p.parse_args(argv)
    if args.seed < 0:
        raise UsageError(f"--seed must not be negative, got {args.seed}")
    for name in ("chains", "tiles"):
        if getattr(args, name) < 1:
            raise UsageError(f"--{name} must be at least 1, got {getattr(args, name)}")
    return args


def main(argv=None) -> int:
    # cocotb's runner changes its behaviour under pytest (it exits on a failed test); this
    # script reports failures itself, so it runs as a plain program even when pytest runs it.
    os.environ.pop("PYTEST_CURRENT_TEST", None)
    try:
        args = parse_args(argv)
        preflight()
        pe_files = design_files(args.pe, PE_DESIGNS, "pe")
        mesh_files = design_files(args.mesh, MESH_DESIGNS, "mesh")
    except UsageError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    plan = []
    if args.bench in ("pe", "all"):
        plan.append(("pe", pe_files, args.pe))
    if args.bench in ("mesh", "all"):
        plan.append(("mesh", pe_files + mesh_files, f"{args.mesh} (pe {args.pe})"))
    failed_any = False
    for bench, files, label in plan:
        tests, failed = run_bench(bench, files, label, args)
        failed_any |= failed > 0 or tests == 0
    return 1 if failed_any else 0


if __name__ == "__main__":
    sys.exit(main())
