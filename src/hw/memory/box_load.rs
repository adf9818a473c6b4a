//! One TMA load of a box of a tensor held in host memory, through the clocked memory system
//! ([`run_loads_over`]): the tensor map built from the box, the coordinates and the tensor's shape
//! (or explicit global dimensions and strides), checked, run, and the shared-memory image read
//! back. The command line's `tcrtl tma load` and the Python package's `tma_load` both call
//! [`box_load`], so they refuse the same mistakes with the same messages.

use super::{
    run_loads_over, ElemType, HarnessLoad, Interleave, LoadRun, MapMode, MemParams, OobFill,
    Swizzle, TensorMap,
};
use crate::rtl::TraceConfig;

/// The tensor a box is loaded from: its shape (numpy order, last axis fastest), its elements
/// as little-endian words, the byte size of one element, and how errors name it.
pub struct HostTensor<'a> {
    /// The shape, outermost axis first.
    pub shape: &'a [usize],
    /// The elements, row-major, each in the low bytes of a word.
    pub words: &'a [u64],
    /// Bytes per element of the source (1, 2, 4 or 8).
    pub elem_bytes: usize,
    /// The source's dtype name (`uint16`, `float32`, ...), for errors.
    pub dtype_name: &'a str,
    /// What the source is called in errors (a file name).
    pub name: &'a str,
}

/// What to load: the tensor map's fields as the command line's options give them.
#[derive(Clone, Debug)]
pub struct BoxSpec {
    /// Element type of the map.
    pub dtype: ElemType,
    /// Box size per dimension, innermost first (rank 1..=5).
    pub box_dims: Vec<u32>,
    /// Box start per dimension, innermost first (negative: out of bounds).
    pub coords: Vec<i32>,
    /// Global dimensions, innermost first (default: the tensor's shape reversed).
    pub gdim: Option<Vec<u64>>,
    /// Global strides of dimensions 1.. in bytes (default: packed).
    pub gstride: Option<Vec<u64>>,
    /// Element strides per dimension (default 1).
    pub estride: Option<Vec<u32>>,
    /// Shared-memory swizzle.
    pub swizzle: Swizzle,
    /// Out-of-bounds fill.
    pub oob_fill: OobFill,
    /// Shared-memory byte address of the box.
    pub smem_base: u32,
    /// Every byte of shared memory before the load (0, the reset contents, normally; another
    /// value shows which bytes the load wrote).
    pub smem_fill: u8,
}

/// A finished box load.
pub struct BoxLoad {
    /// The memory system's counters and cycles.
    pub run: LoadRun,
    /// The tensor map.
    pub map: TensorMap,
    /// Bytes the box moved.
    pub tx_bytes: u64,
    /// Shared memory from `smem_base` to the end of the last 128-byte row the box touched
    /// (its rows padded to the swizzle's span, [`TensorMap::smem_box_bytes`]), one
    /// element-sized slot a word.
    pub slots: Vec<u64>,
}

/// Builds the tensor map of `spec` over `tensor`, checks it, runs the load with `params` and
/// reads the shared-memory image back. `trace` gives the waveform to write, if any; it is
/// asked for after every check of the map, so its own errors come last.
pub fn box_load(
    spec: &BoxSpec,
    tensor: &HostTensor<'_>,
    params: MemParams,
    trace: impl FnOnce() -> Result<Option<TraceConfig>, String>,
) -> Result<BoxLoad, String> {
    let dtype = spec.dtype;
    let es = dtype.size() as usize;
    if tensor.elem_bytes != es {
        return Err(format!(
            "--tensor holds {} ({}-byte elements) but --dtype {} has {es}-byte elements",
            tensor.dtype_name,
            tensor.elem_bytes,
            dtype.name()
        ));
    }
    let rank = spec.box_dims.len();
    if !(1..=5).contains(&rank) {
        return Err(format!(
            "--box has {rank} dimensions (tensor map rank must be 1..=5)"
        ));
    }
    if spec.coords.len() != rank {
        return Err(format!(
            "--coords has {} values, --box {rank}",
            spec.coords.len()
        ));
    }
    let shape_rev: Vec<u64> = tensor.shape.iter().rev().map(|&d| d as u64).collect();
    let gdim = spec.gdim.clone().unwrap_or_else(|| shape_rev.clone());
    if gdim.len() != rank {
        return Err(format!(
            "the global dimensions ({} from {}) do not match the box rank {rank}",
            gdim.len(),
            if spec.gdim.is_some() {
                "--gdim"
            } else {
                "the .npy shape"
            }
        ));
    }
    let gstride = match &spec.gstride {
        Some(s) => s.clone(),
        None => {
            let mut v = Vec::new();
            let mut st = es as u64;
            for &d in shape_rev.iter().take(rank.saturating_sub(1)) {
                st *= d;
                v.push(st);
            }
            v
        }
    };
    if gstride.len() + 1 != rank {
        return Err(format!(
            "--gstride needs {} values (dimensions 1..{rank}), got {}",
            rank - 1,
            gstride.len()
        ));
    }
    let estride = spec.estride.clone().unwrap_or_else(|| vec![1; rank]);
    if estride.len() != rank {
        return Err(format!(
            "--estride has {} values, --box {rank}",
            estride.len()
        ));
    }
    let mut map = TensorMap {
        dtype,
        rank: rank as u32,
        global_address: 0,
        global_dims: [1; 5],
        global_strides: [0; 4],
        box_dims: [1; 5],
        element_strides: [1; 5],
        interleave: Interleave::None,
        swizzle: spec.swizzle,
        oob_fill: spec.oob_fill,
        mode: MapMode::Tiled,
    };
    let mut coords = [0i32; 5];
    for i in 0..rank {
        map.global_dims[i] = gdim[i];
        map.box_dims[i] = spec.box_dims[i];
        map.element_strides[i] = estride[i];
        coords[i] = spec.coords[i];
        if i > 0 {
            map.global_strides[i - 1] = gstride[i - 1];
        }
    }
    map.validate().map_err(|e| e.to_string())?;
    if !map.inner_coord_aligned(coords[0]) {
        return Err(format!(
            "--coords: inner coordinate {} starts the box {} bytes in, not at a multiple of 16 \
             bytes (a GPU stops the kernel with an illegal-instruction error)",
            coords[0],
            i64::from(coords[0]) * es as i64
        ));
    }
    let mut image = Vec::with_capacity(tensor.words.len() * es);
    for w in tensor.words {
        image.extend_from_slice(&w.to_le_bytes()[..es]);
    }
    let end = map.global_end();
    if end > image.len() as u64 {
        return Err(format!(
            "the tensor's extent ({end} bytes from --gdim/--gstride) reads past the {} bytes of {}",
            image.len(),
            tensor.name
        ));
    }
    let load = HarnessLoad {
        desc: 0,
        coords,
        smem_addr: spec.smem_base,
    };
    let trace = trace()?;
    let gmem_bytes = (image.len() as u64).div_ceil(16) * 16 + 16;
    let (run, top) = run_loads_over(
        params,
        gmem_bytes,
        &image,
        spec.smem_fill,
        &[map],
        &[load],
        trace.as_ref(),
    )
    .map_err(|e| e.to_string())?;
    let tx_bytes = map.box_bytes();
    let base = u64::from(spec.smem_base);
    let end_row = (base + map.smem_box_bytes()).div_ceil(128) * 128;
    let bytes = top
        .mem()
        .smem_host_read(spec.smem_base, (end_row - base) as usize);
    let slots = bytes
        .chunks(es)
        .map(|c| {
            let mut w = [0u8; 8];
            w[..c.len()].copy_from_slice(c);
            u64::from_le_bytes(w)
        })
        .collect();
    Ok(BoxLoad {
        run,
        map,
        tx_bytes,
        slots,
    })
}
