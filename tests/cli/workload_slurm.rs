//! The Slurm recipe of docs/workloads.md on a real Slurm: an array job whose tasks run
//! `--shard slurm`, and a job that depends on it and merges, for `workload run` (the merged
//! report equals the unsharded one but for its timing fields) and for `verify sweep` (the
//! merged error statistics equal the unsharded sweep's).
//!
//! Needs a running Slurm that `sbatch` reaches (`scripts/slurm-local.sh start` makes one on
//! this machine, as root); `.ci/run` starts it, runs this with `--ignored` and
//! `TCRTL_REQUIRE_SLURM=1` (which turns the skip into a failure), and stops it.

use crate::common::cli::{scratch, tcrtl, text};
use serde_json::Value;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

/// Whether a Slurm controller answers; otherwise the reason.
fn slurm_ready() -> Result<(), String> {
    match Command::new("sinfo").args(["-h", "-o", "%t"]).output() {
        Err(e) => Err(format!("sinfo: {e} (is Slurm installed?)")),
        Ok(o) if !o.status.success() => Err(format!("sinfo: {}", text(&o.stderr).trim())),
        Ok(o)
            if !text(&o.stdout)
                .lines()
                .any(|l| l.trim() == "idle" || l.trim() == "mix") =>
        {
            Err(format!("no idle node: {:?}", text(&o.stdout).trim()))
        }
        Ok(_) => Ok(()),
    }
}

/// Submits `script` with `extra` sbatch options; returns the job id.
fn sbatch(extra: &[&str], script: &Path) -> String {
    let o = Command::new("sbatch")
        .arg("--parsable")
        .args(extra)
        .arg(script)
        .output()
        .expect("sbatch");
    assert!(o.status.success(), "sbatch: {}", text(&o.stderr));
    let id = text(&o.stdout);
    id.trim().split(';').next().unwrap().to_string()
}

/// Writes an executable job script running `lines` with `set -e`.
fn job(path: &Path, lines: &[String]) {
    let mut s = String::from("#!/bin/bash\nset -e\n");
    for l in lines {
        s.push_str(l);
        s.push('\n');
    }
    std::fs::write(path, s).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// Waits until `file` exists and job `id` has left the queue (at most 5 minutes).
fn wait_for(file: &Path, id: &str, logs: &Path) {
    let start = Instant::now();
    loop {
        let queued = Command::new("squeue")
            .args(["-h", "-j", id])
            .output()
            .map(|o| !text(&o.stdout).trim().is_empty())
            .unwrap_or(false);
        if file.exists() && !queued {
            return;
        }
        if !queued && !file.exists() {
            // Gone from the queue without its output: say what the jobs said.
            std::thread::sleep(Duration::from_millis(500));
            if !file.exists() {
                panic!(
                    "job {id} ended without {}; logs: {}",
                    file.display(),
                    logs_text(logs)
                );
            }
        }
        assert!(
            start.elapsed() < Duration::from_secs(300),
            "job {id} not done in 5 minutes; logs: {}",
            logs_text(logs)
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

fn logs_text(dir: &Path) -> String {
    let mut all = String::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        if e.path().extension().is_some_and(|x| x == "out") {
            all.push_str(&std::fs::read_to_string(e.path()).unwrap_or_default());
        }
    }
    all
}

/// `summary.json` of `dir` as JSON with the keys `drop` removed wherever they occur.
fn summary_without(dir: &Path, drop: &[&str]) -> Value {
    fn strip(v: &mut Value, drop: &[&str]) {
        match v {
            Value::Object(m) => {
                for k in drop {
                    m.remove(*k);
                }
                m.values_mut().for_each(|x| strip(x, drop));
            }
            Value::Array(a) => a.iter_mut().for_each(|x| strip(x, drop)),
            _ => {}
        }
    }
    let mut v: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("summary.json")).unwrap()).unwrap();
    strip(&mut v, drop);
    v
}

#[test]
#[ignore = "needs a running Slurm (scripts/slurm-local.sh start); .ci/run runs it"]
fn slurm_array_jobs_shard_and_a_dependent_job_merges() {
    if let Err(why) = slurm_ready() {
        if std::env::var_os("TCRTL_REQUIRE_SLURM").is_some() {
            panic!("TCRTL_REQUIRE_SLURM is set but Slurm is not usable: {why}");
        }
        eprintln!("skipped: no Slurm here ({why}); scripts/slurm-local.sh start makes one");
        return;
    }
    let d = scratch("workload", "slurm");
    let bin = env!("CARGO_BIN_EXE_tcrtl");
    let topo = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("docs/workloads/tiny_cnn.csv")
        .display()
        .to_string();
    let dir = d.display().to_string();
    let shards = 3;
    // The array: task i runs shard i/3 into shard_i.
    let run = d.join("run.sh");
    job(
        &run,
        &[format!(
            "{bin} workload run {topo} --rows 3 --cols 5 --shard slurm \
             --out {dir}/shard_$SLURM_ARRAY_TASK_ID"
        )],
    );
    let array = sbatch(
        &[
            &format!("--array=0-{}", shards - 1),
            &format!("--output={dir}/run_%A_%a.out"),
        ],
        &run,
    );
    // The merge, once every task has ended well.
    let merge = d.join("merge.sh");
    let parts: Vec<String> = (0..shards).map(|i| format!("{dir}/shard_{i}")).collect();
    job(
        &merge,
        &[format!(
            "{bin} workload merge {} --out {dir}/merged",
            parts.join(" ")
        )],
    );
    let merged = sbatch(
        &[
            &format!("--dependency=afterok:{array}"),
            &format!("--output={dir}/merge_%j.out"),
        ],
        &merge,
    );
    // The same for verify sweep: two tasks, then verify merge.
    let sweep = d.join("sweep.sh");
    let sweep_args = "--k 8,40 --samples 60 --seed 3";
    job(
        &sweep,
        &[format!(
            "{bin} verify sweep {sweep_args} --shard slurm --out {dir}/sweep_$SLURM_ARRAY_TASK_ID"
        )],
    );
    let sweep_array = sbatch(
        &["--array=0-1", &format!("--output={dir}/sweep_%A_%a.out")],
        &sweep,
    );
    let sweep_merge = d.join("sweep_merge.sh");
    job(
        &sweep_merge,
        &[format!(
            "{bin} verify merge {dir}/sweep_0 {dir}/sweep_1 --out {dir}/sweep_merged"
        )],
    );
    let sweep_merged = sbatch(
        &[
            &format!("--dependency=afterok:{sweep_array}"),
            &format!("--output={dir}/sweep_merge_%j.out"),
        ],
        &sweep_merge,
    );
    // Meanwhile, the unsharded runs here.
    let whole = d.join("whole");
    let o = tcrtl(&[
        "workload",
        "run",
        &topo,
        "--rows",
        "3",
        "--cols",
        "5",
        "--out",
        &whole.display().to_string(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let mut args: Vec<String> = vec!["verify".into(), "sweep".into()];
    args.extend(sweep_args.split(' ').map(String::from));
    args.extend(["--out".into(), format!("{dir}/sweep_whole")]);
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = tcrtl(&a);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));

    wait_for(&d.join("merged").join("summary.json"), &merged, &d);
    for i in 0..shards {
        let s = summary_without(&d.join(format!("shard_{i}")), &[]);
        assert_eq!(s["shard"], format!("{i}/{shards}"));
    }
    // Byte for byte but for the timing fields.
    let read = |p: &Path| std::fs::read_to_string(p).unwrap();
    assert_eq!(
        read(&whole.join("layers.svg")),
        read(&d.join("merged/layers.svg"))
    );
    assert_eq!(
        summary_without(&whole, &["sim_seconds"]),
        summary_without(&d.join("merged"), &["sim_seconds"])
    );
    let csv = |p: &Path| -> Vec<String> {
        read(p)
            .lines()
            .map(|l| {
                let mut f: Vec<&str> = l.split(',').collect();
                f.remove(10); // sim_seconds
                f.join(",")
            })
            .collect()
    };
    assert_eq!(
        csv(&whole.join("layers.csv")),
        csv(&d.join("merged/layers.csv"))
    );

    wait_for(
        &d.join("sweep_merged").join("summary.json"),
        &sweep_merged,
        &d,
    );
    for i in 0..2 {
        let s = summary_without(&d.join(format!("sweep_{i}")), &[]);
        assert_eq!(s["shard"], format!("{i}/2"));
    }
    assert_eq!(
        summary_without(&d.join("sweep_whole"), &["seconds", "shard"]),
        summary_without(&d.join("sweep_merged"), &["seconds", "shard"])
    );
    let _ = std::fs::remove_dir_all(&d);
}
