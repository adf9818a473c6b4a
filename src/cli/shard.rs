//! `--shard`: which part of a run one process does, for `tcrtl verify sweep` and `tcrtl
//! workload run`. `I/N` (0 <= I < N) names it outright; `slurm` takes it from the
//! environment of a Slurm array task (docs/workloads.md, "Sharding"): `I` is
//! `SLURM_ARRAY_TASK_ID` minus `SLURM_ARRAY_TASK_MIN` (0 when unset) and `N` is
//! `SLURM_ARRAY_TASK_COUNT`, so `sbatch --array=0-7` (or `1-8`) makes the shards 0/8 to 7/8.

/// The Slurm variables `--shard slurm` reads.
const TASK_ID: &str = "SLURM_ARRAY_TASK_ID";
const TASK_MIN: &str = "SLURM_ARRAY_TASK_MIN";
const TASK_COUNT: &str = "SLURM_ARRAY_TASK_COUNT";

pub use tensorcore_rtl::workload::Shard;

/// Parses `--shard TEXT`: `I/N`, or `slurm` (the array task's variables, see the module
/// documentation). Errors are one line naming what is wrong.
pub fn parse(text: &str) -> Result<Shard, String> {
    if text.trim().eq_ignore_ascii_case("slurm") {
        return from_slurm(|name| std::env::var(name).ok());
    }
    parse_fraction(text)
        .ok_or_else(|| format!("--shard {text:?}: expected I/N with 0 <= I < N, or slurm"))
}

/// `I/N` with `0 <= I < N`, or `None`.
pub fn parse_fraction(text: &str) -> Option<Shard> {
    let (i, n) = text.split_once('/')?;
    let (index, count): (u64, u64) = (i.trim().parse().ok()?, n.trim().parse().ok()?);
    (count > 0 && index < count).then_some(Shard { index, count })
}

/// The shard of a Slurm array task, its variables read through `var`.
fn from_slurm(var: impl Fn(&str) -> Option<String>) -> Result<Shard, String> {
    let number = |name: &str, required: bool| -> Result<Option<u64>, String> {
        match var(name) {
            Some(v) => v
                .trim()
                .parse()
                .map(Some)
                .map_err(|_| format!("--shard slurm: {name}={v:?} is not a whole number")),
            None if required => Err(format!(
                "--shard slurm: {name} is not set (run it as a task of `sbatch --array=0-N-1`)"
            )),
            None => Ok(None),
        }
    };
    let id = number(TASK_ID, true)?.unwrap_or(0);
    let count = number(TASK_COUNT, true)?.unwrap_or(0);
    let min = number(TASK_MIN, false)?.unwrap_or(0);
    let index = id.checked_sub(min).filter(|&i| i < count).ok_or_else(|| {
        format!(
            "--shard slurm: task {id} of {count} (minimum {min}) is not a shard I/N with 0 <= I < N \
             (give the array as consecutive ids, e.g. --array=0-{})",
            count.saturating_sub(1)
        )
    })?;
    Ok(Shard { index, count })
}
