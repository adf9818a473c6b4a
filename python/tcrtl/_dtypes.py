"""How numpy and ml_dtypes arrays map onto the formats' bit patterns.

An operand array is either bit patterns (unsigned integers of the format's container width)
or values whose dtype *is* the format (``float16`` for fp16, ml_dtypes ``bfloat16`` for bf16,
``float8_e4m3fn`` for e4m3, ...): those are reinterpreted bit for bit, never rounded.
"""

from __future__ import annotations

import numpy as np

# Container of each element format's bit patterns (TF32: its FP32 container).
BITS_DTYPE = {
    "e4m3": np.uint8,
    "e5m2": np.uint8,
    "fp16": np.uint16,
    "bf16": np.uint16,
    "tf32": np.uint32,
    "fp32": np.uint32,
    "e2m1": np.uint8,
    "e2m3": np.uint8,
    "e3m2": np.uint8,
    "e8m0": np.uint8,
}

# The numpy / ml_dtypes dtype name whose values are exactly the format's encodings.
VALUE_DTYPE = {
    "e4m3": "float8_e4m3fn",
    "e5m2": "float8_e5m2",
    "fp16": "float16",
    "bf16": "bfloat16",
    "tf32": "float32",
    "fp32": "float32",
    "e2m1": "float4_e2m1fn",
    "e2m3": "float6_e2m3fn",
    "e3m2": "float6_e3m2fn",
    "e8m0": "float8_e8m0fnu",
}

# Block formats: the element format (or "int8" for MXINT8) and the scale format.
BLOCK_ELEMENT = {
    "mxfp8e4m3": "e4m3",
    "mxfp8e5m2": "e5m2",
    "mxfp6e2m3": "e2m3",
    "mxfp6e3m2": "e3m2",
    "mxfp4": "e2m1",
    "mxint8": "int8",
    "nvfp4": "e2m1",
}
BLOCK_SCALE = {name: ("e4m3" if name == "nvfp4" else "e8m0") for name in BLOCK_ELEMENT}

_UNSIGNED = (np.uint8, np.uint16, np.uint32)


def dtype_name(arr: np.ndarray) -> str:
    return np.dtype(arr.dtype).name


def bits(arr, fmt: str, name: str) -> np.ndarray:
    """``arr`` as a C-contiguous array of ``fmt``'s bit patterns (a view where possible)."""
    arr = np.asarray(arr)
    fmt = fmt.lower()
    container = BITS_DTYPE.get(fmt)
    value = VALUE_DTYPE.get(fmt)
    if container is None:
        raise ValueError(f"{name}: no array dtype for format {fmt!r}")
    if arr.dtype == np.dtype(container):
        return np.ascontiguousarray(arr)
    if dtype_name(arr) == value:
        return np.ascontiguousarray(arr).view(container)
    raise ValueError(
        f"{name} has dtype {dtype_name(arr)}; {fmt} operands are {np.dtype(container).name} "
        f"bit patterns or {value} values"
    )


def block_elements(arr, fmt: str, name: str) -> np.ndarray:
    """Element codes of block format ``fmt`` (uint8 codes, the element format's ml_dtypes
    values, or int8 values for MXINT8)."""
    arr = np.asarray(arr)
    elem = BLOCK_ELEMENT[fmt.lower()]
    if elem == "int8":
        if arr.dtype in (np.dtype(np.int8), np.dtype(np.uint8)):
            return np.ascontiguousarray(arr)
        raise ValueError(f"{name} has dtype {dtype_name(arr)}; mxint8 elements are int8 values or uint8 codes")
    return bits(arr, elem, name)


def block_scales(arr, fmt: str, name: str) -> np.ndarray:
    """Scale codes of block format ``fmt``: uint8 codes, or ``float8_e8m0fnu`` (MX) /
    ``float8_e4m3fn`` (NVFP4) values."""
    return bits(arr, BLOCK_SCALE[fmt.lower()], name)


def fp32_bits(x) -> int:
    """The FP32 bit pattern of a Python or numpy scalar that FP32 holds exactly."""
    v = np.float32(x)
    if not (np.isnan(v) and np.isnan(x)) and float(v) != float(x):
        raise ValueError(f"{x!r} is not exactly representable in FP32")
    return int(np.array(v, dtype=np.float32).view(np.uint32))
