//! `tcrtl tma load`: one TMA load of a box of a tensor from a `.npy` file, through the clocked
//! memory system (`hw::memory::TmaHarness`), printing the shared-memory image.

use std::path::PathBuf;

use super::memory::MemArgs;
use clap::{Args, Subcommand};
use tensorcore_rtl::hw::memory::box_load::{box_load, BoxLoad, BoxSpec, HostTensor};
use tensorcore_rtl::hw::memory::{ElemType, OobFill, Swizzle};
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
    let npy_size = match npy.dtype {
        Dtype::U8 | Dtype::I8 => 1,
        Dtype::U16 | Dtype::I16 | Dtype::F16 => 2,
        Dtype::U32 | Dtype::I32 | Dtype::F32 => 4,
        Dtype::I64 | Dtype::F64 => 8,
    };
    let words: Vec<u64> = npy.iter_words().collect();
    let name = a.tensor.display().to_string();
    let spec = BoxSpec {
        dtype,
        box_dims: a.box_dims.clone(),
        coords: a.coords.clone(),
        gdim: a.gdim.clone(),
        gstride: a.gstride.clone(),
        estride: a.estride.clone(),
        swizzle,
        oob_fill,
        smem_base: a.smem_base,
        smem_fill: 0,
    };
    let tensor = HostTensor {
        shape: &npy.shape,
        words: &words,
        elem_bytes: npy_size,
        dtype_name: npy.dtype.numpy_name(),
        name: &name,
    };
    let trace = a.trace.config();
    let BoxLoad {
        run,
        tx_bytes: tx,
        slots,
        ..
    } = box_load(&spec, &tensor, params, || trace)?;
    let es = dtype.size() as usize;
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
