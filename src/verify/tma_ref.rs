//! An independent reference for TMA loads, written from the load semantics of docs/memory.md
//! ("Facts and sources") and not calling the engine: numpy-style slicing of the global tensor by
//! coordinates, element strides and fill into the dense box, then the swizzled placement in shared
//! memory by 16-byte chunks (chunk `c` of 128-byte row `r` goes to chunk `c ^ (r & m)`).

use crate::hw::memory::{OobFill, TensorMap};

/// The bytes of one NaN-filled element (little-endian): the 16-bit pattern `0x7FF7` once per
/// two bytes, as measured on an H200 (`0x7FF7` for 2-byte, `0x7FF77FF7` for 4-byte elements;
/// data/tma-measurements); `0x7F` for a 1-byte element (no GPU map type has one).
fn nan_bytes(esize: usize) -> Vec<u8> {
    match esize {
        1 => vec![0x7F],
        2 => vec![0xF7, 0x7F],
        _ => vec![0xF7, 0x7F, 0xF7, 0x7F],
    }
}

/// The dense box of a load of `map` at `coords` from global memory `gmem` (byte 0 = global
/// address 0), element `(k0, .., k4)` at byte `esize * (k0 + n0 * (k1 + n1 * (..)))`, and the
/// number of out-of-bounds elements. Reads outside `gmem` count as zero bytes. Dimension 0
/// takes every one of its `box_dims[0]` elements whatever its element stride (measured on an
/// H200); the outer dimensions take every `element_strides[i]`-th.
pub fn dense_box(gmem: &[u8], map: &TensorMap, coords: &[i32; 5]) -> (Vec<u8>, u64) {
    let rank = map.rank as usize;
    let es = map.dtype.size() as usize;
    let mut n = [1usize; 5];
    for (i, ni) in n.iter_mut().enumerate().take(rank) {
        let b = map.box_dims[i] as usize;
        *ni = b.div_ceil(step(map, i) as usize);
    }
    let total: usize = n.iter().product();
    let mut out = Vec::with_capacity(total * es);
    let mut oob = 0u64;
    let fill = match map.oob_fill {
        OobFill::Zero => vec![0u8; es],
        OobFill::Nan => nan_bytes(es),
    };
    for k4 in 0..n[4] {
        for k3 in 0..n[3] {
            for k2 in 0..n[2] {
                for k1 in 0..n[1] {
                    for k0 in 0..n[0] {
                        let k = [k0, k1, k2, k3, k4];
                        let mut addr = map.global_address as i128;
                        let mut inside = true;
                        for i in 0..rank {
                            let g = i128::from(coords[i]) + k[i] as i128 * i128::from(step(map, i));
                            if g < 0 || g >= i128::from(map.global_dims[i]) {
                                inside = false;
                            }
                            let stride = if i == 0 {
                                es as i128
                            } else {
                                i128::from(map.global_strides[i - 1])
                            };
                            addr += g * stride;
                        }
                        if inside {
                            for b in 0..es {
                                let a = addr + b as i128;
                                let v = usize::try_from(a)
                                    .ok()
                                    .and_then(|a| gmem.get(a))
                                    .copied()
                                    .unwrap_or(0);
                                out.push(v);
                            }
                        } else {
                            oob += 1;
                            out.extend_from_slice(&fill);
                        }
                    }
                }
            }
        }
    }
    (out, oob)
}

/// The distance between loaded elements of dimension `i`: 1 for dimension 0, the element
/// stride for the others.
fn step(map: &TensorMap, i: usize) -> u32 {
    if i == 0 {
        1
    } else {
        map.element_strides[i]
    }
}

/// A box row's bytes in the dense box, and the distance between rows in shared memory: the
/// row itself without a swizzle; with one, the swizzle's span (32, 64 or 128 bytes, by the
/// mode's name), a narrower row being padded to it (measured on an H200).
pub fn row_layout(map: &TensorMap) -> (usize, usize) {
    let row = map.box_dims[0] as usize * map.dtype.size() as usize;
    let span = match map.swizzle.name() {
        "32B" => 32,
        "64B" => 64,
        "128B" => 128,
        _ => 0,
    };
    (row, row.max(span))
}

/// Places the dense box rows (`row` bytes each) at pre-swizzle addresses `base + j * pitch`
/// (see [`place`] for the swizzle).
pub fn place_rows(dense: &[u8], row: usize, pitch: usize, base: u32, mask: u32, smem: &mut [u8]) {
    for (j, r) in dense.chunks(row.max(1)).enumerate() {
        place(r, base + (j * pitch) as u32, mask, smem);
    }
}

/// The 16-byte chunk permutation mask of a swizzle span in bytes (0 = none, 32, 64, 128).
pub fn chunk_mask(span: u32) -> u32 {
    match span {
        32 => 1,
        64 => 3,
        128 => 7,
        _ => 0,
    }
}

/// Places `dense` at pre-swizzle address `base` into `smem` (physical addresses), moving each
/// 16-byte chunk `c` of 128-byte row `r` to chunk `c ^ (r & mask)` of the same row.
pub fn place(dense: &[u8], base: u32, mask: u32, smem: &mut [u8]) {
    for (off, &b) in dense.iter().enumerate() {
        let a = base as usize + off;
        let row = a / 128;
        let chunk = (a % 128) / 16;
        let within = a % 16;
        let chunk2 = chunk ^ (row & mask as usize);
        let phys = row * 128 + chunk2 * 16 + within;
        if let Some(s) = smem.get_mut(phys) {
            *s = b;
        }
    }
}
