"""Types of the native module `tcrtl._tcrtl` (the Python layer in `tcrtl` wraps these)."""

from typing import Any, List, Optional, Sequence, Tuple, Union

import numpy as np
import numpy.typing as npt

def dot_kind(
    fmt: str,
    fmt_b: Optional[str] = None,
    acc: Optional[str] = None,
    preset: Optional[str] = None,
    scales: bool = False,
) -> str: ...
def select_rule(
    preset: Optional[str] = None,
    gpu: Optional[str] = None,
    instr: Optional[str] = None,
    fmt: Optional[str] = None,
    fmt_b: Optional[str] = None,
    acc: Optional[str] = None,
    out_fmt: Optional[str] = None,
) -> Tuple[Optional[str], Optional[str], Optional[str]]: ...
def gpu_rows() -> List[dict]: ...
def dot_float_check(
    fmt: str,
    fmt_b: Optional[str],
    acc: Optional[str],
    preset: Optional[str],
    out_fmt: str,
    rounding_name: str,
    satfinite: bool,
) -> None: ...
def dot_float(
    a: npt.NDArray[Any],
    b: npt.NDArray[Any],
    c: npt.NDArray[Any],
    *,
    fmt: str,
    fmt_b: Optional[str],
    acc: Optional[str],
    preset: Optional[str],
    out_fmt: str,
    rounding_name: str,
    width: Optional[int],
    satfinite: bool,
    promote_every: Optional[int] = None,
) -> Tuple[npt.NDArray[np.uint32], npt.NDArray[np.uint8]]: ...
def dot_int_rows(
    a: npt.NDArray[Any],
    b: npt.NDArray[Any],
    c: npt.NDArray[np.int32],
    *,
    fmt: str,
    fmt_b: Optional[str],
    out_fmt: str,
    rounding_name: str,
    width: Optional[int],
    satfinite: bool,
) -> Tuple[npt.NDArray[np.uint32], npt.NDArray[np.uint8]]: ...
def dot_block(
    a: npt.NDArray[Any],
    b: npt.NDArray[Any],
    c: npt.NDArray[np.uint32],
    a_scales: npt.NDArray[np.uint8],
    b_scales: npt.NDArray[np.uint8],
    a_tensor_scale: Optional[int],
    b_tensor_scale: Optional[int],
    *,
    fmt: str,
    fmt_b: Optional[str],
    acc: str,
    refused: Optional[str],
) -> Tuple[npt.NDArray[np.uint32], npt.NDArray[np.uint8]]: ...
def matmul_bits(
    a: npt.NDArray[Any],
    b: npt.NDArray[Any],
    c: Optional[npt.NDArray[Any]] = None,
    *,
    fmt: str = "fp16",
    fmt_b: Optional[str] = None,
    acc: Optional[str] = None,
    preset: Optional[str] = None,
    out_fmt: str = "fp32",
    width: int = 1,
    rows: int = 4,
    cols: int = 4,
    dataflow: str = "os",
    satfinite: bool = False,
    promote_every: Optional[int] = None,
) -> Tuple[npt.NDArray[np.uint32], int, int, int]: ...
def matmul_mx(
    a: Optional[npt.NDArray[Any]] = None,
    b: Optional[npt.NDArray[Any]] = None,
    c: Optional[npt.NDArray[np.uint32]] = None,
    a_scales: Optional[npt.NDArray[np.uint8]] = None,
    b_scales: Optional[npt.NDArray[np.uint8]] = None,
    a_tensor_scale: Optional[int] = None,
    b_tensor_scale: Optional[int] = None,
    *,
    fmt: str,
    fmt_b: Optional[str] = None,
    acc: Optional[str] = None,
    preset: Optional[str] = None,
    out_fmt: str = "fp32",
    width: int = 1,
    rows: int = 4,
    cols: int = 4,
    dataflow: str = "os",
    satfinite: bool = False,
) -> Tuple[npt.NDArray[np.uint32], int, int, int]: ...
def gemm_run(
    a: Optional[npt.NDArray[Any]] = None,
    b: Optional[npt.NDArray[Any]] = None,
    c: Optional[npt.NDArray[Any]] = None,
    *,
    m: Optional[int] = None,
    n: Optional[int] = None,
    k: Optional[int] = None,
    seed: int = 1,
    pattern: str = "random",
    fmt: str = "fp16",
    fmt_b: Optional[str] = None,
    acc: Optional[str] = None,
    preset: Optional[str] = None,
    out_fmt: str = "fp32",
    width: int = 1,
    rows: int = 4,
    cols: int = 4,
    dataflow: str = "os",
    memory: str = "ideal",
    stages: Optional[int] = None,
    swizzle: bool = True,
    sparse: bool = False,
    prune: bool = False,
    a_values: Optional[npt.NDArray[Any]] = None,
    a_meta: Optional[npt.NDArray[np.uint8]] = None,
    vcd: Optional[str] = None,
    check: bool = False,
    satfinite: bool = False,
) -> dict: ...
def gemm_mx(
    a: Optional[npt.NDArray[Any]] = None,
    b: Optional[npt.NDArray[Any]] = None,
    c: Optional[npt.NDArray[np.uint32]] = None,
    a_scales: Optional[npt.NDArray[np.uint8]] = None,
    b_scales: Optional[npt.NDArray[np.uint8]] = None,
    a_tensor_scale: Optional[int] = None,
    b_tensor_scale: Optional[int] = None,
    *,
    fmt: str,
    fmt_b: Optional[str] = None,
    acc: Optional[str] = None,
    preset: Optional[str] = None,
    out_fmt: str = "fp32",
    width: int = 1,
    rows: int = 4,
    cols: int = 4,
    dataflow: str = "os",
    memory: str = "ideal",
    stages: Optional[int] = None,
    swizzle: bool = True,
    sparse: bool = False,
    random: bool = False,
    vcd: Optional[str] = None,
    check: bool = False,
    satfinite: bool = False,
) -> dict: ...
def convert_bits(
    x: npt.NDArray[Any],
    to: str,
    from_fmt: Optional[str] = None,
    rounding_name: str = "rne",
    saturate: bool = False,
) -> Tuple[npt.NDArray[np.uint64], npt.NDArray[np.float64], npt.NDArray[np.uint8], List[int]]: ...
def quantize_bits(
    x: npt.NDArray[Any], fmt: str, rounding_name: str = "rne"
) -> Tuple[
    npt.NDArray[np.uint64], npt.NDArray[np.uint64], List[int], List[int], Optional[int], int
]: ...
def dequantize_values(
    elements: npt.NDArray[Any],
    scales: npt.NDArray[Any],
    fmt: str,
    tensor_scale: Optional[int] = None,
) -> npt.NDArray[np.float64]: ...

def tma_load(
    tensor: npt.NDArray[Any],
    *,
    dtype: str,
    box_dims: List[int],
    coords: List[int],
    gdim: Optional[List[int]] = None,
    gstride: Optional[List[int]] = None,
    estride: Optional[List[int]] = None,
    swizzle: str = "none",
    oob: str = "zero",
    smem_base: int = 0,
    vcd: Optional[str] = None,
) -> dict: ...

def workload_run(
    name: str,
    *,
    path: Optional[str] = None,
    text: Optional[str] = None,
    fmt: str = "fp16",
    fmt_b: Optional[str] = None,
    acc: Optional[str] = None,
    preset: Optional[str] = None,
    gpu: Optional[str] = None,
    instr: Optional[str] = None,
    width: int = 1,
    rows: int = 4,
    cols: int = 4,
    dataflow: str = "os",
    satfinite: bool = False,
    seed: int = 1,
    max_check: int = 4194304,
    samples: int = 256,
    analytic: bool = False,
    timing: str = "model",
    threads: int = 1,
    memory: str = "ideal",
    stages: Optional[int] = None,
    swizzle: bool = True,
    energy: bool = False,
    tech: Optional[str] = None,
    clock_ghz: float = 1.0,
    shard: Tuple[int, int] = (0, 1),
    split: str = "layers",
) -> Tuple[List[str], List[List[Union[str, int, float, None]]], str]: ...

class PE:
    """One floating-point processing element, stepped cycle by cycle."""

    def __init__(
        self,
        fmt: str = "fp16",
        acc: str = "ieee",
        width: int = 1,
        *,
        fmt_b: Optional[str] = None,
        preset: Optional[str] = None,
        out_fmt: str = "fp32",
        vcd: Optional[str] = None,
        gpu: Optional[str] = None,
        instr: Optional[str] = None,
    ) -> None: ...
    @property
    def width(self) -> int: ...
    def reset(self, cycles: int = 1) -> None: ...
    def step(
        self,
        a: Optional[Sequence[int]] = None,
        b: Optional[Sequence[int]] = None,
        *,
        lanes: Optional[int] = None,
        valid: Optional[bool] = None,
        b_valid: Optional[bool] = None,
        last: bool = False,
        fire: bool = False,
        set: int = 0,
        shift: Optional[Tuple[int, int]] = None,
    ) -> None: ...
    @property
    def cycle(self) -> int: ...
    @property
    def a_out(self) -> Tuple[List[int], int]: ...
    @property
    def b_out(self) -> Tuple[List[int], bool]: ...
    def acc(self, set: int = 0) -> int: ...
    @property
    def done(self) -> bool: ...
    @property
    def flags(self) -> int: ...
    @property
    def hazard(self) -> bool: ...
    def peek(self, name: str) -> int: ...
    def signals(self) -> List[str]: ...
    def close(self) -> None: ...
