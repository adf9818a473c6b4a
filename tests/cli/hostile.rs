//! The second hardening round (docs/reliability.md, "Second round"): each test runs the
//! command a hostile user ran, and asserts the exit code, the one stderr line and the files
//! left afterwards. Test names carry the defect's number in that list.

use crate::common::cli::{assert_error, listing, npy_header, p, scratch, tcrtl, text};
use std::path::Path;

/// Runs `tcrtl` with owned arguments.
fn run(args: &[String]) -> std::process::Output {
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    tcrtl(&a)
}

/// Defect 1: a sweep length or sample count past the limits is refused before any work or
/// allocation (no panic, no abort, no growth), and no `--out` folder is made.
#[test]
fn r01_sweep_sizes_are_checked_before_work() {
    let d = scratch("hostile", "sweepk");
    for (k, samples, needle) in [
        (
            "18446744073709551615",
            "1",
            "--k 18446744073709551615 is longer",
        ),
        (
            "2305843009213693952",
            "1",
            "--k 2305843009213693952 is longer",
        ),
        (
            "16,18446744073709551615",
            "1",
            "--k 18446744073709551615 is longer",
        ),
        ("100000000000", "1", "limit of 1048576"),
        ("1000000000", "1", "--k 1000000000 is longer"),
        ("1048577", "1", "--k 1048577 is longer"),
        (
            "16",
            "18446744073709551615",
            "--samples 18446744073709551615 is more",
        ),
        ("16", "1099511627777", "limit of 1099511627776"),
    ] {
        let out = d.join("s");
        let o = tcrtl(&[
            "verify",
            "sweep",
            "--k",
            k,
            "--samples",
            samples,
            "--out",
            &out.display().to_string(),
        ]);
        assert_error(&o, needle);
        assert!(!out.exists(), "--k {k}: an --out folder was left");
    }
    // A sweep that fails after its checks (a mode the format lacks) leaves no folder either.
    let out = d.join("s");
    let o = tcrtl(&[
        "verify",
        "sweep",
        "--format",
        "tf32",
        "--acc",
        "nvidia",
        "--preset",
        "volta",
        "--k",
        "4",
        "--samples",
        "2",
        "--out",
        &out.display().to_string(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    assert!(!out.exists());
    // An --out that is a file is refused before the run.
    std::fs::write(&out, b"keep").expect("file");
    let o = tcrtl(&[
        "verify",
        "sweep",
        "--k",
        "4",
        "--samples",
        "2",
        "--out",
        &out.display().to_string(),
    ]);
    assert_error(&o, "not a directory");
    assert_eq!(std::fs::read(&out).expect("kept"), b"keep");
    // The largest K is accepted (one sample).
    let o = tcrtl(&[
        "verify",
        "sweep",
        "--format",
        "e4m3",
        "--acc",
        "fused",
        "--k",
        "1048576",
        "--samples",
        "1",
        "--out",
        &p(&d, "max"),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(listing(&d.join("max")), ["errors.svg", "summary.json"]);
    let _ = std::fs::remove_dir_all(&d);
}

/// Defect 6: a 2:4 sparse TF32 B at w = 1 (`--width 1` or an nvidia preset) is refused with
/// a user-facing line before the core is built, not the engine's storage-type message;
/// widths 2 and up still run.
#[test]
fn r06_sparse_tf32_at_width_1_is_a_clear_error() {
    let d = scratch("hostile", "sparse");
    let out = p(&d, "d.npy");
    for extra in [
        vec!["--format", "tf32"],
        vec!["--format", "tf32", "--width", "1"],
        vec!["--format", "tf32", "--acc", "nvidia", "--preset", "hopper"],
        vec!["--format", "fp16", "--format-b", "tf32", "--width", "1"],
    ] {
        let mut args: Vec<&str> = vec![
            "gemm", "--sparse", "--m", "8", "--n", "8", "--k", "64", "--out", &out,
        ];
        args.extend(&extra);
        let o = tcrtl(&args);
        assert_error(&o, "--sparse at w = 1 carries 4 tf32 B values (76 bits)");
        assert!(!text(&o.stderr).contains("storage type"));
        assert!(listing(&d).is_empty(), "{extra:?}: {:?}", listing(&d));
    }
    // A TF32 A at w = 1 (B in FP16) and TF32 at w = 2 run.
    for extra in [
        vec!["--format", "tf32", "--format-b", "fp16", "--width", "1"],
        vec!["--format", "tf32", "--width", "2"],
    ] {
        let mut args = vec!["gemm", "--sparse", "--m", "8", "--n", "8", "--k", "64"];
        args.extend(&extra);
        let o = tcrtl(&args);
        assert_eq!(o.status.code(), Some(0), "{extra:?}: {}", text(&o.stderr));
    }
    let _ = std::fs::remove_dir_all(&d);
}

/// The golden folder and VCD of a 4 x 4 x 6 FP16 problem in `d` (`g1/`, `gv.vcd`).
fn golden_and_vcd(d: &Path) {
    std::fs::create_dir_all(d.join("g1")).expect("g1");
    let o = tcrtl(&[
        "gemm",
        "--m",
        "4",
        "--n",
        "4",
        "--k",
        "6",
        "--seed",
        "3",
        "--memh",
        &p(d, "g1"),
        "--vcd",
        &p(d, "gv.vcd"),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
}

/// Defect 7: an accumulator whose golden values never appear (here mapped to the A lane) has
/// no lag: the report says so, and the JSON latency is null instead of a wrapped
/// 18446744073709551608; every step is a mismatch (exit 1).
#[test]
fn r07_grade_with_no_accumulator_lag_says_so() {
    let d = scratch("hostile", "lag");
    golden_and_vcd(&d);
    let base = |json: bool| {
        let mut v: Vec<String> = [
            "grade",
            "--golden",
            &p(&d, "g1"),
            "--vcd",
            &p(&d, "gv.vcd"),
            "--pe",
            "1,2",
            "--map",
            "clk=tensor_core.clk",
            "--map",
            "a=tensor_core.mesh.pe_1_2.a_in",
            "--map",
            "acc_after=tensor_core.mesh.pe_1_2.a_in",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        if json {
            v.push("--json".into());
        }
        v
    };
    let o = run(&base(false));
    let out = text(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{out}{}", text(&o.stderr));
    assert!(
        out.contains("acc_after: no golden value appears within 32 cycles"),
        "{out}"
    );
    assert!(!out.contains("18446744073709551"), "{out}");
    let o = run(&base(true));
    assert_eq!(o.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    assert!(v["acc_after_latency"].is_null(), "{v}");
    assert_eq!(v["mismatches"], 6, "{v}");
    let _ = std::fs::remove_dir_all(&d);
}

/// `summary.json` without the keys a merge may change (`shard`, `seconds`).
fn summary_body(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("summary.json"))
        .expect("summary")
        .lines()
        .filter(|l| !l.contains("\"shard\"") && !l.contains("\"seconds\""))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Defect 11: three shards merged reproduce the single run's summary byte for byte (apart
/// from `shard` and `seconds`). With this seed one maximum (3.3749266966864198e-6) used to
/// come back from the shard's JSON one ulp off.
#[test]
fn r11_merge_reproduces_the_single_run_exactly() {
    let d = scratch("hostile", "merge");
    let sweep = |shard: &str, out: &str| {
        let o = tcrtl(&[
            "verify",
            "sweep",
            "--format",
            "fp16",
            "--acc",
            "nvidia",
            "--preset",
            "hopper",
            "--k",
            "64",
            "--samples",
            "300",
            "--seed",
            "2",
            "--shard",
            shard,
            "--out",
            &p(&d, out),
        ]);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    };
    sweep("0/1", "whole");
    for i in 0..3 {
        sweep(&format!("{i}/3"), &format!("s{i}"));
    }
    let o = tcrtl(&[
        "verify",
        "merge",
        &p(&d, "s2"),
        &p(&d, "s0"),
        &p(&d, "s1"),
        "--out",
        &p(&d, "merged"),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let whole = summary_body(&d.join("whole"));
    assert!(whole.contains("3.3749266966864198e-6"), "{whole}");
    assert_eq!(summary_body(&d.join("merged")), whole);
    assert_eq!(
        std::fs::read(d.join("merged/errors.svg")).expect("svg"),
        std::fs::read(d.join("whole/errors.svg")).expect("svg")
    );
    let _ = std::fs::remove_dir_all(&d);
}

/// Defect 8: options that were accepted and silently ignored are errors naming the option,
/// and nothing is written.
#[test]
fn r08_ignored_options_are_errors() {
    let d = scratch("hostile", "ignored");
    let out = p(&d, "out");
    let npy = p(&d, "d.npy");
    let fst = p(&d, "w.fst");
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec!["dot", "--format", "s8", "--a", "1", "--b", "1", "--explain"],
            "--explain",
        ),
        (
            vec![
                "dot",
                "--format",
                "s8",
                "--a",
                "1",
                "--b",
                "1",
                "--out-format",
                "fp16",
            ],
            "--out-format fp16",
        ),
        (
            vec![
                "dot", "--format", "s8", "--acc", "ieee", "--a", "1", "--b", "1",
            ],
            "drop --acc",
        ),
        (
            vec![
                "memsweep",
                "--m",
                "8",
                "--n",
                "8",
                "--k",
                "8",
                "--out",
                &out,
                "--mem-latency",
                "5",
            ],
            "--mem-latency is set per point by memsweep's grid: use --latencies",
        ),
        (
            vec![
                "memsweep",
                "--m",
                "8",
                "--n",
                "8",
                "--k",
                "8",
                "--out",
                &out,
                "--mem-bandwidth",
                "5",
            ],
            "--mem-bandwidth is set per point by memsweep's grid: use --bandwidths",
        ),
        (
            vec![
                "memsweep",
                "--m",
                "8",
                "--n",
                "8",
                "--k",
                "8",
                "--out",
                &out,
                "--mem-in-flight",
                "5",
            ],
            "use --inflight",
        ),
        (
            vec![
                "gemm",
                "--format",
                "mxfp8e4m3",
                "--acc",
                "ieee",
                "--a",
                "a.npy",
                "--b",
                "b.npy",
                "--a-scales",
                "sa.npy",
                "--b-scales",
                "sb.npy",
            ],
            "--acc ieee: MX GEMMs run the fused MX datapath",
        ),
        (
            vec![
                "gemm",
                "--m",
                "8",
                "--n",
                "8",
                "--k",
                "8",
                "--out",
                &npy,
                "--vcd-limit",
                "0",
            ],
            "--vcd-limit needs --vcd",
        ),
        (
            vec![
                "gemm",
                "--m",
                "8",
                "--n",
                "8",
                "--k",
                "8",
                "--fst",
                &fst,
                "--vcd-limit",
                "0",
            ],
            "--vcd-limit applies to --vcd",
        ),
    ];
    for (args, needle) in cases {
        let o = tcrtl(&args);
        assert_error(&o, needle);
        assert!(listing(&d).is_empty(), "{args:?}: {:?}", listing(&d));
    }
    let _ = std::fs::remove_dir_all(&d);
}

/// Defect 2 (derived sizes): `memsweep` refuses a shape the core cannot run at once, as
/// `gemm` does, before making its folder; an --out that is a file is named as such.
#[test]
fn r02_memsweep_shape_refused_up_front() {
    let d = scratch("hostile", "memsweep");
    let out = d.join("ms");
    let start = std::time::Instant::now();
    let o = tcrtl(&[
        "memsweep",
        "--m",
        "16384",
        "--n",
        "16384",
        "--k",
        "1",
        "--out",
        &out.display().to_string(),
    ]);
    assert_error(&o, "16777216 4x4 tiles");
    assert!(start.elapsed().as_secs() < 5, "{:?}", start.elapsed());
    assert!(!out.exists());
    let o = tcrtl(&[
        "memsweep",
        "--m",
        "8",
        "--n",
        "8",
        "--k",
        "8",
        "--out",
        "/dev/null",
    ]);
    assert_error(&o, "--out /dev/null: not a directory");
    let _ = std::fs::remove_dir_all(&d);
}

/// Runs `tcrtl args` under GNU time when it is installed: the output and the peak resident
/// memory in KiB (`None` without /usr/bin/time).
fn run_measured(
    args: &[&str],
    stdin: Option<std::fs::File>,
) -> (std::process::Output, Option<u64>) {
    let time = Path::new("/usr/bin/time");
    let report = std::env::temp_dir().join(format!(
        "tcrtl-hostile-rss-{}-{}",
        std::process::id(),
        args.len()
    ));
    let mut cmd = if time.exists() {
        let mut c = std::process::Command::new(time);
        c.arg("-f")
            .arg("%M")
            .arg("-o")
            .arg(&report)
            .arg(env!("CARGO_BIN_EXE_tcrtl"));
        c
    } else {
        std::process::Command::new(env!("CARGO_BIN_EXE_tcrtl"))
    };
    cmd.args(args);
    if let Some(f) = stdin {
        cmd.stdin(f);
    }
    let o = cmd.output().expect("run");
    let kib = std::fs::read_to_string(&report)
        .ok()
        .and_then(|t| t.trim().lines().last()?.trim().parse().ok());
    let _ = std::fs::remove_file(&report);
    (o, kib)
}

/// The peak memory bound of every refused oversized input below (MiB).
const REFUSAL_PEAK_MIB: u64 = 400;

fn assert_peak(kib: Option<u64>, what: &str) {
    if let Some(k) = kib {
        assert!(
            k < REFUSAL_PEAK_MIB * 1024,
            "{what}: peak {k} KiB, over {REFUSAL_PEAK_MIB} MiB"
        );
    }
}

/// Runs `gemm --format e4m3` with A a sparse `u8` `.npy` of shape text `shape` and
/// `payload` bytes (nothing written to disk) and B a 4 x 4 `.npy`, in `d`; checks that the
/// answer came at once (under 5 s) and returns the output and the child's peak memory.
fn big_a_against_small_b(
    d: &Path,
    shape: &str,
    payload: u64,
) -> (std::process::Output, Option<u64>) {
    let header = npy_header("|u1", shape);
    let big = d.join("big.npy");
    std::fs::write(&big, &header).expect("header");
    std::fs::OpenOptions::new()
        .write(true)
        .open(&big)
        .expect("open")
        .set_len(header.len() as u64 + payload)
        .expect("sparse");
    let mut small = npy_header("|u1", "(4, 4)");
    small.extend_from_slice(&[0x38; 16]);
    std::fs::write(d.join("small.npy"), small).expect("small");
    let start = std::time::Instant::now();
    let measured = run_measured(
        &[
            "gemm",
            "--format",
            "e4m3",
            "--a",
            &p(d, "big.npy"),
            "--b",
            &p(d, "small.npy"),
        ],
        None,
    );
    assert!(start.elapsed().as_secs() < 5, "{:?}", start.elapsed());
    measured
}

/// Defect 2: oversized and endless inputs are refused with one line naming the limit, at
/// once and with bounded memory: a 1 GiB `u8` `.npy` of shape (32768, 32768) (refused from
/// its header, before the payload is read), a measurement file and a golden `d.hex` that are
/// `/dev/zero`, `wave-filter` reading `/dev/zero`, and a VCD with a 200 MiB `$comment`
/// (refused from its size, under 5 s: parsing the 128 MiB it may hold took 10 s).
#[test]
fn r02_oversized_inputs_are_refused_with_bounded_memory() {
    let d = scratch("hostile", "bounded");
    // The .npy: a sparse file, so nothing is written to disk.
    let (o, kib) = big_a_against_small_b(&d, "(32768, 32768)", 1 << 30);
    assert_error(
        &o,
        "holds 1073741824 elements, more than the limit of 268435456",
    );
    assert_peak(kib, "1 GiB .npy");

    // A measurement file that is /dev/zero.
    let set = d.join("set");
    std::fs::create_dir_all(&set).expect("set");
    for f in ["a_T_fp16.txt", "b_T_fp16.txt", "c_T_fp32.txt"] {
        std::fs::copy(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("data/tensor-core-measurements/H100/fp16")
                .join(f.replace('T', "H100")),
            set.join(f),
        )
        .expect("copy");
    }
    std::os::unix::fs::symlink("/dev/zero", set.join("d_T_fp32.txt")).expect("symlink");
    let (o, kib) = run_measured(
        &[
            "verify",
            "measurements",
            &set.display().to_string(),
            "--format",
            "fp16",
            "--preset",
            "hopper",
        ],
        None,
    );
    assert_error(
        &o,
        "larger than the 67108864-byte limit for a measurement file",
    );
    assert_peak(kib, "measurement /dev/zero");

    // A golden d.hex that is /dev/zero.
    let g = d.join("g");
    let s = d.join("s");
    std::fs::create_dir_all(&g).expect("g");
    std::fs::create_dir_all(&s).expect("s");
    let o = tcrtl(&[
        "gemm",
        "--m",
        "4",
        "--n",
        "4",
        "--k",
        "4",
        "--memh",
        &p(&d, "g"),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    std::fs::copy(g.join("d.hex"), s.join("d.hex")).expect("student");
    std::fs::remove_file(g.join("d.hex")).expect("rm");
    std::os::unix::fs::symlink("/dev/zero", g.join("d.hex")).expect("symlink");
    let (o, kib) = run_measured(
        &[
            "grade",
            "--golden",
            &g.display().to_string(),
            "--student",
            &s.display().to_string(),
        ],
        None,
    );
    assert_error(&o, "larger than the 268435456-byte limit for a golden file");
    assert_peak(kib, "golden /dev/zero");

    // wave-filter on /dev/zero.
    let zero = std::fs::File::open("/dev/zero").expect("/dev/zero");
    let (o, kib) = run_measured(&["wave-filter", "fp16"], Some(zero));
    assert_error(&o, "a line longer than the 65536-byte limit");
    assert_peak(kib, "wave-filter /dev/zero");

    // A VCD whose $comment runs for 200 MiB (a sparse file of NUL bytes).
    std::fs::create_dir_all(d.join("g1")).expect("g1");
    golden_and_vcd(&d);
    let vcd = d.join("huge.vcd");
    std::fs::write(&vcd, b"$comment ").expect("vcd");
    std::fs::OpenOptions::new()
        .write(true)
        .open(&vcd)
        .expect("open")
        .set_len(200 << 20)
        .expect("sparse");
    let start = std::time::Instant::now();
    let (o, kib) = run_measured(
        &[
            "grade",
            "--golden",
            &p(&d, "g1"),
            "--vcd",
            &vcd.display().to_string(),
            "--pe",
            "1,2",
            "--map",
            "clk=tensor_core.clk",
            "--map",
            "a=tensor_core.mesh.pe_1_2.a_in",
            "--map",
            "acc_after=tensor_core.mesh.pe_1_2.acc_0",
        ],
        None,
    );
    assert_error(
        &o,
        "larger than the 134217728-byte limit for a VCD to grade",
    );
    assert!(start.elapsed().as_secs() < 5, "{:?}", start.elapsed());
    assert_peak(kib, "VCD with a long $comment");
    let _ = std::fs::remove_dir_all(&d);
}

/// A stream has no size to refuse it by: the limited reader lets exactly `limit` bytes
/// through and refuses the byte after, naming the limit and the input.
#[test]
fn r02_a_stream_is_refused_as_it_is_read() {
    use std::io::Read;
    use tensorcore_rtl::io::bounded::LimitedReader;
    let limit = 100_000;
    let mut bytes = Vec::new();
    LimitedReader::new(std::io::repeat(7).take(limit), limit, "a test stream")
        .read_to_end(&mut bytes)
        .expect("exactly the limit passes");
    assert_eq!(bytes.len() as u64, limit);
    let e = LimitedReader::new(std::io::repeat(7), limit, "a test stream")
        .read_to_end(&mut Vec::new())
        .expect_err("an endless stream is refused");
    assert_eq!(
        e.to_string(),
        "larger than the 100000-byte limit for a test stream"
    );
}

/// Defect 9: the parsers accept only well-formed input. A text matrix with an empty element
/// or a trailing comma; `.npy` headers NumPy refuses (no closing brace, an empty tuple item,
/// an unknown key, a NUL byte, a nested tuple, an integer for a shape); parentheses that
/// only group are read as NumPy reads them, and for a repeated `'descr'` the last one counts. A VCD value wider than its signal, and time going backwards.
#[test]
fn r09_parsers_are_strict() {
    let d = scratch("hostile", "strict");
    std::fs::write(d.join("b.txt"), "1 0\n0 1\n").expect("b");
    for (name, body) in [("gaps.txt", "1,,3\n4,,6\n"), ("trail.txt", "1,2,\n3,4,\n")] {
        std::fs::write(d.join(name), body).expect("a");
        let o = tcrtl(&["gemm", "--a", &p(&d, name), "--b", &p(&d, "b.txt")]);
        assert_error(&o, ":1: A row 0 has an empty element");
    }
    // The same rows with single commas are read.
    std::fs::write(d.join("ok.txt"), "1, 2\n3,4\n").expect("a");
    let o = tcrtl(&["gemm", "--a", &p(&d, "ok.txt"), "--b", &p(&d, "b.txt")]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));

    let npy = |name: &str, header: &str, payload: usize| {
        let mut b = b"\x93NUMPY\x01\x00".to_vec();
        b.extend_from_slice(&(header.len() as u16).to_le_bytes());
        b.extend_from_slice(header.as_bytes());
        b.extend(std::iter::repeat_n(0x3c_u8, payload));
        std::fs::write(d.join(name), b).expect("npy");
        p(&d, name)
    };
    let good = npy(
        "good.npy",
        "{'descr': '<u2', 'fortran_order': False, 'shape': (2, 2), }\n",
        8,
    );
    for (header, needle) in [
        (
            "{'descr': '<u2', 'fortran_order': False, 'shape': (2, 2), \n",
            "bad header: expected a quoted string",
        ),
        (
            "{'descr': '<u2', 'fortran_order': False, 'shape': (2, 2,,), }\n",
            "bad header: an unsupported value at byte 56",
        ),
        (
            "{'descr': '<u2', 'fortran_order': False, 'shape': (2, 2), 'x': 1}\n",
            "bad header: unknown key 'x'",
        ),
        (
            "{'descr': '<u2', 'fortran_order': False, 'shape': (2, 2), }\0\n",
            "bad header: text after the closing brace",
        ),
        (
            "{'descr': '<u2', 'fortran_order': False, 'shape': ((2, 2), (2,)), }\n",
            "bad header: a shape item that is not an integer",
        ),
        (
            "{'descr': '<u2', 'fortran_order': False, 'shape': (4), }\n",
            "the integer 4, not a tuple",
        ),
    ] {
        let a = npy("bad.npy", header, 8);
        let o = tcrtl(&["gemm", "--a", &a, "--b", &good]);
        assert_error(&o, needle);
    }
    // Parentheses around the tuple or an item only group, as in Python: `((((2, 2))))` is
    // the shape (2, 2), read as NumPy reads it.
    let a = npy(
        "group.npy",
        "{'descr': '<u2', 'fortran_order': False, 'shape': ((((2), 2))), }\n",
        8,
    );
    let o = tcrtl(&["gemm", "--a", &a, "--b", &good]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    // A repeated 'descr': the last ('<u4', 4-byte elements) counts, so 8 bytes are too few.
    let a = npy(
        "dup.npy",
        "{'descr': '<u2', 'fortran_order': False, 'shape': (2, 2), 'descr': '<u4'}\n",
        8,
    );
    let o = tcrtl(&["gemm", "--a", &a, "--b", &good]);
    assert_error(&o, "expected 16 data bytes");

    // VCDs: the model's own, with one value widened past its signal, and with time going
    // back.
    std::fs::create_dir_all(d.join("g1")).expect("g1");
    golden_and_vcd(&d);
    let vcd = std::fs::read_to_string(d.join("gv.vcd")).expect("vcd");
    let grade = |name: &str| {
        tcrtl(&[
            "grade",
            "--golden",
            &p(&d, "g1"),
            "--vcd",
            &p(&d, name),
            "--pe",
            "1,2",
            "--map",
            "clk=tensor_core.clk",
            "--map",
            "a=tensor_core.mesh.pe_1_2.a_in",
            "--map",
            "acc_after=tensor_core.mesh.pe_1_2.acc_0",
        ])
    };
    let o = grade("gv.vcd");
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    // The first vector change after the header gets 65 bits.
    let body = vcd.find("$enddefinitions").expect("header end");
    let at = body + vcd[body..].find("\nb").expect("a vector change") + 1;
    let end = at + vcd[at..].find(' ').expect("id");
    let wide = format!("{}b1{}{}", &vcd[..at], "0".repeat(64), &vcd[end..]);
    std::fs::write(d.join("wide.vcd"), wide).expect("wide");
    assert_error(&grade("wide.vcd"), "a 65-bit value for the");
    let back = format!("{vcd}#0\n");
    std::fs::write(d.join("back.vcd"), back).expect("back");
    assert_error(&grade("back.vcd"), "timestamp #0 goes back from #");
    let _ = std::fs::remove_dir_all(&d);
}

/// Defect 10 (in part): an output that is also an input (`gemm`, `sparse compress`,
/// `convert`) is refused before the run and the input keeps its bytes; `tb run --waves`
/// naming a file says "not a directory".
#[test]
fn r10_output_that_is_an_input_is_refused() {
    let d = scratch("hostile", "inout");
    std::fs::write(d.join("a.txt"), "1 2\n3 4\n").expect("a");
    std::fs::write(d.join("b.txt"), "1 0\n0 1\n").expect("b");
    let a = p(&d, "a.txt");
    let b = p(&d, "b.txt");
    for (out, flag) in [(&a, "--a"), (&b, "--b")] {
        let o = tcrtl(&["gemm", "--a", &a, "--b", &b, "--out", out]);
        assert_error(&o, &format!("{flag} {out} is also an output of this run"));
    }
    assert_eq!(
        std::fs::read_to_string(d.join("a.txt")).expect("a"),
        "1 2\n3 4\n"
    );
    assert_eq!(listing(&d), ["a.txt", "b.txt"]);
    let o = tcrtl(&["tb", "run", "all", "--waves", &a]);
    assert_error(&o, "not a directory");
    assert_eq!(listing(&d), ["a.txt", "b.txt"]);
    // `sparse compress --values` and `convert --out` naming their input.
    let x = d.join("x.npy");
    tensorcore_rtl::io::npy::write_npy(
        &x,
        &[2, 4],
        tensorcore_rtl::io::npy::Dtype::U16,
        &[0x3c00; 8],
    )
    .expect("x");
    let before = std::fs::read(&x).expect("x");
    let xs = x.display().to_string();
    let o = tcrtl(&[
        "sparse",
        "compress",
        "--a",
        &xs,
        "--format",
        "fp16",
        "--values",
        &xs,
        "--meta",
        &p(&d, "m.npy"),
    ]);
    assert_error(&o, &format!("--a {xs} is also an output of this run"));
    let o = tcrtl(&["convert", "--to", "e2m1", "--in", &xs, "--out", &xs]);
    assert_error(&o, &format!("--in {xs} is also an output of this run"));
    assert_eq!(std::fs::read(&x).expect("x"), before);
    assert_eq!(listing(&d), ["a.txt", "b.txt", "x.npy"]);
    let _ = std::fs::remove_dir_all(&d);
}

/// Defect 2, the rest: a `.npy` pair within the size limits but with inner dimensions that
/// differ (a 256 MiB `u8` A of shape (16384, 16384), the most elements an operand may hold,
/// and a 4 x 4 B) is refused from the two headers, before any payload is read: peak memory
/// below 64 MiB (it was the payload plus 2 GiB of 64-bit words before the check).
#[test]
fn r02_npy_operands_are_checked_from_their_headers() {
    let d = scratch("hostile", "headers");
    let (o, kib) = big_a_against_small_b(&d, "(16384, 16384)", 1 << 28);
    assert_error(
        &o,
        "inner dimensions differ: A is 16384 x 16384 but B is 4 x 4",
    );
    if let Some(k) = kib {
        assert!(k < 64 * 1024, "peak {k} KiB");
    }
    let _ = std::fs::remove_dir_all(&d);
}
