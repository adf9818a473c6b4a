"""tcrtl: the tensorcore-rtl model from Python.

Bit-accurate tensor-core numerics (every format, accumulation mode and GPU preset of the
``tcrtl`` command line), conversions and MX/NVFP4 quantisation, the clocked tensor core and a
step-level processing element for testbenches. Every number comes from the Rust library the
command line runs; errors raise ``ValueError`` (``OSError`` for files) with the command
line's one-line message.

- ``dot(a, b, c, fmt=..., acc=..., preset=...)``: batches of dot products, one per row; a GPU
  and its matrix instruction may name the preset instead (``gpu="h100", instr="mma.sync"``;
  ``gpu_rows()`` lists every modelled pair and its evidence).
- ``matmul(A, B, C, ...)``: a matrix product tiled into dot steps as the functional model does;
  block-scaled too (``fmt="mxfp8e4m3"``, ``a_scales=...``, ``b_scales=...``).
- ``convert(x, to=...)``, ``quantize(x, fmt)``, ``dequantize(q)``: formats and MX/NVFP4 blocks.
- ``gemm(m=..., n=..., k=..., ...)`` or ``gemm(A, B, C, ...)``: the clocked core, on the ideal
  store or the memory path; dense, 2:4 sparse (``sparse=True``; a dense A, or a pre-compressed
  one as ``a_values=...``, ``a_meta=...``) or block-scaled (``fmt="mxfp8e4m3"``,
  ``a_scales=...``, ``b_scales=...``).
- ``tma_load(tensor, dtype=..., box=..., coords=...)``: one TMA load through the memory system.
- ``PE(fmt, acc, width)``: one processing element, stepped cycle by cycle.
- ``workload.run(topology, ...)``: every layer of a SCALE-Sim topology on the clocked core,
  the values of ``tcrtl workload run``'s ``layers.csv``.
"""

from ._convert import Converted, Quantized, convert, dequantize, quantize
from ._dot import DotResult, dot
from ._gemm import GemmResult, MatmulResult, gemm, matmul
from ._gpu import gpu_rows
from ._tcrtl import PE
from ._tma import TmaResult, tma_load
from . import workload

__all__ = [
    "Converted",
    "DotResult",
    "GemmResult",
    "MatmulResult",
    "PE",
    "Quantized",
    "convert",
    "dequantize",
    "dot",
    "gemm",
    "gpu_rows",
    "matmul",
    "quantize",
    "tma_load",
    "workload",
    "TmaResult",
]
