"""``tma_load``: one TMA load of a box of a numpy tensor through the clocked memory system."""

from __future__ import annotations

from typing import Optional, Sequence

import numpy as np

from . import _tcrtl

_SLOT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


class TmaResult:
    """A box load: ``.smem`` (shared memory from ``smem_base`` to the end of the last 128-byte
    row the box touched, one element-sized unsigned slot each), ``.cycles``, ``.tx_bytes`` and
    ``.json`` (the keys of ``tcrtl tma load --json``)."""

    def __init__(self, info: dict, elem_bytes: int):
        smem = info.pop("smem")
        self.json = info
        self.smem = np.array(smem, dtype=np.uint64).astype(_SLOT[elem_bytes])
        self.cycles = info["cycles"]
        self.tx_bytes = info["tx_bytes"]

    def __repr__(self) -> str:
        return f"TmaResult(tx_bytes={self.tx_bytes}, cycles={self.cycles})"


def tma_load(tensor, *, dtype: str, box: Sequence[int], coords: Sequence[int],
             gdim: Optional[Sequence[int]] = None, gstride: Optional[Sequence[int]] = None,
             estride: Optional[Sequence[int]] = None, swizzle: str = "none", oob: str = "zero",
             smem_base: int = 0, vcd: Optional[str] = None) -> TmaResult:
    """One TMA load of a box of ``tensor``, as ``tcrtl tma load --tensor T.npy --dtype D --box
    ... --coords ...`` runs it (tensor maps of rank 1 to 5, dimensions innermost first;
    negative coordinates fill out of bounds; ``swizzle`` none, 32B, 64B or 128B; ``oob`` zero
    or nan). ``tensor``: a numpy array whose element size is the dtype's (float16 and ml_dtypes
    arrays are read as their bit patterns)."""
    arr = np.ascontiguousarray(np.asarray(tensor))
    if arr.dtype.kind not in "uif" or arr.dtype == np.float16 or arr.dtype.name not in (
            "uint8", "int8", "uint16", "uint32", "int32", "float32", "float64"):
        arr = arr.view(_SLOT.get(arr.dtype.itemsize, np.uint8))
    info = _tcrtl.tma_load(arr, dtype=dtype, box_dims=list(box), coords=list(coords),
                           gdim=None if gdim is None else list(gdim),
                           gstride=None if gstride is None else list(gstride),
                           estride=None if estride is None else list(estride),
                           swizzle=swizzle, oob=oob, smem_base=smem_base, vcd=vcd)
    return TmaResult(dict(info), arr.dtype.itemsize)
