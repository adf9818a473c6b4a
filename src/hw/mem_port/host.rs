//! The host's side of the port and the byte-level codecs the roles share: filling global
//! memory before a launch, reading D back, and turning little-endian bytes from shared memory
//! into lanes and words.

use crate::hw::memory::{MemParams, MemorySystem, TensorMap};
use crate::hw::pe::set_lane;
use crate::hw::HwError;
use crate::rtl::Wide;

/// A memory system of `gmem_bytes` bytes of global memory and `mbars` mbarriers with the
/// descriptors `maps` set (slots `0..`), as a port builds it before the host fills it.
pub(crate) fn memory_system(
    params: MemParams,
    gmem_bytes: u64,
    mbars: usize,
    maps: Vec<TensorMap>,
) -> Result<MemorySystem, HwError> {
    let mut mem = MemorySystem::new(params, gmem_bytes, mbars)
        .map_err(|e| HwError::Unsupported(format!("memory system: {e}")))?;
    for (i, map) in maps.into_iter().enumerate() {
        mem.set_descriptor(i, map)
            .map_err(|e| HwError::Unsupported(format!("descriptor {i}: {e}")))?;
    }
    Ok(mem)
}

/// Where a `bits`-bit pattern sits in its `es`-byte container: at the top (TF32 is an FP32
/// word whose low 13 bits are zero); 0 when the pattern fills the container.
pub(crate) fn container_shift(es: u32, bits: u32) -> u32 {
    8 * es - bits
}

/// `lanes` elements of `es` bytes (little-endian) from `data`, as lanes of `bits` bits.
pub(crate) fn lanes_of<const W: usize>(data: &[u8], es: u32, bits: u32, lanes: usize) -> Wide<W> {
    let shift = container_shift(es, bits);
    let es = es as usize;
    let mut words = Wide::<W>::ZERO;
    for l in 0..lanes {
        set_lane(
            &mut words,
            l,
            bits,
            le_word(&data[l * es..(l + 1) * es]) >> shift,
        );
    }
    words
}

/// Up to eight bytes as a little-endian word.
pub(crate) fn le_word(bytes: &[u8]) -> u64 {
    match *bytes {
        // The element sizes of the operand formats, read as one load each.
        [b0] => u64::from(b0),
        [b0, b1] => u64::from(u16::from_le_bytes([b0, b1])),
        [b0, b1, b2, b3] => u64::from(u32::from_le_bytes([b0, b1, b2, b3])),
        _ => bytes
            .iter()
            .rev()
            .fold(0u64, |acc, &x| (acc << 8) | u64::from(x)),
    }
}

/// Up to sixteen bytes as a little-endian word.
pub(crate) fn le_u128(bytes: &[u8]) -> u128 {
    bytes
        .iter()
        .rev()
        .fold(0u128, |acc, &x| (acc << 8) | u128::from(x))
}

/// Writes `rows` rows of `cols` elements of `es` bytes (element `(r, x)` from `at`) into
/// global memory at `region` (address, row pitch), as the host does before a launch.
pub(crate) fn host_rows(
    mem: &mut MemorySystem,
    region: (u64, u64),
    es: u32,
    rows: usize,
    cols: usize,
    at: impl Fn(usize, usize) -> u64,
) {
    let mut row = Vec::with_capacity(cols * es as usize);
    for r in 0..rows {
        row.clear();
        for x in 0..cols {
            row.extend_from_slice(&at(r, x).to_le_bytes()[..es as usize]);
        }
        mem.host_write(region.0 + r as u64 * region.1, &row);
    }
}
