"""``tcrtl.dot``: batches of dot products through the model's datapath."""

from __future__ import annotations

from typing import Optional

import numpy as np

from . import _dtypes, _gpu, _tcrtl

FLAG_BITS = {"invalid": 8, "overflow": 4, "underflow": 2, "inexact": 1}


class DotResult:
    """The rows of a ``dot`` batch.

    Attributes:
        bits: D's bit patterns, one per row (``uint32`` FP32 patterns; ``uint16`` FP16
            patterns with ``out_fmt="fp16"``; ``uint32`` int32 patterns for integer formats).
        values: D as ``float64``, one per row (exact: every FP32, FP16 and int32 value is a
            float64).
        flags: each row's IEEE flags as a 4-bit vector (``uint8``): invalid 8, overflow 4,
            underflow 2, inexact 1 (integer formats: 0).
        out_of_range: integer formats only, ``bool`` per row: some step's sum left the int32
            range (wrapped, or clamped with ``satfinite``); ``None`` otherwise.
        out_fmt: ``"fp32"``, ``"fp16"`` or ``"int32"``.
    """

    def __init__(self, bits: np.ndarray, flags: np.ndarray, out_fmt: str, out_of_range=None):
        self.bits = bits
        self.flags = flags
        self.out_fmt = out_fmt
        self.out_of_range = out_of_range
        if out_fmt == "fp16":
            self.values = bits.view(np.float16).astype(np.float64)
        elif out_fmt == "int32":
            self.values = bits.view(np.int32).astype(np.float64)
        else:
            self.values = bits.view(np.float32).astype(np.float64)

    def __len__(self) -> int:
        return len(self.bits)

    @property
    def invalid(self) -> np.ndarray:
        """``bool`` per row: the invalid flag."""
        return (self.flags & 8) != 0

    @property
    def overflow(self) -> np.ndarray:
        """``bool`` per row: the overflow flag."""
        return (self.flags & 4) != 0

    @property
    def underflow(self) -> np.ndarray:
        """``bool`` per row: the underflow flag."""
        return (self.flags & 2) != 0

    @property
    def inexact(self) -> np.ndarray:
        """``bool`` per row: the inexact flag."""
        return (self.flags & 1) != 0

    def flag_names(self, row: int) -> list:
        """The names of the flags row ``row`` raised, e.g. ``["overflow", "inexact"]``."""
        f = int(self.flags[row])
        return [n for n, b in FLAG_BITS.items() if f & b]

    def __repr__(self) -> str:
        return f"DotResult(rows={len(self)}, out_fmt={self.out_fmt!r}, bits={self.bits!r})"


def _rows(x, name):
    arr = np.asarray(x)
    if arr.ndim == 1:
        return arr.reshape(1, -1)
    return arr


def _c_array(c, rows: int, out_fmt: str) -> np.ndarray:
    """C as accumulator bit patterns, one per row."""
    bits_t, value_t = (np.uint16, np.float16) if out_fmt == "fp16" else (np.uint32, np.float32)
    if c is None:
        return np.zeros(rows, dtype=bits_t)
    if np.isscalar(c) and not isinstance(c, (np.ndarray,)):
        if isinstance(c, (int, np.integer)) and not isinstance(c, bool):
            return np.full(rows, c, dtype=bits_t)
        v = value_t(c)
        if float(v) != float(c) and not (np.isnan(v) and np.isnan(c)):
            raise ValueError(f"C = {c!r} is not exactly representable in {out_fmt}")
        return np.full(rows, v, dtype=value_t).view(bits_t)
    arr = np.asarray(c)
    if arr.dtype == np.dtype(bits_t):
        return np.ascontiguousarray(arr).reshape(-1) if arr.ndim == 2 and arr.shape[1] == 1 else np.ascontiguousarray(arr)
    if arr.dtype == np.dtype(value_t):
        arr = arr.reshape(-1) if arr.ndim == 2 and arr.shape[1] == 1 else arr
        return np.ascontiguousarray(arr).view(bits_t)
    raise ValueError(
        f"C has dtype {_dtypes.dtype_name(arr)}; expected {np.dtype(bits_t).name} "
        f"({out_fmt.upper()} bit patterns) or {np.dtype(value_t).name}"
    )


def dot(
    a,
    b,
    c=None,
    *,
    fmt: str = "fp16",
    acc: str = "ieee",
    width: Optional[int] = None,
    fmt_b: Optional[str] = None,
    preset: Optional[str] = None,
    rounding: str = "rne",
    out_fmt: str = "fp32",
    satfinite: bool = False,
    a_scales=None,
    b_scales=None,
    a_tensor_scale=None,
    b_tensor_scale=None,
    promote_every: Optional[int] = None,
    gpu: Optional[str] = None,
    instr: Optional[str] = None,
) -> DotResult:
    """Dot products, one per row: ``d[r] = c[r] + sum_k a[r, k] * b[r, k]``.

    Exactly what ``tcrtl dot`` computes for each row (``tcrtl dot --a A.npy --b B.npy --c
    C.npy`` for a batch), in parallel over the rows (the GIL released; the results do not
    depend on the thread count).

    Args:
        a, b: ``rows x K`` arrays (a 1-D array is one row). Floating-point formats: bit
            patterns (``uint8`` for e4m3/e5m2, ``uint16`` for fp16/bf16, ``uint32`` FP32
            containers for tf32) or values whose dtype is the format (``float16``; ml_dtypes
            ``bfloat16``, ``float8_e4m3fn``, ``float8_e5m2``; ``float32`` for tf32, whose low
            13 bits must be zero). Integer formats (``s8``, ``u8``, ``s4``, ``u4``): ``int8`` or
            ``uint8`` values. Block formats (``mxfp8e4m3``, ``mxfp8e5m2``, ``mxfp6e2m3``,
            ``mxfp6e3m2``, ``mxfp4``, ``mxint8``, ``nvfp4``): element codes (``uint8``) or
            the element format's ml_dtypes values (``int8`` for mxint8).
        c: the accumulator per row: FP32 patterns (``uint32``) or ``float32`` values; FP16
            (``uint16``/``float16``) with ``out_fmt="fp16"``; ``int32`` for integer formats; a
            scalar for every row; ``None`` for zeros.
        fmt: format of A (and of B unless ``fmt_b``).
        acc: accumulation mode: ``ieee`` (a chain of FMAs in k order, one rounding per
            product), ``fused`` (one rounding per step of ``width`` products), ``exact`` (one
            rounding), ``nvidia`` (a GPU's block FMA; needs ``preset``, or ``gpu``); block
            formats take
            ``exact``, ``fused`` or ``block-rz``.
        width: products per step for ieee and fused (1..=32); ``None`` is the command line's
            default, K capped at 32. (``ieee`` gives the same bits for every width: its FMAs
            run one product at a time.) ``nvidia`` uses its block size.
        preset: the rule of ``nvidia``: ``volta`` (V100), ``turing`` (T4), ``ampere``
            (A100, A30, A2), ``ada`` (L40S and other Ada parts), ``hopper`` (H100 and H200
            through ``wgmma``: Hopper's native FP8 path, what cuBLAS runs), ``blackwell``
            (B200 through ``mma.sync``), ``h200`` (H100 and H200 through ``mma.sync`` as
            CUDA 13.0 builds it: FP8 lowered to FP16 conversions and two FP16 steps, FP8
            errors far smaller than cuBLAS's on the same GPU). ``tcrtl.gpu_rows()`` gives the
            evidence of each (measurement sets, published models, our own captures).
        gpu: instead of ``preset``, the GPU whose rule ``nvidia`` runs (``v100``, ``t4``,
            ``a100``, ``a30``, ``a2``, ``l40s``, ``rtx4090``, ``l4``, ``h100``, ``h200``,
            ``b200``), through ``instr``.
        instr: the matrix instruction of ``gpu``: ``mma.sync``, ``wmma`` (the same path, no
            FP8), ``wgmma`` (H100, H200), ``tcgen05`` (B200: not measured, refused). Left out,
            the GPU's default: ``wgmma`` on the H100 and H200 (preset ``hopper``, what
            cuBLAS runs), ``mma.sync`` elsewhere. ``gpu="h100", instr="mma.sync"`` is preset
            ``h200``: the two differ for FP8 only.
        rounding: ``rne`` (default), ``rtz``, ``rdn``, ``rup`` for ieee, fused and exact.
        out_fmt: ``fp32`` (default) or ``fp16``: the accumulator format of C and D.
        satfinite: integer formats: clamp each step's sum to int32 instead of wrapping.
        a_scales, b_scales: block formats: ``rows x blocks`` scale codes (``uint8``;
            ml_dtypes ``float8_e8m0fnu`` values for MX, ``float8_e4m3fn`` for nvfp4).
        a_tensor_scale, b_tensor_scale: nvfp4: FP32 tensor scales (default 1).
        promote_every: promote to FP32 every N products (``tcrtl dot --promote-every N``;
            docs/numerics.md, "FP32 promotion"): each chunk of N products is the mode's dot
            product from +0, added into an FP32 sum from C with one round-to-nearest-even
            addition. FP32 output and floating-point formats only; for ``nvidia`` N must be a
            multiple of the preset's block size. ``None`` (default): no promotion.

    Returns:
        DotResult: ``.bits`` (D's patterns), ``.values`` (float64), ``.flags`` per row.

    Raises:
        ValueError: with the command line's one-line message for a bad name, a bad
        combination or a bad operand.

    Example:
        >>> import numpy as np, tcrtl
        >>> a = np.array([[0x3C00, 0x3C00]], dtype=np.uint16)   # 1.0, 1.0
        >>> b = np.array([[0x4000, 0x0001]], dtype=np.uint16)   # 2.0, 2^-24
        >>> r = tcrtl.dot(a, b, np.array([0x3F800000], dtype=np.uint32),
        ...               fmt="fp16", acc="nvidia", preset="hopper")
        >>> hex(int(r.bits[0]))
        '0x40400000'
    """
    scales = any(x is not None for x in (a_scales, b_scales, a_tensor_scale, b_tensor_scale))
    # "ieee" is the default mode; like an absent --acc it names no mode, so integer formats
    # (which take none) accept it.
    acc_name = None if acc is None or str(acc).lower() == "ieee" else str(acc)
    preset = _gpu.select(preset, gpu, instr, fmt, fmt_b, acc_name, out_fmt)
    kind = _tcrtl.dot_kind(fmt, fmt_b, acc_name, preset, scales)
    if promote_every is not None and kind == "block":
        raise ValueError("a block-scaled format does not apply with --promote-every")
    if promote_every is not None and kind == "int":
        raise ValueError("integer formats sum exactly in int32: FP32 promotion does not apply to them")
    if kind == "block":
        refused = None
        for on, what in (
            (preset is not None, "--preset"),
            (out_fmt.lower() != "fp32", "--out-format"),
            (rounding.lower() != "rne", "--rounding"),
            (satfinite, "--satfinite"),
            (width is not None, "--width"),
        ):
            if on:
                refused = what
                break
        fb = fmt_b or fmt
        A = _rows(_dtypes.block_elements(a, fmt, "A"), "A")
        B = _rows(_dtypes.block_elements(b, fb, "B"), "B")
        rows = A.shape[0]
        if a_scales is None or b_scales is None:
            raise ValueError("block-scaled formats need a_scales and b_scales (one scale per block of K)")
        sa = _rows(_dtypes.block_scales(a_scales, fmt, "a_scales"), "a_scales")
        sb = _rows(_dtypes.block_scales(b_scales, fb, "b_scales"), "b_scales")
        ta = None if a_tensor_scale is None else _dtypes.fp32_bits(a_tensor_scale)
        tb = None if b_tensor_scale is None else _dtypes.fp32_bits(b_tensor_scale)
        C = _c_array(c, rows, "fp32")
        d, flags = _tcrtl.dot_block(
            A, B, C, sa, sb, ta, tb, fmt=fmt, fmt_b=fmt_b, acc=acc_name or "ieee", refused=refused
        )
        return DotResult(d, flags, "fp32")
    if kind == "int":
        A = _rows(a, "A")
        B = _rows(b, "B")
        if c is None:
            C = np.zeros(A.shape[0], dtype=np.int32)
        elif np.isscalar(c):
            C = np.full(A.shape[0], c, dtype=np.int32)
        else:
            C = np.ascontiguousarray(np.asarray(c))
            if C.dtype != np.int32:
                raise ValueError(f"C has dtype {_dtypes.dtype_name(C)}; expected int32")
        d, oor = _tcrtl.dot_int_rows(
            np.ascontiguousarray(A),
            np.ascontiguousarray(B),
            C,
            fmt=fmt,
            fmt_b=fmt_b,
            out_fmt=out_fmt,
            rounding_name=rounding,
            width=width,
            satfinite=satfinite,
        )
        return DotResult(d, np.zeros(len(d), dtype=np.uint8), "int32", oor.astype(bool))
    # Name checks first (the command line's order), then the arrays.
    _tcrtl.dot_float_check(fmt, fmt_b, acc_name, preset, out_fmt, rounding, satfinite)
    A = _rows(_dtypes.bits(a, fmt, "A"), "A")
    B = _rows(_dtypes.bits(b, fmt_b or fmt, "B"), "B")
    out = out_fmt.lower()
    C = _c_array(c, A.shape[0], out if out in ("fp16", "fp32") else "fp32")
    d, flags = _tcrtl.dot_float(
        A,
        B,
        C,
        fmt=fmt,
        fmt_b=fmt_b,
        acc=acc_name,
        preset=preset,
        out_fmt=out_fmt,
        rounding_name=rounding,
        width=width,
        satfinite=satfinite,
        promote_every=promote_every,
    )
    if out == "fp16":
        d = d.astype(np.uint16)
    return DotResult(d, flags, out)
