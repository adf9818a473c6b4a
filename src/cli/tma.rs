//! `tcrtl tma load`: one TMA load of a box of a tensor from a `.npy` file, through the clocked
//! memory system (`hw::memory::TmaHarness`), printing the shared-memory image.

use std::path::PathBuf;

use super::memory::MemArgs;
use clap::{Args, Subcommand};
use tensorcore_rtl::hw::memory::{
    run_loads, ElemType, HarnessLoad, Interleave, MapMode, OobFill, Swizzle, TensorMap,
};
use tensorcore_rtl::io::npy::{read_npy, Dtype};
use tensorcore_rtl::io::OutputPlan;

/// Arguments of `tcrtl tma`.
#[derive(Args, Debug)]
pub struct TmaArgs {
    #[command(subcommand)]
    command: TmaCommand,
}

#[derive(Subcommand, Debug)]
enum TmaCommand {
    /// One load of a box into shared memory (prints the shared-memory image).
    Load(LoadArgs),
}

#[derive(Args, Debug)]
struct LoadArgs {
    /// The tensor: a .npy file of raw bits or values of the element size.
    #[arg(long)]
    tensor: PathBuf,
    /// Element type: u8, u16, u32, e4m3, e5m2, fp16, bf16, fp32, tf32.
    #[arg(long)]
    dtype: String,
    /// Box dimensions, dimension 0 (fastest, the last numpy axis) first.
    #[arg(long = "box", value_delimiter = ',', required = true)]
    box_dims: Vec<u32>,
    /// Signed box coordinates, dimension 0 first.
    #[arg(
        long,
        value_delimiter = ',',
        required = true,
        allow_hyphen_values = true
    )]
    coords: Vec<i32>,
    /// Global dimensions (default: the .npy shape reversed).
    #[arg(long, value_delimiter = ',')]
    gdim: Option<Vec<u64>>,
    /// Global strides in bytes of dimensions 1.. (default: dense strides of the .npy shape).
    #[arg(long, value_delimiter = ',')]
    gstride: Option<Vec<u64>>,
    /// Element strides (default 1 each).
    #[arg(long, value_delimiter = ',')]
    estride: Option<Vec<u32>>,
    /// Swizzle: none, 32B, 64B, 128B (the 128B_ATOM modes are refused).
    #[arg(long, default_value = "none")]
    swizzle: String,
    /// Out-of-bounds fill: zero or nan.
    #[arg(long, default_value = "zero")]
    oob: String,
    /// Shared-memory destination byte address (128-byte aligned).
    #[arg(long, default_value_t = 0)]
    smem_base: u32,
    #[command(flatten)]
    trace: super::values::TraceArgs,
    #[command(flatten)]
    mem: MemArgs,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

/// Runs `tcrtl tma`.
pub fn run(args: &TmaArgs) -> Result<i32, String> {
    match &args.command {
        TmaCommand::Load(a) => load(a),
    }
}

fn load(a: &LoadArgs) -> Result<i32, String> {
    let mut plan = OutputPlan::new();
    a.trace.plan(&mut plan)?;
    let dtype = ElemType::parse(&a.dtype).ok_or_else(|| {
        format!(
            "--dtype {}: expected one of u8, u16, u32, e4m3, e5m2, fp16, bf16, fp32, tf32",
            a.dtype
        )
    })?;
    let swizzle = Swizzle::parse(&a.swizzle)
        .ok_or_else(|| format!("--swizzle {}: expected none, 32B, 64B or 128B", a.swizzle))?;
    let oob_fill = match a.oob.as_str() {
        "zero" => OobFill::Zero,
        "nan" => OobFill::Nan,
        other => return Err(format!("--oob {other}: expected zero or nan")),
    };
    let params = a.mem.params()?;
    let npy = read_npy(&a.tensor).map_err(|e| e.to_string())?;
    let es = dtype.size() as usize;
    let npy_size = match npy.dtype {
        Dtype::U8 | Dtype::I8 => 1,
        Dtype::U16 | Dtype::F16 => 2,
        Dtype::U32 | Dtype::I32 | Dtype::F32 => 4,
        Dtype::F64 => 8,
    };
    if npy_size != es {
        return Err(format!(
            "--tensor holds {} ({npy_size}-byte elements) but --dtype {} has {es}-byte elements",
            npy.dtype.numpy_name(),
            dtype.name()
        ));
    }
    let rank = a.box_dims.len();
    if !(1..=5).contains(&rank) {
        return Err(format!(
            "--box has {rank} dimensions (tensor map rank must be 1..=5)"
        ));
    }
    if a.coords.len() != rank {
        return Err(format!(
            "--coords has {} values, --box {rank}",
            a.coords.len()
        ));
    }
    let shape_rev: Vec<u64> = npy.shape.iter().rev().map(|&d| d as u64).collect();
    let gdim = a.gdim.clone().unwrap_or_else(|| shape_rev.clone());
    if gdim.len() != rank {
        return Err(format!(
            "the global dimensions ({} from {}) do not match the box rank {rank}",
            gdim.len(),
            if a.gdim.is_some() {
                "--gdim"
            } else {
                "the .npy shape"
            }
        ));
    }
    let gstride = match &a.gstride {
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
    let estride = a.estride.clone().unwrap_or_else(|| vec![1; rank]);
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
        swizzle,
        oob_fill,
        mode: MapMode::Tiled,
    };
    let mut coords = [0i32; 5];
    for i in 0..rank {
        map.global_dims[i] = gdim[i];
        map.box_dims[i] = a.box_dims[i];
        map.element_strides[i] = estride[i];
        coords[i] = a.coords[i];
        if i > 0 {
            map.global_strides[i - 1] = gstride[i - 1];
        }
    }
    map.validate().map_err(|e| e.to_string())?;
    let mut image = Vec::with_capacity(npy.len() * es);
    for w in npy.iter_words() {
        image.extend_from_slice(&w.to_le_bytes()[..es]);
    }
    let end = map.global_end();
    if end > image.len() as u64 {
        return Err(format!(
            "the tensor's extent ({end} bytes from --gdim/--gstride) reads past the {} bytes of {}",
            image.len(),
            a.tensor.display()
        ));
    }
    let load = HarnessLoad {
        desc: 0,
        coords,
        smem_addr: a.smem_base,
    };
    let trace = a.trace.config()?;
    let gmem_bytes = (image.len() as u64).div_ceil(16) * 16 + 16;
    let (run, top) = run_loads(params, gmem_bytes, &image, &[map], &[load], trace.as_ref())
        .map_err(|e| e.to_string())?;
    let tx = map.box_bytes();
    let end_row = (u64::from(a.smem_base) + tx).div_ceil(128) * 128;
    let bytes = top
        .mem()
        .smem_host_read(a.smem_base, (end_row - u64::from(a.smem_base)) as usize);
    let slots: Vec<u64> = bytes
        .chunks(es)
        .map(|c| {
            let mut w = [0u8; 8];
            w[..c.len()].copy_from_slice(c);
            u64::from_le_bytes(w)
        })
        .collect();
    if a.json {
        let obj = serde_json::json!({
            "tx_bytes": tx,
            "smem_base": a.smem_base,
            "oob_elements": run.counters.oob_elements,
            "cycles": run.cycles,
            "bank_conflicts": run.counters.bank_conflicts,
            "requests": run.counters.requests,
            "bytes_loaded": run.counters.bytes_loaded,
            "dtype": dtype.name(),
            "swizzle": swizzle.name(),
            "memory": {
                "latency": params.latency,
                "bytes_per_cycle": params.bytes_per_cycle,
                "request_bytes": params.request_bytes,
                "requests_in_flight": params.requests_in_flight,
                "smem_bytes": params.smem_bytes,
            },
        });
        // The summary first and the shared-memory words (thousands of them) last, so that
        // `tx_bytes` and the counters are not buried after the array: the summary's keys in
        // their usual (sorted) order, then `smem`.
        let summary = obj.to_string();
        let smem = serde_json::to_string(&slots).map_err(|e| e.to_string())?;
        outln!(
            "{},\"smem\":{smem}}}",
            summary.strip_suffix('}').unwrap_or(&summary)
        );
    } else {
        outln!(
            "loaded {tx} bytes ({} out of bounds elements) in {} cycles, {} requests, {} bank conflicts",
            run.counters.oob_elements, run.cycles, run.counters.requests, run.counters.bank_conflicts
        );
        let per_row = (128 / es).max(1);
        for (r, row) in slots.chunks(per_row).enumerate() {
            let cells: Vec<String> = row
                .iter()
                .map(|v| format!("{v:0w$x}", w = es * 2))
                .collect();
            outln!(
                "{:#07x}: {}",
                u64::from(a.smem_base) + (r * 128) as u64,
                cells.join(" ")
            );
        }
    }
    Ok(0)
}
