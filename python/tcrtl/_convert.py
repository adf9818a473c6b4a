"""``convert``, ``quantize`` and ``dequantize``: formats and MX/NVFP4 blocks over numpy and
ml_dtypes arrays."""

from __future__ import annotations

from typing import Optional

import numpy as np

from . import _dtypes, _tcrtl

_CONTAINER = {8: np.uint8, 16: np.uint16, 32: np.uint32}
_WIDTH = {"e4m3": 8, "e5m2": 8, "fp16": 16, "bf16": 16, "tf32": 32, "fp32": 32,
          "e2m1": 8, "e2m3": 8, "e3m2": 8, "e8m0": 8}
_ML_NAME = {v: k for k, v in _dtypes.VALUE_DTYPE.items() if k not in ("tf32",)}


class Converted:
    """The result of ``convert``.

    Attributes:
        bits: the target format's bit patterns, in the input's shape (``uint8`` for formats of
            8 bits or fewer, ``uint16``, ``uint32``; TF32 in its FP32 container), as
            ``tcrtl convert --out`` writes them.
        values: the converted values as ``float64``.
        flags: each element's IEEE flags (invalid 8, overflow 4, underflow 2, inexact 1).
        fmt: the target format.
    """

    def __init__(self, bits, values, flags, fmt):
        self.bits, self.values, self.flags, self.fmt = bits, values, flags, fmt

    def as_ml_dtypes(self) -> np.ndarray:
        """The bits viewed as the ml_dtypes (or numpy) dtype of the format, e.g. a
        ``float8_e4m3fn`` array for e4m3 (needs ml_dtypes for the types numpy lacks)."""
        name = _dtypes.VALUE_DTYPE[self.fmt]
        if name in ("float16", "float32"):
            return self.bits.view(np.dtype(name))
        import ml_dtypes

        return self.bits.view(getattr(ml_dtypes, name))

    def __repr__(self) -> str:
        return f"Converted(fmt={self.fmt!r}, bits={self.bits!r})"


def convert(x, to: str, *, from_fmt: Optional[str] = None, rounding: str = "rne",
            saturate: bool = False) -> Converted:
    """Converts values (or another format's bit patterns) into format ``to``, element by
    element, as ``tcrtl convert --to FMT`` does.

    Args:
        x: ``float32``/``float64`` values; or, with ``from_fmt``, that format's bit patterns
            (unsigned integers; TF32 as FP32 containers); or an ml_dtypes array
            (``bfloat16``, ``float8_e4m3fn``, ``float4_e2m1fn``, ...), read as its format's
            patterns; ``float16`` values are read as fp16.
        to: ``e4m3``, ``e5m2``, ``fp16``, ``bf16``, ``tf32``, ``fp32``, ``e2m1``, ``e2m3``,
            ``e3m2`` or ``e8m0`` (block formats: ``quantize``).
        rounding: ``rne`` (default), ``rna``, ``rtz``, ``rdn``, ``rup``, ``rto``.
        saturate: overflow and infinities give the largest finite value (PTX ``satfinite``).

    Returns:
        Converted: ``.bits``, ``.values``, ``.flags``; ``.as_ml_dtypes()``.
    """
    arr = np.asarray(x)
    name = _dtypes.dtype_name(arr)
    if from_fmt is None and name in _ML_NAME and name not in ("float32",):
        from_fmt = _ML_NAME[name]
        arr = arr.view(_dtypes.BITS_DTYPE[from_fmt])
    arr = np.ascontiguousarray(arr)
    bits, values, flags, shape = _tcrtl.convert_bits(arr, to, from_fmt, rounding, saturate)
    fmt = to.lower()
    container = _CONTAINER[_WIDTH[fmt]] if _WIDTH[fmt] > 8 else np.uint8
    if _WIDTH[fmt] == 32:
        container = np.uint32
    shape = tuple(shape)
    return Converted(bits.astype(container).reshape(shape), values.reshape(shape),
                     flags.reshape(shape), fmt)


class Quantized:
    """A tensor quantised into a block format (MX or NVFP4).

    Attributes:
        fmt: the block format (``mxfp8e4m3``, ``mxfp8e5m2``, ``mxfp6e2m3``, ``mxfp6e3m2``,
            ``mxfp4``, ``mxint8``, ``nvfp4``).
        elements: element codes (``uint8``, the input's shape), as ``tcrtl convert --out``.
        scales: block scale codes (``uint8``; E8M0 for MX, UE4M3 for NVFP4), the input's shape
            with the last axis in blocks, as ``--scales-out``.
        tensor_scale: NVFP4's FP32 tensor scale (``float``), ``None`` for MX.
        clamped: elements clamped to their block's largest magnitude.
    """

    def __init__(self, fmt, elements, scales, tensor_scale, clamped):
        self.fmt, self.elements, self.scales = fmt, elements, scales
        self.tensor_scale, self.clamped = tensor_scale, clamped

    def __repr__(self) -> str:
        return (f"Quantized(fmt={self.fmt!r}, elements={self.elements.shape}, "
                f"scales={self.scales.shape}, tensor_scale={self.tensor_scale!r})")


def quantize(x, fmt: str, *, rounding: str = "rne") -> Quantized:
    """Quantises ``float32``/``float64`` values along their last axis into block format
    ``fmt`` (one scale per block of 32 elements, 16 for NVFP4), as ``tcrtl convert --to FMT
    --in X.npy --out Q.npy --scales-out S.npy``."""
    arr = np.ascontiguousarray(np.asarray(x))
    elems, scales, shape, sshape, ts, clamped = _tcrtl.quantize_bits(arr, fmt, rounding)
    tensor = None if ts is None else float(np.array(ts, dtype=np.uint32).view(np.float32))
    return Quantized(fmt.lower(), elems.astype(np.uint8).reshape(tuple(shape)),
                     scales.astype(np.uint8).reshape(tuple(sshape)), tensor, clamped)


def dequantize(q: Quantized = None, *, elements=None, scales=None, fmt: Optional[str] = None,
               tensor_scale=None) -> np.ndarray:
    """The values of a quantised tensor as ``float64`` (the shape of its elements): from a
    ``Quantized``, or from ``elements`` and ``scales`` codes (``uint8``, or the element and
    scale formats' ml_dtypes values) of block format ``fmt``."""
    if q is not None:
        elements, scales, fmt, tensor_scale = q.elements, q.scales, q.fmt, q.tensor_scale
    if elements is None or scales is None or fmt is None:
        raise ValueError("dequantize needs a Quantized, or elements, scales and fmt")
    e = _dtypes.block_elements(elements, fmt, "elements")
    if e.dtype == np.int8:
        e = e.view(np.uint8)
    s = _dtypes.block_scales(scales, fmt, "scales")
    ts = None if tensor_scale is None else _dtypes.fp32_bits(tensor_scale)
    values = _tcrtl.dequantize_values(np.ascontiguousarray(e), np.ascontiguousarray(s), fmt, ts)
    return values.reshape(np.shape(e))
