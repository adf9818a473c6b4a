//! The command line as a hostile user drives it (the hardening defects listed in
//! docs/reliability.md): failing and closed standard output, special files and symlinks as outputs,
//! outputs naming one file, nothing left behind by a failed or interrupted run, no vacuous pass, a
//! strict measurement loader, exit codes 2 (input or I/O error) versus 1 (mismatch), only runnable
//! modes offered, empty trace windows and globs, strict operands, size limits before allocation,
//! and one-line argument errors. Each test names the defect it proves fixed.

use crate::common::cli::{assert_error, listing, p, scratch, tcrtl, text};
use std::os::unix::fs::FileTypeExt;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};
use tensorcore_rtl::io::npy::{write_npy, Dtype};

const SET: &str = "data/tensor-core-measurements/H100/fp16";

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_tcrtl"));
    c.current_dir(env!("CARGO_MANIFEST_DIR"));
    c
}

/// A small fp16 GEMM's operands in `d`: a.npy (2 x 4), b.npy (4 x 3).
fn operands(d: &Path) {
    write_npy(&d.join("a.npy"), &[2, 4], Dtype::U16, &[0x3C00; 8]).expect("a");
    write_npy(&d.join("b.npy"), &[4, 3], Dtype::U16, &[0x4000; 12]).expect("b");
}

/// Defect 1: a failing standard output is a one-line error with exit code 2 for every
/// subcommand, `--help` included.
#[test]
fn d01_full_stdout_is_an_error_not_a_panic() {
    let d = scratch("harden", "full");
    operands(&d);
    let runs: Vec<Vec<String>> = [
        vec!["tb", "list"],
        vec!["--help"],
        vec!["gemm", "--help"],
        vec!["--version"],
        vec!["dot", "--a", "1", "--b", "1"],
        vec![
            "verify",
            "measurements",
            SET,
            "--format",
            "fp16",
            "--preset",
            "hopper",
            "--limit",
            "2",
        ],
        vec!["gemm", "--m", "4", "--n", "4", "--k", "4"],
        vec![
            "gemm",
            "--a",
            &p(&d, "a.npy"),
            "--b",
            &p(&d, "b.npy"),
            "--json",
        ],
    ]
    .iter()
    .map(|v| v.iter().map(|s| s.to_string()).collect())
    .collect();
    for args in runs {
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .expect("/dev/full");
        let o = bin()
            .args(&args)
            .stdout(Stdio::from(full))
            .output()
            .expect("run");
        assert_error(&o, "No space left on device");
    }
}

/// Defect 1: a closed pipe ends the process quietly by SIGPIPE (as `ls | head` does): no
/// panic, no message.
#[test]
fn d01_closed_pipe_ends_quietly() {
    for args in [
        vec!["tb", "list"],
        vec!["--help"],
        vec![
            "verify",
            "measurements",
            SET,
            "--format",
            "fp16",
            "--preset",
            "volta",
            "--show",
            "300",
        ],
        vec!["dot", "--a", "1", "--b", "1", "--json"],
    ] {
        // A pipe whose reading end is closed before the child even starts, so its first write
        // meets a closed pipe whatever the scheduling.
        let (reader, writer) = std::io::pipe().expect("pipe");
        drop(reader);
        let child = bin()
            .args(&args)
            .stdout(Stdio::from(writer))
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn");
        let o = child.wait_with_output().expect("wait");
        let err = text(&o.stderr);
        assert!(err.is_empty(), "{args:?}: {err}");
        assert_eq!(o.status.signal(), Some(13), "{args:?}: {:?}", o.status);
    }
}

/// Defect 2: a special file is written through (its error reported), a FIFO stays a FIFO,
/// and a symlink stays a symlink whose target gets the data.
#[test]
fn d02_special_files_and_symlinks_are_written_through() {
    let d = scratch("harden", "special");
    let o = tcrtl(&[
        "gemm",
        "--m",
        "4",
        "--n",
        "4",
        "--k",
        "4",
        "--out",
        "/dev/full",
    ]);
    assert_error(&o, "No space left on device");
    assert!(std::fs::metadata("/dev/full")
        .expect("/dev/full")
        .file_type()
        .is_char_device());

    let fifo = d.join("fifo");
    let made = Command::new("mkfifo").arg(&fifo).status().expect("mkfifo");
    assert!(made.success());
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read(fifo).expect("read fifo"))
    };
    let o = tcrtl(&[
        "gemm",
        "--m",
        "4",
        "--n",
        "4",
        "--k",
        "4",
        "--out",
        &p(&d, "fifo"),
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let bytes = reader.join().expect("reader");
    assert!(bytes.starts_with(b"\x93NUMPY"), "{} bytes", bytes.len());
    assert!(std::fs::symlink_metadata(&fifo)
        .expect("fifo")
        .file_type()
        .is_fifo());

    std::fs::write(d.join("real.npy"), b"old").expect("write");
    std::os::unix::fs::symlink("real.npy", d.join("link.npy")).expect("symlink");
    std::fs::write(d.join("real.vcd"), b"old").expect("write");
    std::os::unix::fs::symlink(d.join("real.vcd"), d.join("link.vcd")).expect("symlink");
    let o = tcrtl(&[
        "gemm",
        "--m",
        "4",
        "--n",
        "4",
        "--k",
        "4",
        "--out",
        &p(&d, "link.npy"),
        "--vcd",
        &p(&d, "link.vcd"),
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    for (link, real, magic) in [
        ("link.npy", "real.npy", &b"\x93NUMPY"[..]),
        ("link.vcd", "real.vcd", &b"$"[..]),
    ] {
        let meta = std::fs::symlink_metadata(d.join(link)).expect("link");
        assert!(meta.file_type().is_symlink(), "{link} was replaced");
        let data = std::fs::read(d.join(real)).expect("target");
        assert!(data.starts_with(magic), "{real} not rewritten");
    }
}

/// Found by fuzzing: an FST to a special file (the FST writer seeks) is an error, not a
/// panic in the writer.
#[test]
fn fst_to_a_device_is_an_error() {
    let o = tcrtl(&[
        "gemm",
        "--m",
        "4",
        "--n",
        "4",
        "--k",
        "4",
        "--fst",
        "/dev/null",
    ]);
    assert_error(&o, "an FST needs a regular file");
}

/// Defect 3: two outputs naming one file are refused before any work, and nothing is written.
#[test]
fn d03_outputs_naming_one_file_are_refused() {
    let d = scratch("harden", "same");
    operands(&d);
    let a = ["--m", "4", "--n", "4", "--k", "4"];
    let cases: Vec<Vec<String>> = vec![
        vec!["--vcd".into(), p(&d, "same.gtkw")],
        vec!["--vcd".into(), p(&d, "x"), "--out".into(), p(&d, "x")],
        vec![
            "--vcd".into(),
            p(&d, "w.vcd"),
            "--out".into(),
            p(&d, "w.gtkw"),
        ],
        vec![
            "--out".into(),
            p(&d, "m/a.hex"),
            "--memh".into(),
            p(&d, "m"),
        ],
    ];
    std::fs::create_dir_all(d.join("m")).expect("m");
    for extra in cases {
        let mut args = vec!["gemm".to_string()];
        args.extend(a.iter().map(|s| s.to_string()));
        args.extend(extra);
        let o = bin().args(&args).output().expect("run");
        assert_error(&o, "are the same file");
    }
    let o = tcrtl(&[
        "sparse",
        "compress",
        "--a",
        &p(&d, "a.npy"),
        "--format",
        "fp16",
        "--values",
        &p(&d, "s.npy"),
        "--meta",
        &p(&d, "./s.npy"),
    ]);
    assert_error(&o, "are the same file");
    assert_eq!(listing(&d), ["a.npy", "b.npy", "m"]);
    assert!(listing(&d.join("m")).is_empty());
}

/// Defect 4: a failed run leaves nothing new behind: outputs are checked before any work,
/// and a failure after some files were written removes them.
#[test]
fn d04_a_failed_run_leaves_nothing_behind() {
    let d = scratch("harden", "leftovers");
    write_npy(
        &d.join("dense.npy"),
        &[1, 4],
        Dtype::U16,
        &[0x3C00, 0, 0, 0],
    )
    .expect("a");
    let o = tcrtl(&[
        "sparse",
        "compress",
        "--a",
        &p(&d, "dense.npy"),
        "--format",
        "fp16",
        "--values",
        &p(&d, "v.npy"),
        "--meta",
        &p(&d, "nodir/m.npy"),
    ]);
    assert_error(&o, "does not exist");
    assert_eq!(listing(&d), ["dense.npy"]);

    // One --memh target blocked (a directory): refused before D or any image is written.
    std::fs::create_dir_all(d.join("mem/c.hex")).expect("blocker");
    let o = tcrtl(&[
        "gemm",
        "--m",
        "4",
        "--n",
        "4",
        "--k",
        "4",
        "--out",
        &p(&d, "D.npy"),
        "--memh",
        &p(&d, "mem"),
    ]);
    assert_error(&o, "c.hex");
    assert_eq!(listing(&d), ["dense.npy", "mem"]);
    assert_eq!(listing(&d.join("mem")), ["c.hex"]);

    // A failure after the waveform was committed removes it and its save file.
    let o = tcrtl(&[
        "gemm",
        "--m",
        "4",
        "--n",
        "4",
        "--k",
        "4",
        "--vcd",
        &p(&d, "w.vcd"),
        "--out",
        "/dev/full",
    ]);
    assert_error(&o, "No space left on device");
    assert_eq!(listing(&d), ["dense.npy", "mem"]);
}

/// Waits until a temporary `PREFIX<pid>-<n>-<random>.partial` exists in `dir` (at most 60 s).
fn wait_for_temp(dir: &Path, prefix: &str) -> bool {
    let t = Instant::now();
    while t.elapsed() < Duration::from_secs(60) {
        if listing(dir)
            .iter()
            .any(|n| n.starts_with(prefix) && n.ends_with(".partial"))
        {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

/// Defect 5: SIGINT or SIGTERM during a traced run removes the partial waveform.
#[test]
fn d05_an_interrupted_trace_leaves_no_partial_file() {
    for (sig, name) in [(15, "TERM"), (2, "INT")] {
        let d = scratch("harden", &format!("signal-{name}"));
        let mut child = bin()
            .args([
                "gemm",
                "--m",
                "64",
                "--n",
                "64",
                "--k",
                "8192",
                "--vcd",
                &p(&d, "long.vcd"),
                "--vcd-limit",
                "100000",
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn");
        assert!(wait_for_temp(&d, "long.vcd."), "no temporary file");
        std::thread::sleep(Duration::from_millis(200));
        let killed = Command::new("kill")
            .args([format!("-{name}"), child.id().to_string()])
            .status()
            .expect("kill");
        assert!(killed.success());
        let status = child.wait().expect("wait");
        assert_eq!(status.signal(), Some(sig), "{status:?}");
        assert!(listing(&d).is_empty(), "{name}: left {:?}", listing(&d));
    }
}

/// A measurement set in `d` from the given file contents.
fn set(d: &Path, a: &str, b: &str, c: &str, dd: &str) {
    std::fs::write(d.join("a_T_fp16.txt"), a).expect("a");
    std::fs::write(d.join("b_T_fp16.txt"), b).expect("b");
    std::fs::write(d.join("c_T_fp32.txt"), c).expect("c");
    std::fs::write(d.join("d_T_fp32.txt"), dd).expect("d");
}

const ONE_BITS: &str = "00111111100000000000000000000000";
const TWO_BITS: &str = "01000000000000000000000000000000";

fn verify(d: &Path, extra: &[&str]) -> Output {
    let dir = d.display().to_string();
    let mut args = vec![
        "verify",
        "measurements",
        &dir,
        "--format",
        "fp16",
        "--preset",
        "hopper",
    ];
    args.extend(extra);
    tcrtl(&args)
}

/// Defect 6: nothing checked is an error, never `0/0` and exit 0.
#[test]
fn d06_nothing_checked_is_not_a_pass() {
    assert_error(
        &verify(Path::new(SET), &["--limit", "0"]),
        "no rows to check",
    );
    let d = scratch("harden", "empty-set");
    set(&d, "", "", "", "");
    assert_error(&verify(&d, &[]), "no rows to check");
}

/// Defect 7: words of the wrong length, stray files and blank lines are refused with the
/// file and its exact line; the files used are named in the output.
#[test]
fn d07_measurement_loader_is_strict() {
    let d = scratch("harden", "loader");
    // Row: 1*1 + 1*1 + ... (K = 1), C = 1, D = 2 (1 + 1*1).
    set(
        &d,
        "3f800000\n",
        "3f800000\n",
        &format!("{ONE_BITS}\n"),
        &format!("{TWO_BITS}\n"),
    );
    let o = verify(&d, &[]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    assert!(out.contains("1/1 rows match"), "{out}");
    assert!(
        out.contains("a_T_fp16.txt") && out.contains("d_T_fp32.txt"),
        "{out}"
    );

    // A hex word missing a digit.
    set(
        &d,
        "3f80000\n",
        "3f800000\n",
        &format!("{ONE_BITS}\n"),
        &format!("{TWO_BITS}\n"),
    );
    assert_error(&verify(&d, &[]), "a_T_fp16.txt:1: bad hex word \"3f80000\"");
    // A binary word missing a digit.
    set(
        &d,
        "3f800000\n",
        "3f800000\n",
        &format!("{ONE_BITS}\n"),
        &format!("{}\n", &TWO_BITS[1..]),
    );
    assert_error(&verify(&d, &[]), "d_T_fp32.txt:1: bad binary word");
    // A blank line inside: the error is at the file's own line 3.
    set(
        &d,
        "3f800000\n\n3f80000\n",
        "3f800000\n\n3f800000\n",
        &format!("{ONE_BITS}\n\n{ONE_BITS}\n"),
        &format!("{TWO_BITS}\n\n{TWO_BITS}\n"),
    );
    assert_error(&verify(&d, &[]), "a_T_fp16.txt:2: blank line");
    // A stray file beside the set's.
    set(
        &d,
        "3f800000\n",
        "3f800000\n",
        &format!("{ONE_BITS}\n"),
        &format!("{TWO_BITS}\n"),
    );
    std::fs::write(d.join("a_0_old.txt"), "40000000\n").expect("stray");
    assert_error(&verify(&d, &[]), "ambiguous set, 2 files match a_*.txt");
}

/// Defect 8: an I/O error is exit 2, not a FAIL; an empty compressed pair is an input error.
#[test]
fn d08_io_and_input_errors_exit_2() {
    assert_error(
        &tcrtl(&["tb", "run", "specials", "--waves", "/proc"]),
        "/proc",
    );
    let d = scratch("harden", "empty-pair");
    write_npy(&d.join("v.npy"), &[4, 0], Dtype::U16, &[]).expect("v");
    write_npy(&d.join("m.npy"), &[4, 0], Dtype::U8, &[]).expect("m");
    let o = tcrtl(&[
        "sparse",
        "check",
        "--a-values",
        &p(&d, "v.npy"),
        "--a-meta",
        &p(&d, "m.npy"),
        "--format",
        "fp16",
    ]);
    assert_error(&o, "empty matrix");
}

/// Defect 9: `gemm` offers only the modes it runs.
#[test]
fn d09_gemm_offers_no_exact_mode() {
    let o = tcrtl(&["gemm", "--help"]);
    let help = text(&o.stdout);
    let acc = help
        .lines()
        .find(|l| l.trim_start().starts_with("--acc"))
        .expect("--acc line");
    assert!(!acc.contains("exact"), "{acc}");
    let o = tcrtl(&["gemm", "--m", "4", "--n", "4", "--k", "4", "--acc", "exact"]);
    assert_error(&o, "--acc exact is a reference");
    let doc = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/cli.md"))
        .expect("docs/cli.md");
    let gemm = doc
        .split("## `tcrtl gemm`")
        .nth(1)
        .and_then(|s| s.split("\n## ").next())
        .expect("gemm section");
    assert!(gemm.contains("`--acc {ieee,fused,nvidia}`"), "{gemm}");
    assert!(
        !gemm.contains("{ieee,fused,exact,nvidia}"),
        "docs/cli.md lists exact for gemm"
    );
}

/// Defect 10: a window past the run, a glob matching nothing and a window near u64::MAX are
/// errors, and leave no file.
#[test]
fn d10_empty_traces_are_errors() {
    let d = scratch("harden", "empty-trace");
    let base = ["gemm", "--m", "4", "--n", "4", "--k", "4", "--vcd"];
    let vcd = p(&d, "t.vcd");
    let run = |extra: &[&str]| {
        let mut args: Vec<&str> = base.to_vec();
        args.push(&vcd);
        args.extend(extra);
        tcrtl(&args)
    };
    assert_error(
        &run(&["--trace-window", "100000:100010"]),
        "holds no cycle of the run",
    );
    assert_error(&run(&["--trace-glob", "no.such.signal"]), "match no signal");
    let max = format!("{}:{}", u64::MAX - 1, u64::MAX);
    assert_error(&run(&["--trace-window", &max]), "--trace-window");
    let near = format!("{}:{}", u64::MAX / 10 - 1, u64::MAX / 10);
    assert_error(&run(&["--trace-window", &near]), "holds no cycle");
    assert!(listing(&d).is_empty(), "{:?}", listing(&d));
}

/// Defect 11: the operand grammar is strict (and zero takes any exponent).
#[test]
fn d11_strict_operand_grammar() {
    for bad in ["-+inf", "--inf", "0x+3c00", "+-1", "0x", "1e"] {
        let o = tcrtl(&["dot", "--a", bad, "--b", "1"]);
        assert_error(&o, bad);
    }
    let o = tcrtl(&["dot", "--a", "0e5000", "--b", "1", "--c", "-nan", "--json"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let o = tcrtl(&["dot", "--a", "-nan", "--b", "1", "--c", "0x0", "--json"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
}

/// Defect 12: a problem too large is refused at once, and a VCD estimated too large is
/// refused before the run with its estimate and the ways out.
#[test]
fn d12_size_limits_before_work() {
    let t = Instant::now();
    let o = tcrtl(&["gemm", "--m", "16384", "--n", "16384", "--k", "1"]);
    assert_error(&o, "tiles");
    assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());
    let d = scratch("harden", "vcd-size");
    let t = Instant::now();
    let o = tcrtl(&[
        "gemm",
        "--m",
        "512",
        "--n",
        "512",
        "--k",
        "512",
        "--vcd",
        &p(&d, "big.vcd"),
    ]);
    assert_error(&o, "use --fst");
    assert!(text(&o.stderr).contains("MB"), "{}", text(&o.stderr));
    assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
    assert!(listing(&d).is_empty());
}

/// Argument-parser errors are one line, as docs/cli.md promises.
#[test]
fn parser_errors_are_one_line() {
    for (args, needle) in [
        (vec!["gemm", "--foo"], "unexpected argument '--foo'"),
        (vec!["verify", "measurements"], "--format"),
        (vec!["nope"], "unrecognized subcommand"),
        (
            vec!["gemm", "--m", "x", "--n", "1", "--k", "1"],
            "invalid value 'x'",
        ),
        (vec![], "subcommand"),
    ] {
        assert_error(&tcrtl(&args), needle);
    }
}
