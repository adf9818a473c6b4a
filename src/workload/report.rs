//! The report of a workload run (and of a merge of its shards): one [`LayerRecord`] per
//! finished layer, the values of each row of `layers.csv` ([`csv_cells`]), the `summary.json`
//! object ([`summary_json`]), and a report read back from its `summary.json` (to continue an
//! interrupted run, or to merge shards), so that a report put together from parts is built by
//! the very code that builds a run's. Writing the files is the caller's (`tcrtl workload`).
//!
//! **Timing fields** are the only fields that differ between two runs of the same inputs:
//! the `sim_seconds` column of `layers.csv` and the `sim_seconds` keys of `summary.json` (in
//! each layer object and in `totals`), wall-clock seconds. Every other byte of the files
//! is fixed by the topology, the options and the seed (docs/workloads.md, "Timing fields"),
//! `simulated_seconds` (the cycles at the run's clock) and `mapping_efficiency` among them.

use std::path::Path;

use serde_json::{json, Map, Value};

use super::{scalesim_mapping, scalesim_mapping_efficiency};
use crate::dispatch::report;
use crate::energy::EnergyReport;
use crate::gemm::{MemRun, RunLayout};
use crate::hw::memory::MemParams;
use crate::hw::{Dataflow, Traffic};
use crate::rtl::bounded::{read_text_bounded, MAX_TEXT_BYTES};

/// The folder of a row split's parts of D beside a shard's report.
pub const PARTS_DIR: &str = "parts";

/// The file, relative to a shard's report folder, of a row split's rows of layer `index`'s
/// D: `parts/INDEX.d.npy`, uint32 words, the part's rows x N.
pub fn part_file(index: usize) -> String {
    format!("{PARTS_DIR}/{index}.d.npy")
}

/// The summary key that holds the operand files' fingerprints.
pub const FINGERPRINTS: &str = "operand_files";

/// The summary keys that are not part of a run's identity: the layers, what they add up
/// to, and how far the run got.
const RESULT_KEYS: [&str; 4] = ["layers", "totals", "complete", "pending"];

/// FNV-1a (64 bits) of `bytes` as `fnv1a64:` and 16 hex digits (a fingerprint, not a
/// security hash).
pub fn fnv1a64(bytes: impl IntoIterator<Item = u8>) -> String {
    let mut h = Fnv1a64::new();
    h.update(bytes);
    h.text()
}

/// FNV-1a (64 bits), fed in pieces: the same value as [`fnv1a64`] of the pieces joined.
#[derive(Clone, Copy, Debug)]
pub struct Fnv1a64(u64);

impl Fnv1a64 {
    /// The hash of nothing (the offset basis).
    pub fn new() -> Fnv1a64 {
        Fnv1a64(0xcbf2_9ce4_8422_2325)
    }

    /// Feeds `bytes`.
    pub fn update(&mut self, bytes: impl IntoIterator<Item = u8>) {
        for b in bytes {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }

    /// `fnv1a64:` and the 16 hex digits.
    pub fn text(self) -> String {
        format!("fnv1a64:{:016x}", self.0)
    }
}

impl Default for Fnv1a64 {
    fn default() -> Fnv1a64 {
        Fnv1a64::new()
    }
}

/// A file's fingerprint: `{"bytes": SIZE, "digest": "fnv1a64:..."}`, the FNV-1a of its
/// bytes, read in blocks. Errors are one line naming the file.
pub fn file_fingerprint(path: &Path) -> Result<Value, String> {
    use std::io::Read;
    let shown = path.display();
    let mut f = std::fs::File::open(path).map_err(|e| format!("{shown}: {e}"))?;
    let mut h = Fnv1a64::new();
    let mut size: u64 = 0;
    let mut block = vec![0u8; 1 << 16];
    loop {
        let n = match f.read(&mut block) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(format!("{shown}: {e}")),
        };
        h.update(block[..n].iter().copied());
        size += n as u64;
    }
    Ok(json!({"bytes": size, "digest": h.text()}))
}

/// The array a report's utilization, mapping efficiency and chart refer to, and the clock its
/// simulated seconds are counted at.
#[derive(Clone, Debug, PartialEq)]
pub struct Shape {
    /// Rows R.
    pub rows: usize,
    /// Columns C.
    pub cols: usize,
    /// Products per PE step w.
    pub width: usize,
    /// `os` or `ws`.
    pub dataflow: Dataflow,
    /// The clock in GHz (the summary's `clock_ghz`).
    pub clock_ghz: f64,
}

/// Operand-store traffic in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TrafficBytes {
    /// Bytes of A read.
    pub a_read: u64,
    /// Bytes of B read.
    pub b_read: u64,
    /// Bytes of C read.
    pub c_read: u64,
    /// Bytes of D written.
    pub d_write: u64,
}

impl From<&Traffic> for TrafficBytes {
    fn from(t: &Traffic) -> TrafficBytes {
        TrafficBytes {
            a_read: t.a_read_bytes(),
            b_read: t.b_read_bytes(),
            c_read: t.c_read_bytes(),
            d_write: t.d_write_bytes(),
        }
    }
}

/// One finished layer.
#[derive(Clone, Debug, PartialEq)]
pub struct LayerRecord {
    /// Its place in the topology, from 0.
    pub index: usize,
    /// Its name.
    pub name: String,
    /// A convolution's shape (`null` for a GEMM row).
    pub conv: Value,
    /// The GEMM it runs as.
    pub m: usize,
    /// The GEMM it runs as.
    pub n: usize,
    /// The GEMM it runs as.
    pub k: usize,
    /// Its operands' seed.
    pub seed: u64,
    /// The reported cycles (this core's, or SCALE-Sim's with [`super::Timing::ScaleSim`]).
    pub cycles: u64,
    /// Output tiles.
    pub tiles: usize,
    /// `m * n * k / (cycles * R * C * w)`.
    pub utilization: f64,
    /// SCALE-Sim's mapping efficiency of the GEMM on the array (a fraction,
    /// [`mapping_efficiency`]).
    pub mapping_efficiency: f64,
    /// `cycles` at the run's clock, in seconds ([`simulated_seconds`]; not a timing field).
    pub simulated_seconds: f64,
    /// `m * n * k`.
    pub macs: u64,
    /// The reference D was compared with (`none` when not simulated).
    pub reference: String,
    /// Elements of D compared.
    pub checked: usize,
    /// Elements of D (`m * n`; 0 when not simulated).
    pub elements: usize,
    /// Compared elements that differ.
    pub mismatches: usize,
    /// Wall-clock seconds of the simulation (a timing field).
    pub sim_seconds: f64,
    /// The formulas' cycles.
    pub analytic_cycles: u64,
    /// The formulas' traffic.
    pub analytic_traffic: TrafficBytes,
    /// Whether the measured cycles and traffic equal the formulas'.
    pub agrees: bool,
    /// This core's cycles.
    pub model_cycles: u64,
    /// SCALE-Sim's compute cycles.
    pub scalesim_cycles: u64,
    /// The operand-store traffic the run counted (the formulas' when not simulated; `None`
    /// through the TMA memory path, where no operand store serves the core).
    pub traffic: Option<TrafficBytes>,
    /// FNV-1a (64 bits) of D, its 32-bit words little-endian in row-major order, as
    /// `fnv1a64:` and 16 hex digits (`None` when not simulated): what the layer computed,
    /// in a form two runs and `tcrtl gemm --out D.npy` can be compared by.
    pub d_digest: Option<String>,
    /// With an energy estimate: the estimate's JSON object ([`energy_object`], (`tcrtl gemm --energy --json`'s
    /// `energy`; a report written before the weight-stationary core had an estimate may
    /// hold the text `not estimated`); `None` without it.
    pub energy: Option<Value>,
    /// Through the TMA path: the memory path's object ([`memory_object`], `tcrtl gemm --memory tma --json`'s
    /// `memory`: bytes loaded from and stored to global memory, bytes landed in shared
    /// memory, stall cycles, ...); `None` on the ideal path.
    pub memory: Option<Value>,
    /// In a shard of a row split ([`super::Split::Rows`]): which rows of the layer this record is
    /// (the other fields are the part's own run), the file of its rows of D, and the whole
    /// layer's record from the formulas, for `merge` (`docs/workloads.md`); `None` otherwise.
    pub part: Option<Value>,
}

impl LayerRecord {
    /// Whether every element of D was compared.
    pub fn complete_check(&self) -> bool {
        self.checked == self.elements
    }
}

/// A report: the run's identity (every summary key but the results), its array, the
/// finished layers in topology order and the layers still to run.
#[derive(Clone, Debug, PartialEq)]
pub struct Report {
    /// The summary's keys that say which run this is (topology, core, options, seed,
    /// shard).
    pub header: Map<String, Value>,
    /// The array.
    pub shape: Shape,
    /// Finished layers, by index.
    pub records: Vec<LayerRecord>,
    /// Layers of this run (its shard) not finished: (index, name).
    pub pending: Vec<(usize, String)>,
}

/// `macs / (cycles * R * C * w)`.
pub fn utilization(macs: u64, cycles: u64, shape: &Shape) -> f64 {
    let offered = cycles as f64 * (shape.rows * shape.cols * shape.width) as f64;
    if offered > 0.0 {
        macs as f64 / offered
    } else {
        0.0
    }
}

/// SCALE-Sim's mapping efficiency of an `m x n x k` GEMM on `shape`'s array, a fraction:
/// each fold's mapped PEs over `R * C`, averaged over the folds (os folds `M x N` onto the
/// array, ws `K x N`; `tensorcore_rtl::workload::scalesim_mapping`); 0 without MACs.
pub fn mapping_efficiency(m: usize, n: usize, k: usize, shape: &Shape) -> f64 {
    scalesim_mapping_efficiency(shape.dataflow, (shape.rows, shape.cols), m, n, k)
}

/// The mapping efficiency of `records` together: their mapped PE slots over the slots their
/// folds offer, the average over every fold of every layer (0 without folds).
pub fn total_mapping_efficiency(records: &[LayerRecord], shape: &Shape) -> f64 {
    let (mapped, offered) = records.iter().fold((0u64, 0u64), |(a, b), r| {
        let (m, o) = scalesim_mapping(shape.dataflow, (shape.rows, shape.cols), r.m, r.n, r.k);
        (a + m, b + o)
    });
    if offered == 0 {
        0.0
    } else {
        mapped as f64 / offered as f64
    }
}

/// `cycles` at `shape`'s clock, in seconds: `cycles / (clock_ghz * 1e9)`.
pub fn simulated_seconds(cycles: u64, shape: &Shape) -> f64 {
    cycles as f64 / (shape.clock_ghz * 1e9)
}

/// Total cycles, MACs and wall-clock seconds.
pub fn totals(records: &[LayerRecord]) -> (u64, u64, f64) {
    records.iter().fold((0, 0, 0.0), |(c, m, s), r| {
        (c + r.cycles, m + r.macs, s + r.sim_seconds)
    })
}

/// A CSV field: quoted when it holds a comma or a quote.
fn csv_field(s: &str) -> String {
    if s.contains([',', '"']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// The `memory` object's keys that `layers.csv` of a run through the TMA path has as columns, with
/// the column names.
const MEMORY_COLUMNS: [(&str, &str); 4] = [
    ("bytes_loaded", "gmem_bytes_loaded"),
    ("bytes_stored", "gmem_bytes_stored"),
    ("tx_bytes", "smem_tx_bytes"),
    ("stall_cycles", "stall_cycles"),
];

/// The `memory` object's keys that `layers.csv` of a run through the TMA path has as its last
/// columns (added after the others, so that no column's index moved), with the column names.
const SMEM_COLUMNS: [(&str, &str); 2] = [
    ("smem_read_bytes", "smem_read_bytes"),
    ("smem_write_bytes", "smem_write_bytes"),
];

/// One value of a `layers.csv` row.
#[derive(Clone, Debug, PartialEq)]
pub enum Cell {
    /// A name (quoted in the file when it holds a comma or a quote).
    Text(String),
    /// A count.
    Int(u64),
    /// A real number, written as Rust writes an `f64` (the shortest text that reads back to
    /// it).
    Float(f64),
    /// A value of the layer's `memory` or `energy` object, written as JSON writes it.
    Json(Value),
    /// No value (an operand-store column through the TMA path, a key a layer lacks).
    Empty,
}

impl Cell {
    /// The cell as written in `layers.csv`.
    pub fn csv(&self) -> String {
        match self {
            Cell::Text(s) => csv_field(s),
            Cell::Int(v) => v.to_string(),
            Cell::Float(v) => v.to_string(),
            Cell::Json(v) => v.to_string(),
            Cell::Empty => String::new(),
        }
    }
}

/// The columns of `layers.csv`: those every run has, then with `memory` (a run through the
/// TMA path) `gmem_bytes_loaded`, `gmem_bytes_stored`, `smem_tx_bytes` and `stall_cycles`, with `energy` (a run with an energy
/// estimate) `energy_pj`, then `mapping_efficiency` and `simulated_seconds`, and with
/// `memory` last `smem_read_bytes` and `smem_write_bytes`: each added at the end when it came, so that
/// a column's index never moved.
pub fn csv_columns(memory: bool, energy: bool) -> Vec<&'static str> {
    let mut columns = vec![
        "layer",
        "m",
        "n",
        "k",
        "cycles",
        "tiles",
        "utilization",
        "macs",
        "checked",
        "mismatches",
        "sim_seconds",
        "analytic_cycles",
        "a_read_bytes",
        "b_read_bytes",
        "c_read_bytes",
        "d_write_bytes",
        "model_cycles",
        "scalesim_cycles",
    ];
    if memory {
        columns.extend(MEMORY_COLUMNS.iter().map(|(_, c)| *c));
    }
    if energy {
        columns.push("energy_pj");
    }
    columns.extend(["mapping_efficiency", "simulated_seconds"]);
    if memory {
        columns.extend(SMEM_COLUMNS.iter().map(|(_, c)| *c));
    }
    columns
}

/// Record `r`'s row of `layers.csv`, one cell per column of [`csv_columns`] (same
/// `memory` and `energy`). The operand-store columns are empty through the TMA path.
pub fn csv_cells(r: &LayerRecord, memory: bool, energy: bool) -> Vec<Cell> {
    let bytes =
        |f: fn(&TrafficBytes) -> u64| r.traffic.as_ref().map_or(Cell::Empty, |t| Cell::Int(f(t)));
    let count = |v: usize| Cell::Int(v as u64);
    let mut cells = vec![
        Cell::Text(r.name.clone()),
        count(r.m),
        count(r.n),
        count(r.k),
        Cell::Int(r.cycles),
        count(r.tiles),
        Cell::Float(r.utilization),
        Cell::Int(r.macs),
        count(r.checked),
        count(r.mismatches),
        Cell::Float(r.sim_seconds),
        Cell::Int(r.analytic_cycles),
        bytes(|t| t.a_read),
        bytes(|t| t.b_read),
        bytes(|t| t.c_read),
        bytes(|t| t.d_write),
        Cell::Int(r.model_cycles),
        Cell::Int(r.scalesim_cycles),
    ];
    let memory_cell = |key: &str| {
        r.memory
            .as_ref()
            .and_then(|m| m.get(key))
            .map_or(Cell::Empty, |v| Cell::Json(v.clone()))
    };
    if memory {
        cells.extend(MEMORY_COLUMNS.iter().map(|(key, _)| memory_cell(key)));
    }
    if energy {
        // The total in pJ, or the text of a layer without an estimate.
        cells.push(match &r.energy {
            Some(Value::Object(e)) => e
                .get("total_pj")
                .map_or(Cell::Empty, |v| Cell::Json(v.clone())),
            Some(Value::String(s)) => Cell::Text(s.clone()),
            _ => Cell::Empty,
        });
    }
    cells.extend([
        Cell::Float(r.mapping_efficiency),
        Cell::Float(r.simulated_seconds),
    ]);
    if memory {
        cells.extend(SMEM_COLUMNS.iter().map(|(key, _)| memory_cell(key)));
    }
    cells
}

/// `layers.csv`: the columns of [`csv_columns`], then one row per finished layer in the
/// topology's order ([`csv_cells`]).
pub fn layers_csv(records: &[LayerRecord], memory: bool, energy: bool) -> String {
    let mut csv = csv_columns(memory, energy).join(",");
    csv.push('\n');
    for r in records {
        let row: Vec<String> = csv_cells(r, memory, energy).iter().map(Cell::csv).collect();
        csv.push_str(&row.join(","));
        csv.push('\n');
    }
    csv
}

/// A traffic object in bytes.
fn traffic_json(t: &TrafficBytes) -> Value {
    json!({
        "a_read_bytes": t.a_read, "b_read_bytes": t.b_read,
        "c_read_bytes": t.c_read, "d_write_bytes": t.d_write,
    })
}

/// One layer's object in `summary.json` (`part` only in a row split's shard).
pub fn layer_json(r: &LayerRecord) -> Value {
    let mut l = json!({
        "index": r.index, "layer": r.name, "m": r.m, "n": r.n, "k": r.k, "conv": r.conv,
        "seed": r.seed, "cycles": r.cycles, "tiles": r.tiles, "utilization": r.utilization,
        "mapping_efficiency": r.mapping_efficiency, "simulated_seconds": r.simulated_seconds,
        "macs": r.macs, "reference": r.reference, "checked": r.checked,
        "elements": r.elements, "sampled": !r.complete_check(),
        "mismatches": r.mismatches, "sim_seconds": r.sim_seconds,
        "traffic": r.traffic.as_ref().map(traffic_json), "d_digest": r.d_digest,
        "energy": r.energy, "memory": r.memory,
        "model_cycles": r.model_cycles, "scalesim_cycles": r.scalesim_cycles,
        "analytic": {
            "cycles": r.analytic_cycles, "traffic": traffic_json(&r.analytic_traffic),
            "agrees": r.agrees,
        },
    });
    if let Some(p) = &r.part {
        l["part"] = p.clone();
    }
    l
}

/// `summary.json`: the header, each finished layer, the totals, and whether the run is
/// complete (`pending`: the layers still to run).
pub fn summary_json(report: &Report) -> Value {
    let records = &report.records;
    let (cycles, macs, secs) = totals(records);
    let bad: usize = records.iter().map(|r| r.mismatches).sum();
    let mut s = report.header.clone();
    s.insert(
        "layers".into(),
        Value::Array(records.iter().map(layer_json).collect()),
    );
    s.insert(
        "totals".into(),
        json!({
            "layers": records.len(), "cycles": cycles, "macs": macs,
            "utilization": utilization(macs, cycles, &report.shape), "mismatches": bad,
            "mapping_efficiency": total_mapping_efficiency(records, &report.shape),
            "simulated_seconds": simulated_seconds(cycles, &report.shape),
            "sim_seconds": secs,
        }),
    );
    s.insert("complete".into(), Value::Bool(report.pending.is_empty()));
    s.insert(
        "pending".into(),
        Value::Array(
            report
                .pending
                .iter()
                .map(|(i, name)| json!({"index": i, "layer": name}))
                .collect(),
        ),
    );
    Value::Object(s)
}

/// The run's identity: the summary without its results.
pub fn header_of(summary: &Map<String, Value>) -> Map<String, Value> {
    let mut h = summary.clone();
    for k in RESULT_KEYS {
        h.remove(k);
    }
    h
}

/// The first header key whose value differs between `a` and `b`, with both values (`-` for
/// an absent key).
pub fn first_difference(
    a: &Map<String, Value>,
    b: &Map<String, Value>,
) -> Option<(String, String, String)> {
    let shown = |v: Option<&Value>| v.map_or("-".to_string(), |v| v.to_string());
    a.keys()
        .chain(b.keys())
        .find(|k| a.get(*k) != b.get(*k))
        .map(|k| (k.clone(), shown(a.get(k)), shown(b.get(k))))
}

/// Reads the report in `dir` back from its `summary.json`. Errors are one line naming the
/// file and what is wrong.
pub fn read(dir: &Path) -> Result<Report, String> {
    let path = dir.join("summary.json");
    let shown = path.display();
    let text = read_text_bounded(&path, MAX_TEXT_BYTES, "a workload summary")
        .map_err(|e| format!("{shown}: {e}"))?;
    let value: Value = serde_json::from_str(&text).map_err(|e| format!("{shown}: {e}"))?;
    let bad = |what: &str| format!("{shown}: not a workload report ({what})");
    let summary = value.as_object().ok_or_else(|| bad("not a JSON object"))?;
    let header = header_of(summary);
    for key in ["shard", "topology_digest", "topology_layers", "clock_ghz"] {
        if !header.contains_key(key) {
            return Err(bad(&format!(
                "no {key:?}: written by an older tcrtl, run it again"
            )));
        }
    }
    let core = header.get("core").ok_or_else(|| bad("no \"core\""))?;
    let size = |key: &str| -> Result<usize, String> {
        core.get(key)
            .and_then(Value::as_u64)
            .map(|v| v as usize)
            .ok_or_else(|| bad(&format!("no core.{key}")))
    };
    let shape = Shape {
        rows: size("rows")?,
        cols: size("cols")?,
        width: size("width")?,
        dataflow: core
            .get("dataflow")
            .and_then(Value::as_str)
            .and_then(Dataflow::by_name)
            .ok_or_else(|| bad(&format!("no core.dataflow ({})", Dataflow::choices())))?,
        clock_ghz: header
            .get("clock_ghz")
            .and_then(Value::as_f64)
            .filter(|c| c.is_finite() && *c > 0.0)
            .ok_or_else(|| bad("clock_ghz is not a positive number"))?,
    };
    let layers = summary
        .get("layers")
        .and_then(Value::as_array)
        .ok_or_else(|| bad("no \"layers\" list"))?;
    let records = layers
        .iter()
        .enumerate()
        .map(|(i, l)| layer_from_json(l, &shape).map_err(|e| bad(&format!("layer {i}: {e}"))))
        .collect::<Result<Vec<_>, _>>()?;
    let pending = summary
        .get("pending")
        .and_then(Value::as_array)
        .ok_or_else(|| bad("no \"pending\" list"))?
        .iter()
        .map(|p| {
            Some((
                p.get("index")?.as_u64()? as usize,
                p.get("layer")?.as_str()?.to_string(),
            ))
        })
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| bad("a pending entry without index and layer"))?;
    Ok(Report {
        header,
        shape,
        records,
        pending,
    })
}

/// A layer object of `summary.json` back as a record.
pub fn layer_from_json(l: &Value, shape: &Shape) -> Result<LayerRecord, String> {
    let num = |path: &[&str]| -> Result<u64, String> {
        let mut v = l;
        for p in path {
            v = v.get(p).ok_or_else(|| format!("no {}", path.join(".")))?;
        }
        v.as_u64()
            .ok_or_else(|| format!("{} is not a whole number", path.join(".")))
    };
    let text = |key: &str| -> Result<String, String> {
        l.get(key)
            .and_then(Value::as_str)
            .map(String::from)
            .ok_or_else(|| format!("no {key}"))
    };
    let traffic = |at: &[&str]| -> Result<TrafficBytes, String> {
        let field = |name: &str| {
            let mut path = at.to_vec();
            path.push(name);
            num(&path)
        };
        Ok(TrafficBytes {
            a_read: field("a_read_bytes")?,
            b_read: field("b_read_bytes")?,
            c_read: field("c_read_bytes")?,
            d_write: field("d_write_bytes")?,
        })
    };
    let mut r = LayerRecord {
        index: num(&["index"])? as usize,
        name: text("layer")?,
        conv: l.get("conv").cloned().ok_or("no conv")?,
        m: num(&["m"])? as usize,
        n: num(&["n"])? as usize,
        k: num(&["k"])? as usize,
        seed: num(&["seed"])?,
        cycles: num(&["cycles"])?,
        tiles: num(&["tiles"])? as usize,
        macs: num(&["macs"])?,
        reference: text("reference")?,
        checked: num(&["checked"])? as usize,
        elements: num(&["elements"])? as usize,
        mismatches: num(&["mismatches"])? as usize,
        sim_seconds: l
            .get("sim_seconds")
            .and_then(Value::as_f64)
            .ok_or("no sim_seconds")?,
        analytic_cycles: num(&["analytic", "cycles"])?,
        analytic_traffic: traffic(&["analytic", "traffic"])?,
        agrees: l
            .get("analytic")
            .and_then(|a| a.get("agrees"))
            .and_then(Value::as_bool)
            .ok_or("no analytic.agrees")?,
        model_cycles: num(&["model_cycles"])?,
        scalesim_cycles: num(&["scalesim_cycles"])?,
        traffic: match l.get("traffic") {
            Some(Value::Null) => None,
            _ => Some(traffic(&["traffic"])?),
        },
        memory: match l.get("memory") {
            None | Some(Value::Null) => None,
            Some(m) => Some(m.clone()),
        },
        d_digest: match l.get("d_digest") {
            Some(Value::String(d)) => Some(d.clone()),
            Some(Value::Null) => None,
            _ => return Err("no d_digest".into()),
        },
        energy: match l.get("energy") {
            None | Some(Value::Null) => None,
            Some(e) => Some(e.clone()),
        },
        part: match l.get("part") {
            None | Some(Value::Null) => None,
            Some(p) => Some(p.clone()),
        },
        utilization: 0.0,
        mapping_efficiency: 0.0,
        simulated_seconds: 0.0,
    };
    // Recomputed from the exact counts, as the run computed them.
    r.utilization = utilization(r.macs, r.cycles, shape);
    r.mapping_efficiency = mapping_efficiency(r.m, r.n, r.k, shape);
    r.simulated_seconds = simulated_seconds(r.cycles, shape);
    Ok(r)
}

/// The JSON object of a memory parameter set (the `params` of [`memory_object`] and of the
/// summary's `memory_path`): the GEMM report's ([`report::params_json`]).
pub fn params_object(p: &MemParams) -> Value {
    report::params_json(p)
}

/// A layer's `memory` object, of its run through the TMA path: the GEMM report's memory
/// section in the run's dataflow ([`report::MemoryReport`]), so its keys are those of
/// `tcrtl gemm --memory tma --json`'s `memory` (the output-stationary port's keys on `os`
/// layers only).
pub fn memory_object(r: &MemRun) -> Value {
    let dataflow = match r.layout {
        RunLayout::Ws(_) => Dataflow::Ws,
        _ => Dataflow::Os,
    };
    report::MemoryReport::new(dataflow, Some(r)).to_json()
}

/// A layer's `energy` object: the GEMM report's ([`report::energy_json`]).
pub fn energy_object(e: &EnergyReport) -> Value {
    report::energy_json(e)
}

/// A fingerprint in a message: `fnv1a64:... (N bytes)`, or `absent`.
pub fn fingerprint_text(print: Option<&Value>) -> String {
    match print {
        Some(p) => format!(
            "{} ({} bytes)",
            p.get("digest").and_then(Value::as_str).unwrap_or("?"),
            p.get("bytes").and_then(Value::as_u64).unwrap_or(0)
        ),
        None => "absent".into(),
    }
}

/// The first operand file whose fingerprint differs between two reports' headers `theirs`
/// and `ours` (their [`FINGERPRINTS`]), with both fingerprints as text ([`fingerprint_text`]);
/// `None` when they agree (or neither ran on operand files).
pub fn changed_file(
    theirs: &Map<String, Value>,
    ours: &Map<String, Value>,
) -> Option<(String, String, String)> {
    let empty = Map::new();
    let files = |h: &Map<String, Value>| -> Map<String, Value> {
        h.get(FINGERPRINTS)
            .and_then(Value::as_object)
            .unwrap_or(&empty)
            .clone()
    };
    let (t, o) = (files(theirs), files(ours));
    t.keys()
        .chain(o.keys())
        .find(|f| t.get(*f) != o.get(*f))
        .map(|f| {
            (
                f.clone(),
                fingerprint_text(t.get(f)),
                fingerprint_text(o.get(f)),
            )
        })
}
