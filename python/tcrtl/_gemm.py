"""``matmul`` (the functional model) and ``gemm`` (the clocked tensor core)."""

from __future__ import annotations

from typing import Optional

import numpy as np

from . import _dtypes, _gpu, _tcrtl


# Integer formats: their bits per element (operands are two's-complement or unsigned patterns).
INT_BITS = {"s8": 8, "u8": 8, "s4": 4, "u4": 4}


def _int_operand(arr, fmt: str, name: str) -> np.ndarray:
    """An integer operand as uint8 bit patterns: uint8 patterns as they are, or int8 values of
    a signed format (s8, s4) in its range, as their two's-complement patterns."""
    arr = np.asarray(arr)
    fmt = fmt.lower()
    bits = INT_BITS[fmt]
    if arr.dtype == np.dtype(np.uint8):
        return np.ascontiguousarray(arr)
    if arr.dtype == np.dtype(np.int8) and fmt in ("s8", "s4"):
        lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
        if arr.size and (arr.min() < lo or arr.max() > hi):
            raise ValueError(f"{name} holds values outside {fmt}'s range {lo}..{hi}")
        return np.ascontiguousarray(arr).view(np.uint8) & np.uint8((1 << bits) - 1)
    raise ValueError(
        f"{name} has dtype {_dtypes.dtype_name(arr)}; {fmt} operands are uint8 bit patterns"
        + (" or int8 values" if fmt in ("s8", "s4") else "")
    )


def _operand(arr, fmt: str, name: str) -> np.ndarray:
    """A floating-point operand's patterns (as for ``dot``) or an integer operand's."""
    if fmt.lower() in INT_BITS:
        return _int_operand(arr, fmt, name)
    return _dtypes.bits(arr, fmt, name)


def _acc_view(d: np.ndarray, out_fmt: str, m: int, n: int):
    """D's patterns as uint32/uint16 (m x n) and their values as float64 (int32 for integer
    GEMMs: the patterns viewed as int32)."""
    if out_fmt.lower() == "int32":
        bits = d.reshape(m, n).view(np.int32)
        return bits, bits.astype(np.float64)
    if out_fmt.lower() == "fp16":
        bits = d.astype(np.uint16).reshape(m, n)
        return bits, bits.view(np.float16).astype(np.float64)
    bits = d.reshape(m, n)
    return bits, bits.view(np.float32).astype(np.float64)


def _c_matrix(c, m, n, out_fmt, integer=False):
    if c is None:
        return None
    arr = np.asarray(c)
    if integer:
        if arr.dtype not in (np.dtype(np.int32), np.dtype(np.uint32)):
            raise ValueError(f"C has dtype {_dtypes.dtype_name(arr)}; integer GEMMs take int32 C")
        return np.ascontiguousarray(arr).view(np.uint32)
    if out_fmt.lower() == "fp16":
        if arr.dtype == np.float16:
            arr = arr.view(np.uint16)
    elif arr.dtype == np.float32:
        arr = arr.view(np.uint32)
    if arr.dtype not in (np.dtype(np.uint16), np.dtype(np.uint32)):
        raise ValueError(
            f"C has dtype {_dtypes.dtype_name(arr)}; expected accumulator bit patterns "
            "(uint32 / uint16) or float32 / float16 values"
        )
    return np.ascontiguousarray(arr)


class MatmulResult:
    """D of ``matmul``: ``.bits`` (m x n accumulator patterns), ``.values`` (float64) and
    ``.flags`` (the OR of every element's flags as a 4-bit vector)."""

    def __init__(self, bits, values, flags):
        self.bits, self.values, self.flags = bits, values, flags

    def __repr__(self) -> str:
        return f"MatmulResult(shape={self.bits.shape}, flags={self.flags})"


def matmul(a, b, c=None, *, fmt: str = "fp16", fmt_b: Optional[str] = None, acc: str = "ieee",
           preset: Optional[str] = None, out_fmt: str = "fp32", width: int = 1, rows: int = 4,
           cols: int = 4, dataflow: str = "os", satfinite: bool = False, a_scales=None,
           b_scales=None, a_tensor_scale=None, b_tensor_scale=None,
           promote_every: Optional[int] = None, gpu: Optional[str] = None,
           instr: Optional[str] = None) -> MatmulResult:
    """D = A x B + C by the functional model: element (i, j) is the whole-K dot product of row
    i of A and column j of B into C[i, j] (``dot`` with this ``width``; for
    ``dataflow="ws"`` and ``dataflow="is"`` the weight-stationary order of an array of
    ``rows`` PE rows), exactly the bits the clocked core (``gemm``, ``tcrtl gemm``) produces.

    ``a`` (m x k) and ``b`` (k x n) are bit patterns or values of their format as for ``dot``;
    ``c`` (m x n) accumulator patterns or values, or ``None`` for zeros. Integer formats
    (``s8``, ``u8``, ``s4``, ``u4``): ``a``, ``b`` uint8 patterns (or int8 values of a signed
    format), ``c`` int32, D int32, wrapping or, with ``satfinite``, clamping.

    Block-scaled formats (``fmt="mxfp8e4m3"``, ``mxfp8e5m2``, ``mxfp6e2m3``, ``mxfp6e3m2``,
    ``mxfp4``, ``mxint8``, ``nvfp4``, mixed with ``fmt_b`` where they pair up) take the arrays
    ``gemm`` takes: element codes ``a`` (m x k) and ``b`` (k x n) (``uint8``, ml_dtypes values
    of the element format, ``int8`` for mxint8), scale codes ``a_scales`` (m x k/bs) and
    ``b_scales`` (k/bs x n) (``uint8``; ``float8_e8m0fnu`` values, or ``float8_e4m3fn`` for
    nvfp4), nvfp4's FP32 ``a_tensor_scale`` and ``b_tensor_scale`` (default 1), ``c`` FP32;
    K a multiple of the block size bs (32; 16 for nvfp4). Element (i, j) is the block-scaled
    dot product of row i and column j into C[i, j] (``dot`` with a block format): with
    ``acc`` left out (or ``"fused"``) one rounding per K-block, the bits of the clocked core
    (``gemm`` and ``tcrtl gemm`` with the same arrays), in the order of ``dataflow`` (``ws``,
    and ``is`` in ws's order, take ``width`` equal to the block size, as the core does); for
    ``dataflow="os"`` also ``acc="exact"`` or ``"block-rz"``, as ``dot``. No presets,
    ``satfinite`` or output formats other than FP32; every check is the command line's
    (``tcrtl gemm --format mxfp8e4m3 ...``), with its message.

    ``promote_every=N`` promotes to FP32 every N products along K, as ``tcrtl gemm
    --promote-every N`` (docs/numerics.md, "FP32 promotion"): each K-chunk of N from a zero
    accumulator in the dataflow's order, added into D (from C) with one FP32
    round-to-nearest-even addition; FP32 output and dense floating-point formats only.

    ``preset`` (for ``acc="nvidia"``) is ``dot``'s: ``volta`` (V100), ``turing`` (T4),
    ``ampere`` (A100, A30, A2), ``ada`` (L40S and other Ada parts), ``hopper`` (H100 and H200
    through ``wgmma``, Hopper's native FP8 path, what cuBLAS runs), ``blackwell`` (B200
    through ``mma.sync``), ``h200`` (H100 and H200 through ``mma.sync`` as CUDA 13.0 builds
    it: FP8 as FP16 conversions and two FP16 steps). Or name the GPU instead: ``gpu``
    (``h100``, ``b200``, ...; ``tcrtl.gpu_rows()`` lists them) and its ``instr``
    (``mma.sync``, ``wmma``, ``wgmma``; left out, the GPU's default: ``wgmma`` on the H100
    and H200, ``mma.sync`` elsewhere), as ``dot``.

    Returns:
        MatmulResult: ``.bits`` (m x n), ``.values`` (float64), ``.flags`` (the OR of every
        element's flags: invalid 8, overflow 4, underflow 2, inexact 1).

    Raises:
        ValueError: the command line's message for a bad option or operand."""
    accn = None if acc is None or acc.lower() == "ieee" else acc
    preset = _gpu.select(preset, gpu, instr, fmt, fmt_b, accn, out_fmt)
    block = fmt.lower() in _dtypes.BLOCK_ELEMENT
    scales = any(x is not None for x in (a_scales, b_scales, a_tensor_scale, b_tensor_scale))
    if promote_every is not None and (block or scales):
        raise ValueError("--promote-every applies to dense floating-point formats, not block-scaled ones")
    if block or scales:
        A, B, SA, SB = _block_arrays(a, b, a_scales, b_scales, fmt, fmt_b)
        C = None if c is None else _c_matrix(c, 0, 0, "fp32")
        ta = None if a_tensor_scale is None else _dtypes.fp32_bits(a_tensor_scale)
        tb = None if b_tensor_scale is None else _dtypes.fp32_bits(b_tensor_scale)
        d, flags, m, n = _tcrtl.matmul_mx(A, B, C, SA, SB, ta, tb, fmt=fmt, fmt_b=fmt_b,
                                          acc=accn, preset=preset, out_fmt=out_fmt,
                                          width=width, rows=rows, cols=cols,
                                          dataflow=dataflow, satfinite=satfinite)
        bits, values = _acc_view(d, "fp32", m, n)
        return MatmulResult(bits, values, flags)
    fb = fmt_b or fmt
    integer = fmt.lower() in INT_BITS
    A = _operand(a, fmt, "A")
    B = _operand(b, fb, "B")
    C = _c_matrix(c, A.shape[0] if A.ndim == 2 else 0, B.shape[-1], out_fmt, integer)
    d, flags, m, n = _tcrtl.matmul_bits(A, B, C, fmt=fmt, fmt_b=fmt_b, acc=accn, preset=preset,
                                        out_fmt=out_fmt, width=width, rows=rows, cols=cols,
                                        dataflow=dataflow, satfinite=satfinite,
                                        promote_every=promote_every)
    bits, values = _acc_view(d, "int32" if integer else out_fmt, m, n)
    return MatmulResult(bits, values, flags)


class GemmResult:
    """A run of the clocked tensor core.

    Attributes:
        d: D's accumulator patterns (m x n; ``uint32`` FP32, ``uint16`` FP16).
        values: D as float64.
        cycles, utilization, tiles, macs: as ``tcrtl gemm --json``.
        flags: the names of the IEEE flags D raised.
        check: ``{"reference": ..., "mismatches": ...}`` for random problems (or
            ``check=True``; block-scaled problems with ``check=True``), else ``None``.
        json: every key of ``tcrtl gemm --json`` this run has (``memory``, ``traffic``,
            ``mac_slots_used``, ...).
    """

    def __init__(self, info: dict):
        d = info.pop("d")
        self.json = info
        self.d, self.values = _acc_view(d, info["out_format"], info["m"], info["n"])
        self.cycles = info["cycles"]
        self.utilization = info["utilization"]
        self.tiles = info["tiles"]
        self.macs = info["macs"]
        self.flags = info["flags"]
        self.check = info["check"]

    def __repr__(self) -> str:
        j = self.json
        return (f"GemmResult({j['m']}x{j['n']}x{j['k']}, cycles={self.cycles}, "
                f"utilization={self.utilization:.3f})")


def _block_arrays(a, b, a_scales, b_scales, fmt: str, fmt_b: Optional[str]):
    """The element and scale codes of a block-scaled GEMM as uint8 (or int8 MXINT8) arrays:
    uint8 codes as they are, ml_dtypes values of the element (or scale) format bit for bit.
    An array of a format that is not block-scaled is handed on as it is (the native layer
    refuses the format first)."""
    fa, fb = fmt.lower(), (fmt_b or fmt).lower()

    def conv(x, f, name, how):
        if x is None or f not in _dtypes.BLOCK_ELEMENT:
            return x
        return how(x, f, name)

    return (conv(a, fa, "A", _dtypes.block_elements), conv(b, fb, "B", _dtypes.block_elements),
            conv(a_scales, fa, "a_scales", _dtypes.block_scales),
            conv(b_scales, fb, "b_scales", _dtypes.block_scales))


def gemm(a=None, b=None, c=None, *, m: Optional[int] = None, n: Optional[int] = None,
         k: Optional[int] = None, seed: int = 1, pattern: str = "random", fmt: str = "fp16",
         fmt_b: Optional[str] = None, acc: str = "ieee", preset: Optional[str] = None,
         out_fmt: str = "fp32", width: int = 1, rows: int = 4, cols: int = 4,
         dataflow: str = "os", memory: str = "ideal",
         stages: Optional[int] = None, swizzle: bool = True, sparse: bool = False,
         prune: bool = False, a_values=None, a_meta=None, a_scales=None, b_scales=None,
         a_tensor_scale=None, b_tensor_scale=None, vcd: Optional[str] = None,
         check: bool = False, satfinite: bool = False, gpu: Optional[str] = None,
         instr: Optional[str] = None) -> GemmResult:
    """D = A x B + C on the clocked tensor core, as ``tcrtl gemm`` runs it.

    The problem: numpy operands ``a`` (m x k), ``b`` (k x n), ``c`` (m x n, or ``None``) as
    for ``matmul``; or a seeded random problem with ``m``, ``n``, ``k`` and ``seed`` (the same
    operands as ``tcrtl gemm --m M --n N --k K --seed S``), or with ``pattern`` (``ones``,
    ``iota``, ``identity``; as ``--pattern``) a generated one whose D is known by hand.
    Options as the command line's:
    ``fmt``, ``fmt_b``, ``acc`` (ieee, fused, nvidia), ``preset``, ``out_fmt``, ``width``
    (products per PE step: 1..32, a power of two), the array ``rows`` x ``cols`` and
    ``dataflow`` (``os``, ``ws``, ``is``: input-stationary, dense GEMMs on the ideal store,
    D as ``ws``), ``memory`` (``ideal`` or ``tma``: the TMA-like memory path, with
    ``stages`` and ``swizzle``), ``vcd`` (a waveform path) and ``check`` (compare D
    with the independent reference; random problems always are). Integer formats (``s8``,
    ``u8``, ``s4``, ``u4``) accumulate in int32, wrapping or, with ``satfinite``, clamping;
    their operands as for ``matmul``.

    2:4 sparsity (``sparse=True``, as ``tcrtl gemm --sparse``): a random problem, or a dense
    numpy ``a`` (m x k, k a multiple of 4) with at most two nonzeros in every group of four
    along K, compressed by the library as ``--sparse --a A.npy`` is (a group with more is
    refused, or with ``prune=True`` keeps its two largest magnitudes, as ``--prune``); or A
    already compressed, as ``--sparse --a-values V.npy --a-meta M.npy`` takes it (and
    ``tcrtl sparse compress`` writes it): ``a_values`` (m x k/2, the kept values as bit
    patterns or values of the format, as ``a``) and ``a_meta`` (m x k/4 ``uint8``, one
    metadata nibble a byte in PTX ``mma.sp::ordered_metadata`` encoding: the low two bits the
    index of the first kept value in its group of four, the high two bits the second,
    strictly increasing), in place of ``a``. Bad metadata (a nibble outside the six valid
    ones, another dtype, a shape that does not pair with the values) raises the command
    line's message.

    Block-scaled formats (``fmt="mxfp8e4m3"``, ``mxfp8e5m2``, ``mxfp6e2m3``, ``mxfp6e3m2``,
    ``mxfp4``, ``mxint8``, ``nvfp4``; as ``tcrtl gemm --format mxfp8e4m3 --a A.npy --b B.npy
    --a-scales SA.npy --b-scales SB.npy``): ``a`` and ``b`` are element codes (``uint8``, or
    ml_dtypes values of the element format; MXINT8 also ``int8`` values), ``a_scales``
    (m x k/bs) and ``b_scales`` (k/bs x n) scale codes (``uint8``, or ``float8_e8m0fnu``
    / for NVFP4 ``float8_e4m3fn`` values), ``c`` FP32; K a multiple of the block size ``bs``
    (32; 16 for NVFP4, whose FP32 ``a_tensor_scale`` and ``b_tensor_scale`` default to 1).
    The core runs the fused MX datapath (``acc`` left out or ``"fused"``) on the ideal store,
    output- or weight-stationary (``ws`` needs ``width`` equal to the block size; ``is`` is
    refused), or in either of those dataflows through the TMA memory path
    (``memory="tma"``: the scales travel beside their operands); no random problems,
    presets, sparsity or output format other than FP32, as the command line.

    ``preset``, or ``gpu`` and ``instr`` instead, name the ``nvidia`` rule as for ``matmul``;
    ``.json`` then holds ``preset``, ``gpu`` and ``instr`` (a preset alone: its canonical GPU
    and instruction, e.g. ``hopper`` is ``h100`` through ``wgmma``), as ``tcrtl gemm --json``.

    Returns:
        GemmResult: ``.d``, ``.values``, ``.cycles``, ``.utilization``, ``.json``.

    Raises:
        ValueError: the command line's message for a bad option or operand (where it names an
        operand's file, the message names the argument: ``a_scales: ...``); OSError for a
        waveform path that cannot be written.
    """
    accn = None if acc is None or acc.lower() == "ieee" else acc
    named = (preset, gpu, instr)
    preset = _gpu.select(preset, gpu, instr, fmt, fmt_b, accn, out_fmt)
    block = fmt.lower() in _dtypes.BLOCK_ELEMENT
    scales = any(x is not None for x in (a_scales, b_scales, a_tensor_scale, b_tensor_scale))
    if block or scales:
        A, B, SA, SB = _block_arrays(a, b, a_scales, b_scales, fmt, fmt_b)
        C = None if c is None else _c_matrix(c, 0, 0, "fp32")
        ta = None if a_tensor_scale is None else _dtypes.fp32_bits(a_tensor_scale)
        tb = None if b_tensor_scale is None else _dtypes.fp32_bits(b_tensor_scale)
        random = m is not None or n is not None or k is not None
        # A compressed A asks for 2:4 sparsity, which block-scaled GEMMs refuse (--sparse).
        sparse = sparse or a_values is not None or a_meta is not None
        info = _tcrtl.gemm_mx(A, B, C, SA, SB, ta, tb, fmt=fmt, fmt_b=fmt_b, acc=accn,
                              preset=preset, out_fmt=out_fmt, width=width, rows=rows,
                              cols=cols, dataflow=dataflow, memory=memory, stages=stages,
                              swizzle=swizzle, sparse=sparse, random=random, vcd=vcd,
                              check=check, satfinite=satfinite)
        return GemmResult(dict(info))
    integer = fmt.lower() in INT_BITS
    A = None if a is None else _operand(a, fmt, "A")
    B = None if b is None else _operand(b, fmt_b or fmt, "B")
    # A pre-compressed A: its kept values as A's patterns (a format without an array dtype is
    # handed on for the native layer to refuse by name), its metadata as given.
    AV = a_values
    if a_values is not None and fmt.lower() in _dtypes.BITS_DTYPE:
        AV = _dtypes.bits(a_values, fmt, "a_values")
    AM = None if a_meta is None else np.asarray(a_meta)
    C = None
    if c is not None:
        if (A is None and AV is None) or B is None:
            raise ValueError("c needs a (or a_values and a_meta) and b")
        C = _c_matrix(c, 0, 0, out_fmt, integer)
    info = _tcrtl.gemm_run(A, B, C, m=m, n=n, k=k, seed=seed, pattern=pattern, fmt=fmt,
                           fmt_b=fmt_b, acc=accn, preset=preset, out_fmt=out_fmt,
                           width=width, rows=rows, cols=cols, dataflow=dataflow,
                           memory=memory, stages=stages, swizzle=swizzle,
                           sparse=sparse, prune=prune, a_values=AV, a_meta=AM, vcd=vcd,
                           check=check, satfinite=satfinite)
    info = dict(info)
    # The GPU and instruction whose rule nvidia ran, beside the preset, as named (a
    # floating-point report has all three keys; an integer one none).
    if info.get("preset"):
        info["gpu"], info["instr"] = _gpu.rule(*named)
    return GemmResult(info)
