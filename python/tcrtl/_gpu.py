"""GPUs and matrix instructions: which NVIDIA preset a GPU runs through an instruction.

A preset is a set of block-FMA rules; which one a program sees depends on the GPU and on the
instruction the compiler emits. ``hopper`` is Hopper's native FP8 path (``wgmma``, what
cuBLAS runs); ``h200`` is Hopper through ``mma.sync`` as CUDA 13.0 builds it (FP8 lowered to
FP16 conversions and two FP16 HMMA steps). ``gpu_rows()`` lists every modelled pair and the
evidence behind it (docs/numerics.md, "GPUs and instructions").
"""

from typing import List, Optional, Tuple

from . import _tcrtl

def select(preset: Optional[str], gpu: Optional[str], instr: Optional[str],
           fmt: Optional[str] = None, fmt_b: Optional[str] = None, acc: Optional[str] = None,
           out_fmt: Optional[str] = None) -> Optional[str]:
    """The preset that ``preset``, or ``gpu`` and ``instr``, name (``None`` for neither).

    Raises ValueError (the library's message) for a preset with a GPU, an instruction without a
    GPU, an unknown name, a pair that is not modelled or not measured, FP8 through ``wmma``,
    and (``acc="nvidia"``) formats or an output the GPU's preset lacks.
    """
    if gpu is None and instr is None:
        return preset
    return _tcrtl.select_rule(preset, gpu, instr, fmt, fmt_b, acc, out_fmt)[0]


def rule(preset: Optional[str], gpu: Optional[str], instr: Optional[str]
         ) -> Tuple[Optional[str], Optional[str]]:
    """The ``(gpu, instr)`` names of the rule a run used: the ones given, or the preset's
    canonical pair; ``(None, None)`` when neither is given."""
    if preset is None and gpu is None and instr is None:
        return (None, None)
    _, g, i = _tcrtl.select_rule(preset, gpu, instr)
    return (g, i)


def gpu_rows() -> List[dict]:
    """Every modelled GPU x instruction pair: dicts with ``gpu``, ``architecture``,
    ``instr``, ``preset`` (``None``: not measured, refused), ``default`` (the GPU's
    instruction when ``instr`` is left out) and ``evidence``, as ``tcrtl verify gpus``."""
    return _tcrtl.gpu_rows()
