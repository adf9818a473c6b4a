//! `tcrtl workload merge DIR... --out DIR`: the reports of a run's shards (`workload run
//! --shard I/N`) joined into the report of the whole run, which equals the report of the
//! run unsharded but for its timing fields (the `sim_seconds` fields, [`super::report`]). Refused, in
//! one line and with nothing written: a report of another run or of other operand files, an
//! unfinished shard, a shard given twice or missing.

use std::path::PathBuf;

use clap::Args;
use serde_json::Value;

use super::operands;
use super::report::{self, Report};
use crate::cli::shard::{self, Shard};

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
    let (first_path, first_shard, first) = &parts[0];
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
        if let Some((file, theirs, ours)) = operands::changed_file(&r.header, &first.header) {
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
    let held: usize = parts.iter().map(|(_, _, r)| r.records.len()).sum();
    if held as u64 != layers {
        return Err(format!(
            "the {count} shards hold {held} layers but their topology has {layers}"
        ));
    }
    let mut records = Vec::new();
    for (path, shard, r) in &parts {
        // A finished shard holds exactly its own layers.
        let want: Vec<usize> = (0..layers as usize)
            .filter(|&i| shard.owns(i as u64))
            .collect();
        let have: Vec<usize> = r.records.iter().map(|l| l.index).collect();
        if have != want {
            return Err(format!(
                "{}: shard {} of {layers} layers should hold layers {want:?}, it holds {have:?}",
                path.display(),
                shard.text()
            ));
        }
        records.extend(r.records.iter().cloned());
    }
    records.sort_by_key(|r| r.index);
    let mut header = first.header.clone();
    header.insert("shard".into(), Value::String(Shard::WHOLE.text()));
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
