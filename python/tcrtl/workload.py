"""Workloads: the layers of a real network on the clocked tensor core, as ``tcrtl workload
run`` runs them (docs/workloads.md).

``run(topology, ...)`` lowers every layer of a SCALE-Sim topology (a convolution or GEMM CSV
file, or rows given here) to a GEMM, runs it on the clocked core with seeded random operands,
checks its D against the independent references (whole, or a seeded sample of a large layer)
and returns one row per layer with the values the command line writes in ``layers.csv``.
"""

import json
import os
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

from . import _tcrtl

#: The header of SCALE-Sim's GEMM topology format.
GEMM_HEADER = ("Layer", "M", "N", "K")
#: The header of SCALE-Sim's convolution topology format.
CONV_HEADER = ("Layer name", "IFMAP Height", "IFMAP Width", "Filter Height", "Filter Width",
               "Channels", "Num Filter", "Strides")


class WorkloadResult:
    """A workload run: ``.layers`` (one dict per layer, in the topology's order, keyed by the
    ``layers.csv`` columns: ``layer``, ``m``, ``n``, ``k``, ``cycles``, ``tiles``,
    ``utilization``, ``macs``, ``checked``, ``mismatches``, ``sim_seconds``, ...; ``None`` for
    a cell the file leaves empty), ``.columns`` (the column names in the file's order) and
    ``.summary`` (the ``summary.json`` object: the run's identity, each layer's record and
    the totals)."""

    def __init__(self, columns: List[str], rows: List[list], summary: Dict[str, Any]):
        self.columns = columns
        self.layers = [dict(zip(columns, row)) for row in rows]
        self.summary = summary

    @property
    def mismatches(self) -> int:
        """Compared elements of D that differ from the reference, over every layer."""
        return sum(layer["mismatches"] for layer in self.layers)

    @property
    def cycles(self) -> int:
        """The reported cycles of every layer together (the summary's ``totals.cycles``)."""
        return self.summary["totals"]["cycles"]

    def __repr__(self) -> str:
        return (f"WorkloadResult(layers={len(self.layers)}, cycles={self.cycles}, "
                f"mismatches={self.mismatches})")


def _topology_text(rows: Sequence[Sequence[Any]]) -> str:
    """The CSV text of ``rows``: GEMM rows ``(name, M, N, K)`` or convolution rows ``(name,
    ifmap_h, ifmap_w, filt_h, filt_w, channels, num_filters, stride)``, all of one kind."""
    rows = [tuple(r) for r in rows]
    if not rows:
        raise ValueError("a topology needs at least one layer")
    widths = {len(r) for r in rows}
    if widths == {4}:
        header = GEMM_HEADER
    elif widths == {8}:
        header = CONV_HEADER
    else:
        raise ValueError("topology rows are (name, M, N, K) or (name, ifmap_h, ifmap_w, filt_h, "
                         "filt_w, channels, num_filters, stride), all of one kind")
    lines = [",".join(header)]
    for r in rows:
        name = str(r[0])
        if "," in name or "\n" in name:
            raise ValueError(f"layer name {name!r} holds a comma or a line break")
        lines.append(",".join([name] + [str(int(v)) for v in r[1:]]))
    return "\n".join(lines) + "\n"


def run(topology: Union[str, "os.PathLike[str]", Sequence[Sequence[Any]]], *,
        fmt: str = "fp16", fmt_b: Optional[str] = None, acc: Optional[str] = None,
        preset: Optional[str] = None, gpu: Optional[str] = None, instr: Optional[str] = None,
        width: int = 1, rows: int = 4, cols: int = 4, dataflow: str = "os",
        satfinite: bool = False, seed: int = 1, max_check: int = 1 << 22, samples: int = 256,
        analytic: bool = False, timing: str = "model", threads: int = 1,
        memory: str = "ideal", stages: Optional[int] = None, swizzle: bool = True,
        energy: bool = False, tech: Optional[str] = None, clock_ghz: float = 1.0,
        shard: Tuple[int, int] = (0, 1), split: str = "layers",
        name: Optional[str] = None) -> WorkloadResult:
    """Runs every layer of ``topology`` on the clocked core, as ``tcrtl workload run
    TOPOLOGY.csv`` with the same options, and returns its rows of ``layers.csv``.

    ``topology`` is the path of a SCALE-Sim topology CSV (convolution or GEMM format, told
    apart by the header), or its layers as rows: ``(name, M, N, K)`` GEMMs or ``(name,
    ifmap_h, ifmap_w, filt_h, filt_w, channels, num_filters, stride)`` convolutions. ``name``
    is the topology's name in the summary (default: the path, or ``"rows"``).

    The options are the command line's: ``fmt``, ``fmt_b``, ``acc`` (``ieee``, ``fused``,
    ``nvidia``), ``preset`` or ``gpu`` and ``instr``, ``width`` (products per PE step),
    ``rows``, ``cols`` and ``dataflow`` (``os``, ``ws`` or ``is``) of the array,
    ``satfinite`` (integer formats), ``seed`` (layer i's operands come from a seed derived
    from it and i), ``max_check`` and ``samples`` (whole checks up to ``max_check`` MACs,
    ``samples`` elements above), ``analytic`` (simulate nothing: the formulas' cycles and
    traffic), ``timing`` (``model`` or ``scalesim``), ``threads`` (layers at once; the values
    do not depend on it),
    ``memory`` (``ideal`` or ``tma``, with ``stages`` and ``swizzle``; the default memory
    parameters), ``energy`` with ``tech`` (``45nm`` or ``7nm``), ``clock_ghz``, ``shard``
    ``(I, N)`` and ``split`` (``layers`` or ``rows``).

    Returns:
        WorkloadResult: ``.layers`` (one dict per layer with the ``layers.csv`` values: ints,
        floats, the name; ``None`` for an empty cell), ``.columns``, ``.summary``.

    Raises:
        ValueError: a bad topology or option (the library's one-line message).
        OSError: a topology file that cannot be read."""
    if isinstance(topology, (str, os.PathLike)):
        path = os.fspath(topology)
        shown = name if name is not None else path
        columns, rows_out, summary = _tcrtl.workload_run(
            shown, path=path, fmt=fmt, fmt_b=fmt_b, acc=acc, preset=preset, gpu=gpu,
            instr=instr, width=width, rows=rows, cols=cols, dataflow=dataflow,
            satfinite=satfinite, seed=seed, max_check=max_check, samples=samples,
            analytic=analytic, timing=timing, threads=threads, memory=memory, stages=stages,
            swizzle=swizzle, energy=energy, tech=tech, clock_ghz=clock_ghz, shard=tuple(shard),
            split=split)
    else:
        text = _topology_text(topology)
        shown = name if name is not None else "rows"
        columns, rows_out, summary = _tcrtl.workload_run(
            shown, text=text, fmt=fmt, fmt_b=fmt_b, acc=acc, preset=preset, gpu=gpu,
            instr=instr, width=width, rows=rows, cols=cols, dataflow=dataflow,
            satfinite=satfinite, seed=seed, max_check=max_check, samples=samples,
            analytic=analytic, timing=timing, threads=threads, memory=memory, stages=stages,
            swizzle=swizzle, energy=energy, tech=tech, clock_ghz=clock_ghz, shard=tuple(shard),
            split=split)
    return WorkloadResult(columns, rows_out, json.loads(summary))


__all__ = ["CONV_HEADER", "GEMM_HEADER", "WorkloadResult", "run"]
