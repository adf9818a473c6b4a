//! `tcrtl workload run --shard`, `workload merge`, `--resume` and an interrupted run: the
//! reports put together from shards, or from a run stopped (by the hidden `--stop-after`, or
//! by a real SIGINT) and resumed, equal the report of one uninterrupted, unsharded run byte
//! for byte once the timing fields (docs/workloads.md: the `sim_seconds` column and keys)
//! are blanked; and the refusals (another run, a shard twice or missing, an unfinished
//! shard) are one line, exit 2, with nothing written.

use crate::common::cli::{assert_error, p, scratch, tcrtl, text};
use serde_json::Value;
use std::path::Path;
use std::process::Command;

fn shipped(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("docs/workloads")
        .join(name)
        .display()
        .to_string()
}

fn run_ok(args: &[&str]) {
    let o = tcrtl(args);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
}

/// `summary.json` with every `"sim_seconds": NUMBER` replaced by `"sim_seconds": 0`.
fn blank_json(text: &str) -> String {
    let key = "\"sim_seconds\": ";
    let mut out = String::new();
    let mut rest = text;
    while let Some(i) = rest.find(key) {
        out.push_str(&rest[..i + key.len()]);
        rest = &rest[i + key.len()..];
        let end = rest
            .find(|c: char| !(c.is_ascii_digit() || "+-.eE".contains(c)))
            .unwrap_or(rest.len());
        assert!(end > 0, "sim_seconds without a number");
        out.push('0');
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

/// `layers.csv` with its `sim_seconds` column emptied (no field of these topologies holds a
/// comma).
fn blank_csv(text: &str) -> String {
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().expect("header").split(',').collect();
    let col = header
        .iter()
        .position(|c| *c == "sim_seconds")
        .expect("sim_seconds column");
    let mut out = header.join(",") + "\n";
    for l in lines {
        let mut f: Vec<&str> = l.split(',').collect();
        f[col] = "";
        out.push_str(&f.join(","));
        out.push('\n');
    }
    out
}

/// The three report files of `dir`, timing fields blanked.
fn report(dir: &Path) -> [String; 3] {
    let read = |f: &str| std::fs::read_to_string(dir.join(f)).expect(f);
    [
        blank_csv(&read("layers.csv")),
        blank_json(&read("summary.json")),
        read("layers.svg"),
    ]
}

/// Asserts the reports in `a` and `b` are equal but for timing fields.
fn assert_same_report(a: &Path, b: &Path) {
    let (ra, rb) = (report(a), report(b));
    for (i, name) in ["layers.csv", "summary.json", "layers.svg"]
        .iter()
        .enumerate()
    {
        assert!(
            ra[i] == rb[i],
            "{name} of {} and {} differ",
            a.display(),
            b.display()
        );
    }
}

fn summary(dir: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("summary.json")).unwrap()).unwrap()
}

/// Names in `dir` that are not a report file (temporaries, locks).
fn leftovers(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| !["layers.csv", "summary.json", "layers.svg"].contains(&n.as_str()))
        .collect()
}

#[test]
fn blanking_keeps_everything_but_the_timing_fields() {
    // `simulated_seconds` (cycles at the clock) is not a timing field: it stays compared.
    let j = "{\n  \"sim_seconds\": 1.5e-3,\n  \"seed\": 7,\n  \"simulated_seconds\": 2.5e-6,\n  \
             \"x\": {\"sim_seconds\": 12}\n}";
    assert_eq!(
        blank_json(j),
        "{\n  \"sim_seconds\": 0,\n  \"seed\": 7,\n  \"simulated_seconds\": 2.5e-6,\n  \
         \"x\": {\"sim_seconds\": 0}\n}"
    );
    assert_eq!(
        blank_csv("a,sim_seconds,b,simulated_seconds\n1,0.25,3,2.5e-6\n"),
        "a,sim_seconds,b,simulated_seconds\n1,,3,2.5e-6\n"
    );
}

/// 2 and 3 shards on 1 and 2 threads, and 8 shards (8 > 6 layers: two shards hold none),
/// merged: the unsharded report (output-stationary; weight-stationary for 3 shards on 2
/// threads).
#[test]
fn merged_shards_equal_the_unsharded_report() {
    let d = scratch("workload", "shards");
    let topo = shipped("transformer_block.csv");
    for df in ["os", "ws"] {
        let whole = d.join(format!("whole_{df}"));
        run_ok(&[
            "workload",
            "run",
            &topo,
            "--out",
            &whole.display().to_string(),
            "--dataflow",
            df,
            "--rows",
            "3",
            "--cols",
            "5",
        ]);
        assert_eq!(summary(&whole)["shard"], "0/1");
        assert_eq!(summary(&whole)["complete"], true);
        let splits: &[(u64, &str)] = if df == "os" {
            &[(2, "1"), (2, "2"), (3, "1"), (3, "2"), (8, "2")]
        } else {
            &[(3, "2")]
        };
        for &(n, threads) in splits {
            let tag = format!("{df}_{n}_{threads}");
            let mut dirs = Vec::new();
            for i in 0..n {
                let dir = p(&d, &format!("{tag}_shard{i}"));
                let shard = format!("{i}/{n}");
                run_ok(&[
                    "workload",
                    "run",
                    &topo,
                    "--out",
                    &dir,
                    "--dataflow",
                    df,
                    "--rows",
                    "3",
                    "--cols",
                    "5",
                    "--shard",
                    &shard,
                    "--threads",
                    threads,
                ]);
                // Shard i holds layers i, i + n, ...
                let s = summary(Path::new(&dir));
                let idx: Vec<u64> = s["layers"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|l| l["index"].as_u64().unwrap())
                    .collect();
                let want: Vec<u64> = (0..6).filter(|k| k % n == i).collect();
                assert_eq!(idx, want, "{tag} shard {i}");
                dirs.push(dir);
            }
            // Merged in any order.
            dirs.reverse();
            let merged = d.join(format!("{tag}_merged"));
            let mut args = vec!["workload", "merge"];
            args.extend(dirs.iter().map(String::as_str));
            let m = merged.display().to_string();
            args.extend(["--out", &m]);
            run_ok(&args);
            assert_same_report(&whole, &merged);
            // The comparison covers the deterministic seconds and mapping efficiency.
            let t = &summary(&merged)["totals"];
            assert!(t["simulated_seconds"].as_f64().unwrap() > 0.0, "{tag}");
            assert!(t["mapping_efficiency"].as_f64().unwrap() > 0.0, "{tag}");
        }
    }
    let _ = std::fs::remove_dir_all(&d);
}

/// Another run's shard, a shard twice, a missing shard, an unfinished shard: one line, exit
/// 2, and the merge's --out is not even created.
#[test]
fn merge_refuses_shards_that_do_not_make_one_run() {
    let d = scratch("workload", "merge_refusals");
    let topo = shipped("tiny_cnn.csv");
    let shard = |name: &str, i: &str, extra: &[&str]| -> String {
        let dir = p(&d, name);
        let mut args = vec!["workload", "run", &topo, "--out", &dir, "--shard", i];
        args.extend(extra);
        let o = tcrtl(&args);
        assert!(o.status.code() == Some(0) || o.status.code() == Some(130));
        dir
    };
    let s0 = shard("s0", "0/2", &[]);
    let s1 = shard("s1", "1/2", &[]);
    let seed2 = shard("seed2", "1/2", &["--seed", "2"]);
    let ws = shard("ws", "1/2", &["--dataflow", "ws"]);
    let third = shard("third", "1/3", &[]);
    let cut = shard("cut", "1/2", &["--stop-after", "1"]);
    let clock = shard("clock", "1/2", &["--clock-ghz", "2"]);
    let out = d.join("merged");
    let o = out.display().to_string();
    let merge = |dirs: &[&str]| {
        let mut args = vec!["workload", "merge"];
        args.extend(dirs);
        args.extend(["--out", &o]);
        tcrtl(&args)
    };
    assert_error(&merge(&[&s0, &seed2]), "its seed is 2, not 1");
    assert_error(&merge(&[&s0, &ws]), "its core is");
    assert_error(&merge(&[&s0, &clock]), "its clock_ghz is 2.0, not 1.0");
    assert_error(&merge(&[&s0, &third]), "not shards of one split");
    assert_error(&merge(&[&s0, &s0, &s1]), "are both shard 0/2");
    assert_error(&merge(&[&s1]), "shard 0/2 is missing");
    assert_error(&merge(&[&s0, &cut]), "unfinished (1 layers pending)");
    assert_error(&merge(&[&s0, &p(&d, "nowhere")]), "nowhere");
    let junk = d.join("junk");
    std::fs::create_dir_all(&junk).unwrap();
    std::fs::write(junk.join("summary.json"), "{\"layers\": []}\n").unwrap();
    let junk = junk.display().to_string();
    assert_error(&merge(&[&s0, &junk]), "not a workload report");
    // A report claiming a split into 10^11 shards: refused without allocating for them.
    let huge = d.join("huge");
    std::fs::create_dir_all(&huge).unwrap();
    let text0 = std::fs::read_to_string(Path::new(&s0).join("summary.json")).unwrap();
    assert!(text0.contains("\"shard\": \"0/2\""));
    std::fs::write(
        huge.join("summary.json"),
        text0.replace("\"shard\": \"0/2\"", "\"shard\": \"0/100000000000\""),
    )
    .unwrap();
    let huge = huge.display().to_string();
    assert_error(&merge(&[&huge]), "shard 1/100000000000 is missing");
    assert!(!out.exists(), "a refused merge wrote {}", out.display());
    run_ok(&["workload", "merge", &s0, &s1, "--out", &o]);
    let _ = std::fs::remove_dir_all(&d);
}

/// `--stop-after` leaves what an interrupt leaves: a report of the finished layers saying it
/// is incomplete, nothing else in --out; `--resume` refuses another run's report and
/// finishes this one to the uninterrupted report (on 1 and 2 threads, and for a shard).
#[test]
fn a_stopped_run_resumes_to_the_uninterrupted_report() {
    let d = scratch("workload", "resume");
    let topo = shipped("transformer_block.csv");
    let whole = d.join("whole");
    run_ok(&["workload", "run", &topo, "--out", &p(&d, "whole")]);
    for threads in ["1", "2"] {
        let dir = d.join(format!("t{threads}"));
        let out = dir.display().to_string();
        let base = [
            "workload",
            "run",
            &topo,
            "--out",
            &out,
            "--threads",
            threads,
        ];
        let mut args = base.to_vec();
        args.extend(["--stop-after", "2"]);
        let o = tcrtl(&args);
        assert_eq!(o.status.code(), Some(130), "{}", text(&o.stderr));
        assert!(text(&o.stderr).contains("--resume"));
        let s = summary(&dir);
        assert_eq!(s["complete"], false);
        let done = s["layers"].as_array().unwrap().len();
        let pending = s["pending"].as_array().unwrap().len();
        // At least the 2 asked for; a second thread may finish the layer it had started.
        assert!((2..=3).contains(&done), "{done} layers finished");
        assert_eq!(done + pending, 6);
        assert_eq!(s["totals"]["layers"], done);
        let rows = std::fs::read_to_string(dir.join("layers.csv")).unwrap();
        assert_eq!(rows.lines().count(), 1 + done);
        assert_eq!(leftovers(&dir), Vec::<String>::new());
        // Another run's report is refused, and left as it was.
        let before = std::fs::read(dir.join("summary.json")).unwrap();
        for (extra, needle) in [
            (["--seed", "2"], "its seed is 1, this run's is 2"),
            (["--rows", "8"], "its core is"),
            (["--shard", "0/2"], "its shard is \"0/1\""),
        ] {
            let mut args = base.to_vec();
            args.push("--resume");
            args.extend(extra);
            assert_error(&tcrtl(&args), needle);
        }
        assert_eq!(std::fs::read(dir.join("summary.json")).unwrap(), before);
        let mut args = base.to_vec();
        args.push("--resume");
        run_ok(&args);
        assert_eq!(summary(&dir)["complete"], true);
        assert_same_report(&whole, &dir);
        // Resuming a complete report runs nothing and changes nothing.
        run_ok(&args);
        assert_same_report(&whole, &dir);
    }
    // A shard stopped, resumed and merged with its sibling.
    let (s0, s1) = (p(&d, "s0"), p(&d, "s1"));
    run_ok(&["workload", "run", &topo, "--out", &s0, "--shard", "0/2"]);
    let o = tcrtl(&[
        "workload",
        "run",
        &topo,
        "--out",
        &s1,
        "--shard",
        "1/2",
        "--stop-after",
        "1",
    ]);
    assert_eq!(o.status.code(), Some(130));
    run_ok(&[
        "workload", "run", &topo, "--out", &s1, "--shard", "1/2", "--resume",
    ]);
    run_ok(&["workload", "merge", &s0, &s1, "--out", &p(&d, "merged")]);
    assert_same_report(&whole, &d.join("merged"));
    // --stop-after 0: no layer runs, and the report says so.
    let none_run = d.join("none_run");
    let nr = none_run.display().to_string();
    let o = tcrtl(&["workload", "run", &topo, "--out", &nr, "--stop-after", "0"]);
    assert_eq!(o.status.code(), Some(130));
    let s = summary(&none_run);
    assert_eq!(s["complete"], false);
    assert_eq!(s["pending"].as_array().unwrap().len(), 6);
    assert_eq!(s["layers"].as_array().unwrap().len(), 0);
    run_ok(&["workload", "run", &topo, "--out", &nr, "--resume"]);
    assert_same_report(&whole, &none_run);
    // Nothing to resume: one line.
    assert_error(
        &tcrtl(&[
            "workload",
            "run",
            &topo,
            "--out",
            &p(&d, "none"),
            "--resume",
        ]),
        "--resume",
    );
    let _ = std::fs::remove_dir_all(&d);
}

/// A real SIGINT to a running `tcrtl workload run`: the process ends by the signal, --out
/// holds the report of the layers finished before it (`"complete": false`, nothing
/// half-written), and `--resume` finishes it to the uninterrupted report.
#[test]
fn sigint_leaves_a_partial_report_that_resumes() {
    use std::os::unix::process::ExitStatusExt;
    let d = scratch("workload", "sigint");
    // 16 layers of 24 x 24 x 24: long enough to interrupt after the first.
    let mut topo = String::from("Layer, M, N, K,\n");
    for i in 0..16 {
        topo.push_str(&format!("L{i}, 24, 24, 24,\n"));
    }
    let topo_path = d.join("layers.csv");
    std::fs::write(&topo_path, topo).unwrap();
    let t = topo_path.display().to_string();
    let dir = d.join("run");
    let out = dir.display().to_string();
    let mut child = Command::new(env!("CARGO_BIN_EXE_tcrtl"))
        .args(["workload", "run", &t, "--out", &out])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("start tcrtl");
    // The first checkpoint lands after the first layer.
    let start = std::time::Instant::now();
    while !dir.join("summary.json").exists() {
        assert!(start.elapsed().as_secs() < 60, "no checkpoint within 60 s");
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    let killed = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("kill");
    assert!(killed.success());
    let status = child.wait().unwrap();
    if status.success() {
        // The machine ran all 16 layers between the first checkpoint and the signal: nothing
        // was interrupted, and the report is complete.
        assert_eq!(summary(&dir)["complete"], true);
        eprintln!("sigint test: the run finished before the signal arrived");
    } else {
        assert_eq!(status.signal(), Some(2), "{status:?}");
        let s = summary(&dir);
        assert_eq!(s["complete"], false);
        let done = s["layers"].as_array().unwrap().len();
        assert!((1..16).contains(&done), "{done}");
        assert_eq!(done + s["pending"].as_array().unwrap().len(), 16);
        let rows = std::fs::read_to_string(dir.join("layers.csv")).unwrap();
        assert_eq!(rows.lines().count(), 1 + done);
        assert_eq!(leftovers(&dir), Vec::<String>::new());
        run_ok(&["workload", "run", &t, "--out", &out, "--resume"]);
    }
    run_ok(&[
        "workload",
        "run",
        &t,
        "--out",
        &p(&d, "whole"),
        "--threads",
        "2",
    ]);
    assert_same_report(&d.join("whole"), &dir);
    let _ = std::fs::remove_dir_all(&d);
}

/// `--shard slurm` takes the shard from a Slurm array task's variables, for `workload run`
/// and `verify sweep`; without them it is refused in one line.
#[test]
fn shard_slurm_reads_the_array_task() {
    let d = scratch("workload", "slurm_env");
    let topo = shipped("transformer_block.csv");
    let tcrtl_env = |args: &[&str], vars: &[(&str, &str)]| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_tcrtl"));
        c.args(args);
        for v in [
            "SLURM_ARRAY_TASK_ID",
            "SLURM_ARRAY_TASK_COUNT",
            "SLURM_ARRAY_TASK_MIN",
        ] {
            c.env_remove(v);
        }
        c.envs(vars.iter().copied());
        c.output().unwrap()
    };
    let task = [
        ("SLURM_ARRAY_TASK_ID", "2"),
        ("SLURM_ARRAY_TASK_COUNT", "3"),
        ("SLURM_ARRAY_TASK_MIN", "0"),
    ];
    let out = p(&d, "w");
    let args = ["workload", "run", &topo, "--out", &out, "--shard", "slurm"];
    let o = tcrtl_env(&args, &task);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(summary(Path::new(&out))["shard"], "2/3");
    assert_error(
        &tcrtl_env(&args, &task[1..]),
        "SLURM_ARRAY_TASK_ID is not set",
    );
    let sweep = p(&d, "s");
    let o = tcrtl_env(
        &[
            "verify",
            "sweep",
            "--k",
            "8",
            "--samples",
            "30",
            "--out",
            &sweep,
            "--shard",
            "slurm",
        ],
        &task,
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(summary(Path::new(&sweep))["shard"], "2/3");
    // `--array=1-4`: task ids 1..4 are shards 0/4 to 3/4.
    let out4 = p(&d, "w4");
    let args4 = ["workload", "run", &topo, "--out", &out4, "--shard", "slurm"];
    let o = tcrtl_env(
        &args4,
        &[
            ("SLURM_ARRAY_TASK_ID", "4"),
            ("SLURM_ARRAY_TASK_COUNT", "4"),
            ("SLURM_ARRAY_TASK_MIN", "1"),
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(summary(Path::new(&out4))["shard"], "3/4");
    // A variable that is not a number, and ids not consecutive from the minimum (`--array=0,5`).
    let refused = p(&d, "refused");
    let args_r = [
        "workload", "run", &topo, "--out", &refused, "--shard", "slurm",
    ];
    for (vars, want) in [
        (
            [
                ("SLURM_ARRAY_TASK_ID", "x"),
                ("SLURM_ARRAY_TASK_COUNT", "3"),
            ],
            "SLURM_ARRAY_TASK_ID=\"x\" is not a whole number",
        ),
        (
            [
                ("SLURM_ARRAY_TASK_ID", "5"),
                ("SLURM_ARRAY_TASK_COUNT", "2"),
            ],
            "task 5 of 2",
        ),
    ] {
        assert_error(&tcrtl_env(&args_r, &vars), want);
    }
    // `--shard I/N` itself: I below N, both whole numbers.
    for bad in ["3/3", "1/0", "x", "1/", "-1/2", "1/2/3"] {
        let shard = format!("--shard={bad}");
        let args_b = ["workload", "run", &topo, "--out", &refused, &shard];
        assert_error(
            &tcrtl_env(&args_b, &[]),
            "expected I/N with 0 <= I < N, or slurm",
        );
    }
    assert!(
        !Path::new(&refused).exists(),
        "a refused run wrote its report"
    );
    let _ = std::fs::remove_dir_all(&d);
}

/// A topology of GEMM rows `(name, m, n, k)` written into `d`.
fn gemm_topology(d: &Path, file: &str, layers: &[(&str, usize, usize, usize)]) -> String {
    let mut t = String::from("Layer, M, N, K,\n");
    for (name, m, n, k) in layers {
        t.push_str(&format!("{name}, {m}, {n}, {k},\n"));
    }
    let path = d.join(file);
    std::fs::write(&path, t).unwrap();
    path.display().to_string()
}

/// Runs the `n` shards of a row split (`--split rows`) of `topo` with `extra` options into
/// `d/TAG_shardI`, and merges them (given in reverse order) into `d/TAG_merged`; returns the
/// shards' folders.
fn split_and_merge(d: &Path, tag: &str, topo: &str, n: u64, extra: &[&str]) -> Vec<String> {
    let mut dirs = Vec::new();
    for i in 0..n {
        let dir = p(d, &format!("{tag}_shard{i}"));
        let shard = format!("{i}/{n}");
        let mut args = vec![
            "workload", "run", topo, "--out", &dir, "--shard", &shard, "--split", "rows",
        ];
        args.extend(extra);
        run_ok(&args);
        dirs.push(dir);
    }
    let merged = p(d, &format!("{tag}_merged"));
    let mut args = vec!["workload", "merge"];
    args.extend(dirs.iter().rev().map(String::as_str));
    args.extend(["--out", &merged]);
    run_ok(&args);
    dirs
}

/// Runs each case `(tag, topology, shards, options)` whole and as a row split
/// (`--split rows`) on a 3 x 4 array, merges the shards and compares the merged report with
/// the unsharded run's, timing fields blanked; and checks that the shards' parts cover the
/// layer's rows and its check once.
fn check_row_splits(d: &Path, cases: &[(&str, &str, u64, &[&str])]) {
    let array = ["--rows", "3", "--cols", "4"];
    for &(tag, topo, n, extra) in cases {
        let whole = p(d, &format!("{tag}_whole"));
        let mut args = vec!["workload", "run", topo, "--out", &whole];
        args.extend(array);
        args.extend(extra);
        run_ok(&args);
        let mut extra_all = array.to_vec();
        extra_all.extend(extra);
        let dirs = split_and_merge(d, tag, topo, n, &extra_all);
        assert_same_report(Path::new(&whole), &d.join(format!("{tag}_merged")));
        let w = summary(Path::new(&whole));
        // Each shard holds a part of every layer, its rows of D beside its report; the parts'
        // checks add up to the whole layer's.
        for (li, layer) in w["layers"].as_array().unwrap().iter().enumerate() {
            let (mut rows, mut checked) = (0, 0);
            for (i, dir) in dirs.iter().enumerate() {
                let s = summary(Path::new(dir));
                assert_eq!(s["shard"], format!("{i}/{n}"));
                assert_eq!(s["split"], "rows");
                let part = &s["layers"][li];
                assert_eq!(part["index"], li);
                assert_eq!(part["part"]["layer_m"], layer["m"]);
                rows += part["m"].as_u64().unwrap();
                checked += part["checked"].as_u64().unwrap();
                let file = Path::new(dir).join(format!("parts/{li}.d.npy"));
                assert_eq!(file.exists(), part["m"] != 0, "{tag} {}", file.display());
            }
            assert_eq!(rows, layer["m"].as_u64().unwrap(), "{tag}: rows");
            assert_eq!(
                checked,
                layer["checked"].as_u64().unwrap(),
                "{tag}: checked"
            );
        }
        assert!(!summary(&d.join(format!("{tag}_merged")))
            .as_object()
            .unwrap()
            .contains_key("split"));
    }
}

/// `--split rows`: one layer split by tile rows (R = 3 rows of M) over 2 and 3 shards, on 1
/// and 2 threads: the merged report equals the unsharded run's but for the timing fields
/// (D's digest, the check's counts, cycles and traffic included).
#[test]
fn row_split_of_one_layer_merges_to_the_unsharded_report() {
    let d = scratch("workload", "row_split_one");
    let one = gemm_topology(&d, "one.csv", &[("big", 23, 7, 9)]);
    check_row_splits(
        &d,
        &[
            ("one2t1", &one, 2, &["--threads", "1"]),
            ("one2t2", &one, 2, &["--threads", "2"]),
            ("one3t1", &one, 3, &["--threads", "1"]),
            ("one3t2", &one, 3, &["--threads", "2"]),
        ],
    );
    // Shard 1 of 2 holds tile rows 1, 3, 5, 7 (rows 3..6, 9..12, 15..18, 21..23).
    let s1 = summary(&d.join("one2t1_shard1"));
    assert_eq!(s1["layers"][0]["m"], 11);
    assert_eq!(s1["layers"][0]["part"]["tile_rows"], 4);
    assert_eq!(s1["layers"][0]["part"]["unit_rows"], 3);
    let _ = std::fs::remove_dir_all(&d);
}

/// `--split rows` of two layers on more shards (3) than layers, one of them a single tile
/// row (so two of its parts are empty); with a sampled check and SCALE-Sim's timing; and
/// weight-stationary, where a tile row is a 1024-row chunk of A: each merge equals the
/// unsharded run's report but for the timing fields.
#[test]
fn row_split_on_more_shards_than_layers_sampled_and_ws() {
    let d = scratch("workload", "row_split_two");
    let two = gemm_topology(&d, "two.csv", &[("big", 23, 7, 9), ("thin", 2, 4, 5)]);
    let tall = gemm_topology(&d, "tall.csv", &[("tall", 1100, 4, 3), ("thin", 2, 4, 5)]);
    check_row_splits(
        &d,
        &[
            ("two3", &two, 3, &["--threads", "2"]),
            (
                "sampled",
                &two,
                3,
                &[
                    "--max-check",
                    "100",
                    "--samples",
                    "40",
                    "--timing",
                    "scalesim",
                ],
            ),
            ("ws", &tall, 3, &["--dataflow", "ws", "--threads", "2"]),
        ],
    );
    // The two-row layer has one tile row: shards 1 and 2 hold an empty part.
    assert_eq!(summary(&d.join("two3_shard2"))["layers"][1]["m"], 0);
    // ws: 1024-row chunks; shard 1 of 3 holds the last 76 rows, shard 2 none.
    let ws1 = summary(&d.join("ws_shard1"));
    assert_eq!(ws1["layers"][0]["m"], 76);
    assert_eq!(ws1["layers"][0]["part"]["unit_rows"], 1024);
    assert_eq!(summary(&d.join("ws_shard2"))["layers"][0]["m"], 0);
    let _ = std::fs::remove_dir_all(&d);
}

/// `--split rows` where the whole layer's figures have no exact formula (--memory tma), or
/// nothing adds up (--energy, --analytic): one line, exit 2, nothing written. A merge of a
/// row split's shards with a layer split's, or of a part whose rows of D were changed or
/// removed: one line, exit 2. A stopped row-split shard resumes and merges.
#[test]
fn row_split_refusals_and_resume() {
    let d = scratch("workload", "row_split_refusals");
    let topo = gemm_topology(&d, "t.csv", &[("big", 23, 7, 9), ("thin", 2, 4, 5)]);
    let out = p(&d, "refused");
    for (extra, needle) in [
        (
            &["--split", "rows", "--memory", "tma"][..],
            "--split rows: a layer's cycles through --memory tma",
        ),
        (
            &["--split", "rows", "--energy"][..],
            "--split rows: a layer's energy",
        ),
        (
            &["--split", "rows", "--analytic"][..],
            "--split rows: --analytic simulates nothing",
        ),
        (&["--split", "cols"][..], "--split cols: layers or rows"),
    ] {
        let mut args = vec!["workload", "run", &topo, "--out", &out, "--shard", "0/2"];
        args.extend(extra);
        assert_error(&tcrtl(&args), needle);
    }
    assert!(!Path::new(&out).exists(), "a refused run wrote {out}");
    let whole = p(&d, "whole");
    run_ok(&["workload", "run", &topo, "--out", &whole]);
    let dirs = split_and_merge(&d, "ok", &topo, 2, &[]);
    assert_same_report(Path::new(&whole), &d.join("ok_merged"));
    let merged = p(&d, "merged");
    let merge = |a: &str, b: &str| tcrtl(&["workload", "merge", a, b, "--out", &merged]);
    // A layer split's shard beside a row split's.
    let layers1 = p(&d, "layers1");
    run_ok(&[
        "workload", "run", &topo, "--out", &layers1, "--shard", "1/2",
    ]);
    assert_error(&merge(&dirs[0], &layers1), "its split is -, not \"rows\"");
    // A report whose whole layer claims 10^18 rows: refused at once, without a loop over them.
    let huge = d.join("huge");
    std::fs::create_dir_all(huge.join("parts")).unwrap();
    let text0 = std::fs::read_to_string(Path::new(&dirs[0]).join("summary.json")).unwrap();
    assert!(text0.contains("\"m\": 23,"));
    std::fs::write(
        huge.join("summary.json"),
        text0.replace("\"m\": 23,", "\"m\": 1000000000000000000,"),
    )
    .unwrap();
    for f in ["0.d.npy", "1.d.npy"] {
        let from = Path::new(&dirs[0]).join("parts").join(f);
        std::fs::copy(from, huge.join("parts").join(f)).unwrap();
    }
    assert_error(
        &merge(&huge.display().to_string(), &dirs[1]),
        "layer 0's part is not a part of big (1000000000000000000 x 7 x 9)",
    );
    // Shard 1's rows of D changed, then gone.
    let part = Path::new(&dirs[1]).join("parts/0.d.npy");
    let mut bytes = std::fs::read(&part).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    std::fs::write(&part, &bytes).unwrap();
    assert_error(&merge(&dirs[0], &dirs[1]), "is not the part's d_digest");
    std::fs::remove_file(&part).unwrap();
    assert_error(&merge(&dirs[0], &dirs[1]), "0.d.npy");
    assert!(
        !Path::new(&merged).exists(),
        "a refused merge wrote {merged}"
    );
    // A row-split shard stopped after its first layer, resumed, merged.
    let s1 = p(&d, "stopped1");
    let base = [
        "workload", "run", &topo, "--out", &s1, "--shard", "1/2", "--split", "rows",
    ];
    let mut args = base.to_vec();
    args.extend(["--stop-after", "1"]);
    assert_eq!(tcrtl(&args).status.code(), Some(130));
    assert_eq!(summary(Path::new(&s1))["complete"], false);
    let mut args = base.to_vec();
    args.push("--resume");
    run_ok(&args);
    run_ok(&["workload", "merge", &dirs[0], &s1, "--out", &merged]);
    assert_same_report(Path::new(&whole), Path::new(&merged));
    let _ = std::fs::remove_dir_all(&d);
}
