//! The second hardening round, outputs (docs/reliability.md, "All-or-nothing outputs"): a
//! run's outputs are one transaction committed at its very end, side files are planned and
//! clash-checked before the simulation, two runs writing one path never mix. Each test runs
//! the command a hostile user ran and asserts the exit code, the one stderr line and the
//! files afterwards; names carry the defect's number.

use crate::common::cli::{assert_error, listing, npy_header, p, scratch, tcrtl};
use std::path::Path;

/// Writes `text` to `dir/name` and returns it, for comparing afterwards.
fn old(dir: &Path, name: &str) -> (String, Vec<u8>) {
    let bytes = format!("old {name}\n").into_bytes();
    std::fs::write(dir.join(name), &bytes).expect("old file");
    (name.to_string(), bytes)
}

/// Every `(name, bytes)` of `files` still holds those bytes in `dir`.
fn assert_unchanged(dir: &Path, files: &[(String, Vec<u8>)]) {
    for (name, bytes) in files {
        let now = std::fs::read(dir.join(name)).expect("old file kept");
        assert_eq!(&now, bytes, "{name} changed");
    }
}

/// Defect 3: one output failing (the golden `d.hex` is a symlink to `/dev/full`) leaves every
/// old output byte for byte as it was (D, the VCD, its save file, the golden folder), and
/// nothing new (no overview, no filter file, no temporary, no lock file).
#[test]
fn r03_a_failed_run_changes_no_output() {
    let d = scratch("hostile-out", "mixed");
    let mh = d.join("mh");
    std::fs::create_dir(&mh).expect("mh");
    let top = [old(&d, "d.npy"), old(&d, "w.vcd"), old(&d, "w.gtkw")];
    let golden = [
        old(&mh, "a.hex"),
        old(&mh, "b.hex"),
        old(&mh, "c.hex"),
        old(&mh, "manifest.json"),
        old(&mh, "steps.hex"),
    ];
    std::os::unix::fs::symlink("/dev/full", mh.join("d.hex")).expect("symlink");
    let o = tcrtl(&[
        "gemm",
        "--m",
        "8",
        "--n",
        "8",
        "--k",
        "16",
        "--out",
        &p(&d, "d.npy"),
        "--memh",
        &p(&d, "mh"),
        "--vcd",
        &p(&d, "w.vcd"),
    ]);
    assert_error(&o, "No space left on device");
    assert_unchanged(&d, &top);
    assert_unchanged(&mh, &golden);
    assert_eq!(listing(&d), ["d.npy", "mh", "w.gtkw", "w.vcd"]);
    assert_eq!(
        listing(&mh),
        [
            "a.hex",
            "b.hex",
            "c.hex",
            "d.hex",
            "manifest.json",
            "steps.hex"
        ]
    );
    assert!(std::fs::symlink_metadata(mh.join("d.hex"))
        .expect("link")
        .file_type()
        .is_symlink());

    // The same run with a writable d.hex replaces every output; the stale steps.hex goes
    // only if the manifest does not list a new one.
    std::fs::remove_file(mh.join("d.hex")).expect("unlink");
    let o = tcrtl(&[
        "gemm",
        "--m",
        "8",
        "--n",
        "8",
        "--k",
        "16",
        "--out",
        &p(&d, "d.npy"),
        "--memh",
        &p(&d, "mh"),
        "--vcd",
        &p(&d, "w.vcd"),
    ]);
    assert_eq!(o.status.code(), Some(0));
    for (name, bytes) in top.iter() {
        assert_ne!(&std::fs::read(d.join(name)).expect("new"), bytes, "{name}");
    }
    let manifest = std::fs::read_to_string(mh.join("manifest.json")).expect("manifest");
    for (name, bytes) in golden.iter() {
        match std::fs::read(mh.join(name)) {
            Ok(now) => assert_ne!(&now, bytes, "{name}"),
            Err(_) => assert!(name == "steps.hex" && !manifest.contains("steps.hex")),
        }
    }
    assert!(listing(&d)
        .iter()
        .all(|n| !n.ends_with(".partial") && !n.ends_with(".lock")));
    let _ = std::fs::remove_dir_all(&d);
}

/// Defect 5: D named like the trace's overview save file or one of its translate filter
/// files is refused before the simulation, naming both options; a folder in the overview's
/// place is found up front too.
#[test]
fn r05_side_files_are_planned_and_clash_checked() {
    let d = scratch("hostile-out", "side");
    let vcd = p(&d, "c1.vcd");
    for (out, needle) in [
        ("c1.overview.gtkw", "(its GTKWave overview save file)"),
        ("c1.gtkw", "(its GTKWave save file)"),
        (
            "c1.tensor_core.controller.state.txt",
            "the name of a GTKWave translate filter file of --vcd",
        ),
    ] {
        let out = p(&d, out);
        let o = tcrtl(&[
            "gemm", "--m", "8", "--n", "8", "--k", "8", "--vcd", &vcd, "--out", &out,
        ]);
        assert_error(&o, needle);
        let line = String::from_utf8_lossy(&o.stderr);
        assert!(line.contains(&format!("--out {out}")), "{line}");
        assert!(line.contains(&format!("--vcd {vcd}")), "{line}");
        assert!(listing(&d).is_empty(), "{:?}", listing(&d));
    }
    std::fs::create_dir(d.join("c1.overview.gtkw")).expect("dir");
    let o = tcrtl(&[
        "gemm", "--m", "64", "--n", "64", "--k", "4096", "--vcd", &vcd,
    ]);
    assert_error(&o, "c1.overview.gtkw: is a directory");
    assert_eq!(listing(&d), ["c1.overview.gtkw"]);
    let _ = std::fs::remove_dir_all(&d);
}

/// The `gemm` arguments of defect 4's runs: seed `seed`, D to `out` (a 256 x 256 problem, a
/// 256 KiB D; the two runs of a pair start together and take the same time, so they race for
/// the path), a VCD to `vcd` if given (a 64 x 64 problem then, so the waveform stays a few MB).
fn same_path_args(seed: &str, out: &str, vcd: Option<&str>) -> Vec<String> {
    let size = if vcd.is_some() { "64" } else { "256" };
    let mut a: Vec<String> = [
        "gemm", "--m", size, "--n", size, "--k", "4", "--seed", seed, "--out", out,
    ]
    .map(String::from)
    .to_vec();
    if let Some(v) = vcd {
        a.extend(["--vcd".to_string(), v.to_string()]);
    }
    a
}

/// Defect 4: two runs writing one path at once (10 pairs, with and without `--vcd`). The
/// file is always one run's complete output (byte for byte that seed's D, and with `--vcd`
/// the waveform of the same run), every run that says "D written" exited 0 and its bytes
/// are there if it finished last, and a run refused exits 2 with one line saying another
/// run is writing the file. No temporary or lock file is left.
#[test]
fn r04_two_runs_writing_one_path_never_mix() {
    let d = scratch("hostile-out", "race");
    for vcd in [false, true] {
        // Each seed's outputs, from a run alone.
        let mut want = Vec::new();
        for seed in ["1", "2"] {
            let (o, v) = (p(&d, "alone.npy"), p(&d, "alone.vcd"));
            let args = same_path_args(seed, &o, vcd.then_some(v.as_str()));
            let a: Vec<&str> = args.iter().map(String::as_str).collect();
            assert_eq!(tcrtl(&a).status.code(), Some(0));
            let wave = vcd.then(|| std::fs::read(&v).expect("vcd"));
            want.push((std::fs::read(&o).expect("alone"), wave));
        }
        assert_ne!(want[0].0, want[1].0);
        let pairs = if vcd { 5 } else { 10 };
        for pair in 0..pairs {
            let (o, v) = (p(&d, "same.npy"), p(&d, "same.vcd"));
            let children: Vec<_> = ["1", "2"]
                .iter()
                .map(|seed| {
                    std::process::Command::new(env!("CARGO_BIN_EXE_tcrtl"))
                        .args(same_path_args(seed, &o, vcd.then_some(v.as_str())))
                        .stdout(std::process::Stdio::piped())
                        .stderr(std::process::Stdio::piped())
                        .spawn()
                        .expect("spawn")
                })
                .collect();
            let outs: Vec<_> = children
                .into_iter()
                .map(|c| c.wait_with_output().expect("wait"))
                .collect();
            let now = std::fs::read(&o).expect("same.npy");
            let winner = want
                .iter()
                .position(|w| w.0 == now)
                .unwrap_or_else(|| panic!("pair {pair}: same.npy is neither run's D"));
            if vcd {
                assert_eq!(
                    std::fs::read(&v).ok(),
                    want[winner].1,
                    "pair {pair}: the VCD is not the same run's"
                );
            }
            for (i, out) in outs.iter().enumerate() {
                let said = String::from_utf8_lossy(&out.stdout).contains("D written");
                match out.status.code() {
                    Some(0) => assert!(said),
                    _ => {
                        assert!(!said, "pair {pair}: a failed run claims D");
                        assert_error(out, "another run is writing it now");
                    }
                }
                if i == winner {
                    assert_eq!(out.status.code(), Some(0), "pair {pair}: D of a failed run");
                }
            }
            let left: Vec<String> = listing(&d)
                .into_iter()
                .filter(|n| n.ends_with(".partial") || n.ends_with(".lock"))
                .collect();
            assert!(left.is_empty(), "pair {pair}: left {left:?}");
        }
    }
    let _ = std::fs::remove_dir_all(&d);
}

/// Defect 10, the rest: `--out /dev/stdout` on a pipe works; `--waves` under a file and
/// `memsweep --out /dev/null` say what is wrong (not "File exists"); a `.npy` with thousands
/// of axes, or a long dtype, gives one short line; SIGINT during `tb run all --waves
/// new/dir` leaves no folder it made.
#[test]
fn r10_rest_clear_lines_and_no_folders_left() {
    let d = scratch("hostile-out", "ten");
    // D to a pipe through /dev/stdout: the .npy bytes arrive on stdout.
    let o = tcrtl(&[
        "gemm",
        "--m",
        "4",
        "--n",
        "4",
        "--k",
        "4",
        "--out",
        "/dev/stdout",
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(o.stdout.starts_with(b"\x93NUMPY"));
    std::fs::write(d.join("notadir"), b"x").expect("file");
    let o = tcrtl(&["tb", "run", "all", "--waves", &p(&d, "notadir/sub")]);
    assert_error(&o, "notadir exists and is not a directory");
    let o = tcrtl(&[
        "memsweep",
        "--m",
        "8",
        "--n",
        "8",
        "--k",
        "4",
        "--out",
        "/dev/null",
    ]);
    assert_error(&o, "--out /dev/null: not a directory");
    // Thousands of axes: refused from the header, in one short line.
    for (axes, needle) in [
        (10_000, "header (at most 10000"),
        (4_000, "a shape of 4000 axes (NumPy allows at most 64)"),
        (
            60,
            "must be a 2-D matrix but has shape (1, 1, 1, 1, 1, 1, 1, 1, ... (60 axes))",
        ),
    ] {
        let shape = format!("({})", vec!["1"; axes].join(","));
        let mut bytes = npy_header("<f2", &shape);
        bytes.extend_from_slice(&[0, 0x3c]);
        std::fs::write(d.join("many.npy"), bytes).expect("npy");
        let o = tcrtl(&["gemm", "--a", &p(&d, "many.npy"), "--b", &p(&d, "many.npy")]);
        assert_error(&o, needle);
        assert!(
            o.stderr.len() < 300,
            "{axes} axes: {} bytes",
            o.stderr.len()
        );
    }
    let long = "x".repeat(5000);
    std::fs::write(d.join("dtype.npy"), npy_header(&long, "(1, 1)")).expect("npy");
    let o = tcrtl(&[
        "gemm",
        "--a",
        &p(&d, "dtype.npy"),
        "--b",
        &p(&d, "dtype.npy"),
    ]);
    assert_error(&o, "unsupported dtype");
    assert!(o.stderr.len() < 400, "{} bytes", o.stderr.len());

    // SIGINT while `tb run all` writes its waves into a folder it made: the folder goes.
    let waves = d.join("new").join("dir");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_tcrtl"))
        .args(["tb", "run", "all", "--waves", &waves.display().to_string()])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn");
    let t = std::time::Instant::now();
    while !waves.exists() && t.elapsed().as_secs() < 60 {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    std::thread::sleep(std::time::Duration::from_millis(100));
    let killed = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("kill");
    assert!(killed.success());
    let status = child.wait().expect("wait");
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(status.signal(), Some(2), "{status:?}");
    assert!(
        !d.join("new").exists(),
        "left {:?}",
        listing(&d.join("new"))
    );
    assert_eq!(listing(&d), ["dtype.npy", "many.npy", "notadir"]);
    let _ = std::fs::remove_dir_all(&d);
}
