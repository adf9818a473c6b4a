//! `tcrtl workload merge DIR... --out DIR`: the reports of a run's shards (`workload run
//! --shard I/N`) joined into the report of the whole run, which equals the report of the
//! run unsharded but for its timing fields (the `sim_seconds` fields, [`super::report`]). The
//! shards of a row split (`--split rows`) each hold a part of every layer; each layer's
//! record is put together from its parts ([`join_parts`]). Refused, in one line and with
//! nothing written: a report of another run or of other operand files, an unfinished shard,
//! a shard given twice or missing, a part whose rows of D are missing or changed.

use std::path::{Path, PathBuf};

use clap::Args;
use serde_json::Value;

use super::report::{self, LayerRecord, Report, Shape};
use crate::cli::shard::{self, Shard};
use tensorcore_rtl::io::npy::{read_npy, Dtype};

/// Arguments of `tcrtl workload merge`.
#[derive(Args, Debug)]
pub struct MergeArgs {
    /// The shards' output directories (each with the summary.json of `workload run --shard`).
    #[arg(required = true, value_name = "DIR")]
    dirs: Vec<PathBuf>,
    /// Output directory (created if missing) for the whole run's layers.csv, summary.json and
    /// layers.svg.
    #[arg(long)]
    out: PathBuf,
    /// Print the merged summary as one JSON object instead of a line.
    #[arg(long)]
    json: bool,
}

/// The shard a report says it is.
fn shard_of(report: &Report, dir: &std::path::Path) -> Result<Shard, String> {
    let text = report.header.get("shard").and_then(Value::as_str);
    text.and_then(shard::parse_fraction).ok_or_else(|| {
        format!(
            "{}: not a shard report (\"shard\" is {})",
            dir.join("summary.json").display(),
            text.unwrap_or("missing")
        )
    })
}

/// Runs `tcrtl workload merge`.
pub fn merge(args: &MergeArgs) -> Result<i32, String> {
    let mut parts: Vec<(PathBuf, Shard, Report)> = Vec::new();
    for dir in &args.dirs {
        let r = report::read(dir)?;
        let shard = shard_of(&r, dir)?;
        let path = dir.join("summary.json");
        if !r.pending.is_empty() {
            return Err(format!(
                "{}: shard {} is unfinished ({} layers pending); finish it with workload run \
                 --resume",
                path.display(),
                shard.text(),
                r.pending.len()
            ));
        }
        parts.push((path, shard, r));
    }
    let (first_path, first_shard, first) = &parts[0].clone();
    // The run's identity is the header but for the shard.
    let identity = |r: &Report| {
        let mut h = r.header.clone();
        h.remove("shard");
        h
    };
    let count = first_shard.count;
    // Which folder holds each shard (a map: a report's N is not trusted with an allocation).
    let mut owner: std::collections::BTreeMap<u64, &PathBuf> = std::collections::BTreeMap::new();
    for (path, shard, r) in &parts {
        if let Some((file, theirs, ours)) = report::changed_file(&r.header, &first.header) {
            return Err(format!(
                "{} was run on other operand files than {}: its {file} is {theirs}, not {ours}",
                path.display(),
                first_path.display()
            ));
        }
        if let Some((key, theirs, ours)) = report::first_difference(&identity(r), &identity(first))
        {
            return Err(format!(
                "{} is a report of another run than {}: its {key} is {theirs}, not {ours}",
                path.display(),
                first_path.display()
            ));
        }
        if shard.count != count {
            return Err(format!(
                "{} is shard {} and {} is shard {}: not shards of one split",
                path.display(),
                shard.text(),
                first_path.display(),
                first_shard.text()
            ));
        }
        if let Some(other) = owner.insert(shard.index, path) {
            return Err(format!(
                "{} and {} are both shard {}",
                other.display(),
                path.display(),
                shard.text()
            ));
        }
    }
    if let Some(missing) = (0..count).find(|i| !owner.contains_key(i)) {
        return Err(format!(
            "shard {missing}/{count} is missing ({} of {count} shards given)",
            parts.len()
        ));
    }
    let layers = first
        .header
        .get("topology_layers")
        .and_then(Value::as_u64)
        .ok_or_else(|| format!("{}: no topology_layers", first_path.display()))?;
    // A row split's shards each hold a part of every layer.
    let rows_split = first.header.get("split").and_then(Value::as_str) == Some("rows");
    let held: usize = parts.iter().map(|(_, _, r)| r.records.len()).sum();
    let want_held = if rows_split {
        layers.saturating_mul(count)
    } else {
        layers
    };
    if held as u64 != want_held {
        return Err(format!(
            "the {count} shards hold {held} layers{} but their topology has {layers}",
            if rows_split { " (parts)" } else { "" }
        ));
    }
    let mut records = Vec::new();
    for (path, shard, r) in &parts {
        // A finished shard holds exactly its own layers.
        let want: Vec<usize> = (0..layers as usize)
            .filter(|&i| rows_split || shard.owns(i as u64))
            .collect();
        let have: Vec<usize> = r.records.iter().map(|l| l.index).collect();
        if have != want {
            return Err(format!(
                "{}: shard {} of {layers} layers should hold layers {want:?}, it holds {have:?}",
                path.display(),
                shard.text()
            ));
        }
        if !rows_split {
            records.extend(r.records.iter().cloned());
        }
    }
    if rows_split {
        parts.sort_by_key(|(_, shard, _)| shard.index);
        for i in 0..layers as usize {
            records.push(join_parts(&parts, i, &first.shape)?);
        }
    }
    records.sort_by_key(|r| r.index);
    let mut header = first.header.clone();
    header.insert("shard".into(), Value::String(Shard::WHOLE.text()));
    header.remove("split");
    let merged = Report {
        header,
        shape: first.shape.clone(),
        records,
        pending: Vec::new(),
    };
    // The outputs, checked before anything is written.
    report::plan_out(&args.out)?;
    report::write(&args.out, &merged)?;
    let bad: usize = merged.records.iter().map(|r| r.mismatches).sum();
    if args.json {
        outln!("{}", report::summary_json(&merged));
    } else {
        let (cycles, macs, _) = report::totals(&merged.records);
        outln!(
            "merged {count} shards: {} layers, {cycles} cycles, {macs} MACs, {bad} mismatches; \
             written: {}, {}, {}",
            merged.records.len(),
            args.out.join("layers.csv").display(),
            args.out.join("summary.json").display(),
            args.out.join("layers.svg").display()
        );
    }
    Ok(if bad == 0 { 0 } else { 1 })
}

/// Layer `i`'s record from the parts the shards of a row split hold (`parts` in shard
/// order): the whole layer's record from the formulas (shard 0's `part.layer`, which every
/// part with rows must repeat), the parts' checks and wall-clock seconds added up, and the
/// digest of D taken over the parts' rows of D (`parts/INDEX.d.npy` beside each report) put
/// back in the layer's row order. Errors are one line naming the file.
fn join_parts(
    parts: &[(PathBuf, Shard, Report)],
    i: usize,
    shape: &Shape,
) -> Result<LayerRecord, String> {
    let count = parts.len();
    let mut pieces = Vec::with_capacity(count);
    for (path, shard, r) in parts {
        let rec = r
            .records
            .iter()
            .find(|l| l.index == i)
            .ok_or_else(|| format!("{}: no part of layer {i}", path.display()))?;
        let part = rec.part.as_ref().ok_or_else(|| {
            format!(
                "{}: layer {i} ({}) is not a part of a row split",
                path.display(),
                rec.name
            )
        })?;
        pieces.push((path, *shard, rec, part));
    }
    let (path0, _, _, part0) = pieces[0];
    let bad = |path: &PathBuf, what: &str| format!("{}: layer {i}'s part {what}", path.display());
    let whole_json = part0
        .get("layer")
        .ok_or_else(|| bad(path0, "has no \"layer\""))?;
    let mut whole = report::layer_from_json(whole_json, shape)
        .map_err(|e| bad(path0, &format!("holds no whole layer ({e})")))?;
    let unit = part0
        .get("unit_rows")
        .and_then(Value::as_u64)
        .filter(|&u| u > 0)
        .ok_or_else(|| bad(path0, "has no unit_rows"))? as usize;
    let (m, n) = (whole.m, whole.n);
    // The parts are parts of this layer and their rows add up to its M (checked before any
    // loop over its tile rows).
    let total = pieces
        .iter()
        .fold(0usize, |t, (_, _, rec, _)| t.saturating_add(rec.m));
    for (path, _, rec, _) in &pieces {
        if (rec.name.as_str(), rec.n, rec.k) != (whole.name.as_str(), n, whole.k)
            || whole.index != i
            || total != m
        {
            return Err(bad(
                path,
                &format!(
                    "is not a part of {} ({m} x {n} x {}): {} x {} x {} of {} ({total} rows in all)",
                    whole.name, whole.k, rec.m, rec.n, rec.k, rec.name
                ),
            ));
        }
    }
    let mut agrees = true;
    let mut d_parts: Vec<Vec<u32>> = Vec::with_capacity(count);
    for (path, shard, rec, part) in &pieces {
        let rows = shard_rows(m, unit, *shard);
        if part.get("unit_rows").and_then(Value::as_u64) != Some(unit as u64) || rec.m != rows {
            return Err(bad(
                path,
                &format!(
                    "holds {} rows; shard {} of tile rows of {unit} of {m} rows has {rows}",
                    rec.m,
                    shard.text()
                ),
            ));
        }
        if rows == 0 {
            d_parts.push(Vec::new());
            continue;
        }
        if part.get("layer") != Some(whole_json) {
            return Err(bad(path, "names another whole layer than shard 0's"));
        }
        agrees &= rec.agrees;
        whole.checked = whole.checked.saturating_add(rec.checked);
        whole.mismatches = whole.mismatches.saturating_add(rec.mismatches);
        whole.sim_seconds += rec.sim_seconds;
        let dir = path.parent().unwrap_or(Path::new("."));
        let file = dir.join(report::part_file(i));
        let arr = read_npy(&file).map_err(|e| e.to_string())?;
        if arr.dtype != Dtype::U32 || arr.shape != [rows, n] {
            return Err(format!(
                "{}: not the {rows} x {n} uint32 rows of D of layer {i}'s part",
                file.display()
            ));
        }
        let words: Vec<u32> = arr.iter_words().map(|w| w as u32).collect();
        let digest = report::fnv1a64(words.iter().flat_map(|w| w.to_le_bytes()));
        if rec.d_digest.as_deref() != Some(digest.as_str()) {
            return Err(format!(
                "{}: its digest {digest} is not the part's d_digest in {} ({})",
                file.display(),
                path.display(),
                rec.d_digest.as_deref().unwrap_or("null")
            ));
        }
        d_parts.push(words);
    }
    // D's rows in the layer's order: tile row t is the (t / N)-th of shard t mod N's.
    let mut h = report::Fnv1a64::new();
    for t in 0..m.div_ceil(unit) {
        let rows = ((t + 1) * unit).min(m) - t * unit;
        let at = (t / count) * unit * n;
        let words = &d_parts[t % count][at..at + rows * n];
        h.update(words.iter().flat_map(|w| w.to_le_bytes()));
    }
    whole.d_digest = Some(h.text());
    whole.agrees = agrees;
    Ok(whole)
}

/// The rows of an `m`-row layer that `shard` holds in a row split into tile rows of `unit`
/// rows (a closed form: a report's M is not trusted with a loop over its tile rows).
fn shard_rows(m: usize, unit: usize, shard: Shard) -> usize {
    let (m, unit) = (m as u128, unit as u128);
    let tiles = m.div_ceil(unit);
    let count = u128::from(shard.count);
    let index = u128::from(shard.index);
    let owned = tiles / count + u128::from(index < tiles % count);
    let mut rows = owned * unit;
    // The last tile row may be short.
    if tiles > 0 && (tiles - 1) % count == index {
        rows -= tiles * unit - m;
    }
    usize::try_from(rows).unwrap_or(usize::MAX)
}
