//! An independent reference for TMA loads, written from the load semantics of docs/memory.md
//! ("Facts and sources") and not calling the engine: numpy-style slicing of the global tensor by
//! coordinates, element strides and fill into the dense box, then the swizzled placement in shared
//! memory by 16-byte chunks (chunk `c` of 128-byte row `r` goes to chunk `c ^ (r & m)`).

use crate::hw::memory::{OobFill, TensorMap};

/// The bytes of one NaN-filled element as this model writes them (little-endian): for each
/// float size, the quiet NaN with every payload bit set and the sign clear.
fn nan_bytes(esize: usize) -> Vec<u8> {
    match esize {
        1 => vec![0x7F],
        2 => 0x7FFFu16.to_le_bytes().to_vec(),
        _ => 0x7FFF_FFFFu32.to_le_bytes().to_vec(),
    }
}

/// The dense box of a load of `map` at `coords` from global memory `gmem` (byte 0 = global
/// address 0), element `(k0, .., k4)` at byte `esize * (k0 + n0 * (k1 + n1 * (..)))`, and the
/// number of out-of-bounds elements. Reads outside `gmem` count as zero bytes.
pub fn dense_box(gmem: &[u8], map: &TensorMap, coords: &[i32; 5]) -> (Vec<u8>, u64) {
    let rank = map.rank as usize;
    let es = map.dtype.size() as usize;
    let mut n = [1usize; 5];
    for (i, ni) in n.iter_mut().enumerate().take(rank) {
        let b = map.box_dims[i] as usize;
        let s = map.element_strides[i] as usize;
        *ni = b.div_ceil(s);
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
                            let g = i128::from(coords[i])
                                + k[i] as i128 * i128::from(map.element_strides[i]);
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
