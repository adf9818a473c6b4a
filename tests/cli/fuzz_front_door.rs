//! Structured fuzzing of every parser of outside input and of the command line (the hardening
//! review of docs/reliability.md), with proptest generators (cargo-fuzz/libFuzzer needs a nightly
//! toolchain; CI is stable).
//!
//! - `.npy` bytes: random bytes, and valid files mutated (bit flips, truncation, edited
//!   header text): `parse_npy` returns `Ok` or `Err`, never panics, and an `Ok` array holds
//!   exactly `product(shape)` elements.
//! - Measurement sets: valid files mutated line by line (digits dropped or added, blank lines,
//!   junk, stray files): `load` never panics; an `Ok` set has four equal row counts and K
//!   values in every A and B row.
//! - Trace globs: any pattern against any path never panics; a pattern without wildcards
//!   selects itself, and `*` selects everything.
//! - The command line: random argument vectors from a vocabulary of good and bad flags,
//!   values and paths (special files, symlinks, missing directories, same-path outputs, the
//!   side files of a trace, `/dev/stdout`, a path under a file, sizes past the limits, a text
//!   matrix with an empty element, a `.npy` of 4000 axes, `/dev/zero` as an input). Per run:
//!   no panic, exit code 0, 1 or 2 only, exit 2 prints exactly one `error: ...` line, leaves
//!   no new file behind and changes no file's bytes, and no temporary (`.partial`) or lock
//!   file is ever left.
//!
//! (Operand strings and trace windows are fuzzed in `tests/cli/operand_grammar.rs`.)
//! The default run is bounded (seconds); `TCRTL_FUZZ_CASES=N` sets the cases per harness for a
//! long run (docs/reliability.md).

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use std::path::{Path, PathBuf};
use std::process::Command;
use tensorcore_rtl::io::npy::{parse_npy, write_npy, Dtype};
use tensorcore_rtl::rtl::TraceConfig;
use tensorcore_rtl::verify::measurements::load;

/// Cases per harness: `TCRTL_FUZZ_CASES`, else `default`.
fn cases(default: u32) -> u32 {
    std::env::var("TCRTL_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn runner(default: u32) -> TestRunner {
    let cases = cases(default);
    TestRunner::new(Config {
        cases,
        failure_persistence: None,
        // The command-line harness sets aside the cases that would be minutes of legal work
        // (`prop_assume!`): allow one such draw per case.
        max_global_rejects: cases.max(1024),
        ..Config::default()
    })
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("tcrtl-fuzz-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("scratch dir");
    d
}

/// The bytes of a valid `.npy` file.
fn valid_npy(shape: &[usize], dtype: Dtype, words: &[u64]) -> Vec<u8> {
    let d = scratch(&format!("npy-{}", words.len()));
    let p = d.join("x.npy");
    write_npy(&p, shape, dtype, words).expect("write");
    let bytes = std::fs::read(&p).expect("read");
    let _ = std::fs::remove_dir_all(&d);
    bytes
}

fn check_npy(bytes: &[u8]) -> Result<(), TestCaseError> {
    if let Ok(arr) = parse_npy(bytes, Path::new("fuzz.npy")) {
        let count: usize = arr.shape.iter().product();
        prop_assert_eq!(arr.len(), count);
    }
    Ok(())
}

#[test]
fn fuzz_npy_parser() {
    let seeds = [
        valid_npy(&[2, 3], Dtype::U16, &[1, 2, 3, 4, 5, 6]),
        valid_npy(&[4], Dtype::F32, &[0x3F80_0000; 4]),
        valid_npy(&[2, 2], Dtype::U8, &[1, 2, 3, 4]),
        std::fs::read(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/np_uint8_fortran_2x3.npy"),
        )
        .expect("fixture"),
    ];
    let mut r = runner(400);
    // Arbitrary bytes, sometimes behind the magic.
    r.run(
        &(any::<bool>(), prop::collection::vec(any::<u8>(), 0..200)),
        |(magic, tail)| {
            let mut b = if magic {
                b"\x93NUMPY".to_vec()
            } else {
                Vec::new()
            };
            b.extend(tail);
            check_npy(&b)
        },
    )
    .expect("random bytes");
    // Valid files, mutated.
    let header_edits = [
        ("'shape': (", "'shape': (99999999999999999999, "),
        ("'shape': (", "'shape': (-1, "),
        ("'shape': (", "'shape': (4294967296, 4294967296, 16, "),
        ("'shape': (", "'shape': ((, "),
        ("'descr': '", "'descr': '>"),
        ("'descr': '<u2'", "'descr': '<u8'"),
        ("False", "Maybe"),
        ("False", "True"),
        ("}", ""),
        (": ", ":"),
        // The second round's strict-header cases: grouping and nested parentheses, an
        // unknown key, a repeated 'descr', a NUL byte after the brace.
        ("'shape': (", "'shape': ((("),
        ("'shape': (", "'shape': ((2), "),
        ("}", ", 'x': 1}"),
        ("'descr'", "'descr': '<u4', 'descr'"),
        ("}", "}\0"),
    ];
    r.run(
        &(
            0..seeds.len(),
            prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..4),
            prop::option::of(any::<prop::sample::Index>()),
            prop::option::of(0..header_edits.len()),
        ),
        |(seed, flips, cut, edit)| {
            let mut b = seeds[seed].clone();
            if let Some(e) = edit {
                let (from, to) = header_edits[e];
                let text = String::from_utf8_lossy(&b[..b.len().min(128)]).into_owned();
                if let Some(i) = text.find(from) {
                    let mut nb = b[..i].to_vec();
                    nb.extend_from_slice(to.as_bytes());
                    nb.extend_from_slice(&b[i + from.len()..]);
                    b = nb;
                }
            }
            for (i, v) in flips {
                if !b.is_empty() {
                    let at = i.index(b.len());
                    b[at] ^= v;
                }
            }
            if let Some(c) = cut {
                let at = c.index(b.len() + 1);
                b.truncate(at);
            }
            check_npy(&b)
        },
    )
    .expect("mutated files");
}

/// One mutation of a measurement file's text.
#[derive(Clone, Debug)]
enum LineEdit {
    DropChar(prop::sample::Index, prop::sample::Index),
    AddChar(prop::sample::Index, char),
    Blank(prop::sample::Index),
    Junk(prop::sample::Index, String),
    DropLine(prop::sample::Index),
}

fn line_edit() -> impl Strategy<Value = LineEdit> {
    prop_oneof![
        (any::<prop::sample::Index>(), any::<prop::sample::Index>())
            .prop_map(|(l, c)| LineEdit::DropChar(l, c)),
        (
            any::<prop::sample::Index>(),
            prop::sample::select(vec!['0', '1', 'f', 'g', ' ', '-', '\t', 'é'])
        )
            .prop_map(|(l, c)| LineEdit::AddChar(l, c)),
        any::<prop::sample::Index>().prop_map(LineEdit::Blank),
        (any::<prop::sample::Index>(), "[ -~]{0,12}").prop_map(|(l, s)| LineEdit::Junk(l, s)),
        any::<prop::sample::Index>().prop_map(LineEdit::DropLine),
    ]
}

fn apply(text: &str, edit: &LineEdit) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    if lines.is_empty() {
        return text.to_string();
    }
    let n = lines.len();
    match edit {
        LineEdit::DropChar(l, c) => {
            let line = &mut lines[l.index(n)];
            if !line.is_empty() {
                let at = c.index(line.len());
                if line.is_char_boundary(at) {
                    line.remove(at);
                }
            }
        }
        LineEdit::AddChar(l, ch) => lines[l.index(n)].push(*ch),
        LineEdit::Blank(l) => {
            let at = l.index(lines.len());
            lines.insert(at, String::new());
        }
        LineEdit::Junk(l, s) => lines[l.index(n)] = s.clone(),
        LineEdit::DropLine(l) => {
            let at = l.index(lines.len());
            lines.remove(at);
        }
    }
    let mut out = lines.join("\n");
    out.push('\n');
    out
}

#[test]
fn fuzz_measurement_loader() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/tensor-core-measurements/H100/fp16");
    let first = |prefix: &str| -> (String, String) {
        let mut names: Vec<PathBuf> = std::fs::read_dir(&src)
            .expect("set")
            .map(|e| e.expect("entry").path())
            .filter(|p| {
                p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with(prefix))
            })
            .collect();
        names.sort();
        let p = &names[0];
        let text = std::fs::read_to_string(p).expect("read");
        let head: Vec<&str> = text.lines().take(4).collect();
        (
            p.file_name().expect("name").to_string_lossy().into_owned(),
            head.join("\n") + "\n",
        )
    };
    let files = [first("a_"), first("b_"), first("c_"), first("d_")];
    let d = scratch("measurements");
    let mut r = runner(150);
    r.run(
        &(
            prop::collection::vec((0..4usize, line_edit()), 0..4),
            any::<bool>(),
            prop::option::of(0..5usize),
        ),
        |(edits, stray, limit)| {
            let _ = std::fs::remove_dir_all(&d);
            std::fs::create_dir_all(&d).expect("dir");
            let mut texts: Vec<String> = files.iter().map(|(_, t)| t.clone()).collect();
            for (f, e) in &edits {
                texts[*f] = apply(&texts[*f], e);
            }
            for ((name, _), text) in files.iter().zip(&texts) {
                std::fs::write(d.join(name), text).expect("write");
            }
            if stray {
                std::fs::write(d.join("a_0_old.txt"), &texts[0]).expect("stray");
            }
            match load(&d, limit) {
                Ok(set) => {
                    prop_assert!(!stray, "a stray a_ file was accepted");
                    let n = set.a.len();
                    prop_assert!(set.b.len() == n && set.c.len() == n && set.d.len() == n);
                    prop_assert!(set.a.iter().chain(&set.b).all(|r| r.len() == set.k));
                    prop_assert!(limit.is_none_or(|l| n <= l));
                }
                Err(e) => prop_assert!(!e.is_empty() && !e.contains('\n'), "{e}"),
            }
            Ok(())
        },
    )
    .expect("measurement loader");
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn fuzz_trace_globs() {
    let mut r = runner(2000);
    let part = "[a-z_0-9*?.\\[\\]]{0,8}";
    r.run(&(part, "[a-z_0-9.]{0,16}"), |(pattern, path)| {
        let cfg = TraceConfig::vcd("x.vcd").glob(pattern.clone());
        let _ = cfg.selects(&path);
        if !pattern.contains(['*', '?', '[', ']']) && !pattern.is_empty() {
            let selects_self = cfg.selects(&pattern);
            let whole =
                !pattern.starts_with('.') && !pattern.ends_with('.') && !pattern.contains("..");
            if whole {
                prop_assert!(selects_self, "{pattern:?} does not select itself");
            }
        }
        prop_assert!(TraceConfig::vcd("x.vcd").glob("*").selects(&path) || path.is_empty());
        Ok(())
    })
    .expect("globs");
}

/// One word of a command line (a flag, a value, or a flag with its value).
fn word_pool(dir: &Path) -> Vec<Vec<String>> {
    let set = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("data/tensor-core-measurements/H100/fp16")
        .display()
        .to_string();
    let p = |f: &str| dir.join(f).display().to_string();
    let mut pool: Vec<Vec<String>> = Vec::new();
    let mut flag = |f: &str, values: &[String]| {
        for v in values {
            pool.push(vec![f.to_string(), v.clone()]);
        }
    };
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    flag(
        "--m",
        &s(&[
            "1",
            "4",
            "5",
            "0",
            "-1",
            "x",
            "16384",
            "99999999999999999999",
        ]),
    );
    flag("--n", &s(&["1", "3", "4", "0", "16384"]));
    flag("--k", &s(&["1", "4", "8", "0", "q"]));
    flag("--seed", &s(&["1", "-3", "18446744073709551616"]));
    flag(
        "--format",
        &s(&["fp16", "bf16", "e4m3", "e5m2", "fp32", "fp17", ""]),
    );
    flag("--format-b", &s(&["e5m2", "fp16", "x"]));
    flag(
        "--acc",
        &s(&["ieee", "fused", "exact", "nvidia", "NVIDIA", "x"]),
    );
    flag("--preset", &s(&["hopper", "volta", "blackwell", "x"]));
    flag("--width", &s(&["1", "2", "4", "3", "33", "0"]));
    let outs = [
        p("o.npy"),
        p("o.vcd"),
        p("same"),
        p("nodir/x.npy"),
        dir.display().to_string(),
        "/dev/null".into(),
        "/dev/full".into(),
        p("link"),
        p("o.gtkw"),
        // The side files of `--vcd o.vcd` (defect 5 of the second round), a pipe's name,
        // a path under a file.
        p("o.overview.gtkw"),
        p("o.tensor_core.controller.state.txt"),
        "/dev/stdout".into(),
        p("notadir/x"),
        String::new(),
    ];
    for f in ["--out", "--vcd", "--fst", "--values", "--meta"] {
        flag(f, &outs);
    }
    flag("--memh", &[p("mem"), p("nodir"), p("o.npy")]);
    // Sizes a command derives from its options, and the output folders of the sweeps.
    flag(
        "--samples",
        &s(&["0", "1", "2", "1099511627777", "18446744073709551615"]),
    );
    flag("--k", &s(&["1048577", "18446744073709551615", "16,4"]));
    flag("--m", &s(&["16384"]));
    flag("--latencies", &s(&["1,2", "0", "x"]));
    flag("--bandwidths", &s(&["16", "0,1", ""]));
    flag(
        "--out",
        &[p("ms"), p("sw"), "/dev/null".into(), p("notadir")],
    );
    flag(
        "--trace-window",
        &s(&[
            "0:10",
            "10:0",
            "5:5",
            "x",
            "0:18446744073709551615",
            "100000:100001",
            "1:",
        ]),
    );
    flag("--trace-glob", &s(&["mesh.*", "nothing", "*", "["]));
    flag("--vcd-limit", &s(&["0", "1", "4000"]));
    let ins = [
        p("a.npy"),
        p("b.npy"),
        p("c.npy"),
        p("bad.npy"),
        p("missing.npy"),
        p("v.npy"),
        p("m.npy"),
        p("many.npy"),
        p("gap.txt"),
        "/dev/zero".into(),
    ];
    for f in ["--a", "--b", "--c", "--a-values", "--a-meta"] {
        flag(f, &ins);
    }
    // The memory path and TMA descriptors.
    flag("--memory", &s(&["ideal", "tma", "x"]));
    flag("--mem-latency", &s(&["0", "1", "500", "2000000", "-1"]));
    flag("--mem-bandwidth", &s(&["0", "1", "16", "300"]));
    flag("--mem-request", &s(&["16", "100", "256", "512"]));
    flag("--mem-in-flight", &s(&["0", "1", "4096", "5000"]));
    flag("--smem-bytes", &s(&["0", "1024", "1000", "233472"]));
    flag("--stages", &s(&["0", "1", "2", "400"]));
    flag(
        "--box",
        &s(&["8,4", "0,4", "300,1", "8", "4,4,4,4,4,4", "x"]),
    );
    flag("--coords", &s(&["0,0", "-8,-3", "2147483647,0", "0"]));
    flag("--dtype", &s(&["u16", "u8", "fp32", "tf32", "x"]));
    flag(
        "--swizzle",
        &s(&["none", "32B", "64B", "128B", "128B_ATOM_64B", "x"]),
    );
    flag("--oob", &s(&["zero", "nan", "x"]));
    flag("--smem-base", &s(&["0", "64", "1024", "4294967295"]));
    flag("--gdim", &s(&["8,4", "0,4", "4294967297,1"]));
    flag("--gstride", &s(&["16", "40", "1099511627776"]));
    flag("--estride", &s(&["1,1", "9,1", "0,1"]));
    flag("--tensor", &ins);
    flag("--limit", &s(&["0", "1", "3", "-1"]));
    flag("--show", &s(&["0", "2"]));
    flag(
        "--waves",
        &[p("w"), "/proc".into(), p("nodir/w"), p("o.npy")],
    );
    for w in [
        "--json",
        "--check",
        "--sparse",
        "--prune",
        "--zero-c",
        "--no-swizzle",
        "--help",
        "--",
        "-x",
    ] {
        pool.push(vec![w.to_string()]);
    }
    pool.push(vec![set]);
    pool.push(vec!["specials".into()]);
    pool.push(vec!["nope".into()]);
    pool
}

/// Every path under `dir` (relative), sorted.
fn tree(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let path = e.path();
            out.push(
                path.strip_prefix(dir)
                    .unwrap_or(&path)
                    .display()
                    .to_string(),
            );
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                stack.push(path);
            }
        }
    }
    out.sort();
    out
}

/// The bytes of every regular file of `files` (relative to `dir`), for comparing after a run.
fn snapshot(dir: &Path, files: &[String]) -> Vec<(String, Vec<u8>)> {
    files
        .iter()
        .filter(|f| std::fs::symlink_metadata(dir.join(f)).is_ok_and(|m| m.is_file()))
        .filter_map(|f| Some((f.clone(), std::fs::read(dir.join(f)).ok()?)))
        .collect()
}

#[test]
fn fuzz_command_line() {
    let d = scratch("cli");
    write_npy(&d.join("a.npy"), &[4, 8], Dtype::U16, &[0x3C00; 32]).expect("a");
    write_npy(&d.join("b.npy"), &[8, 4], Dtype::U16, &[0x4000; 32]).expect("b");
    write_npy(&d.join("c.npy"), &[4, 4], Dtype::F32, &[0; 16]).expect("c");
    write_npy(&d.join("v.npy"), &[4, 4], Dtype::U16, &[0x3C00; 16]).expect("v");
    write_npy(&d.join("m.npy"), &[4, 2], Dtype::U8, &[0x4; 8]).expect("m");
    std::fs::write(d.join("bad.npy"), b"\x93NUMPY\x01\x00\xff\xffjunk").expect("bad");
    std::fs::create_dir_all(d.join("mem")).expect("mem");
    std::os::unix::fs::symlink(d.join("o.npy"), d.join("link")).expect("link");
    std::fs::write(d.join("notadir"), b"a file").expect("notadir");
    // Strict parsers: a text matrix with an empty element; a .npy of 4000 axes.
    std::fs::write(d.join("gap.txt"), "1,,3\n4,,6\n").expect("gap");
    let shape = format!("({})", vec!["1"; 4000].join(","));
    let mut h = format!("{{'descr': '<f2', 'fortran_order': False, 'shape': {shape}, }}");
    h.push_str(&" ".repeat((64 - (10 + h.len() + 1) % 64) % 64));
    h.push('\n');
    let mut many = b"\x93NUMPY\x01\x00".to_vec();
    many.extend_from_slice(&(h.len() as u16).to_le_bytes());
    many.extend_from_slice(h.as_bytes());
    many.extend_from_slice(&[0, 0x3c]);
    std::fs::write(d.join("many.npy"), many).expect("many");
    let pool = word_pool(&d);
    let set = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("data/tensor-core-measurements/H100/fp16")
        .display()
        .to_string();
    let p = |f: &str| d.join(f).display().to_string();
    // Per command, a valid base (so that runs also succeed, exit 0, or mismatch, exit 1), to
    // which the generator adds random words from the pool.
    let commands: Vec<(Vec<String>, Vec<String>)> = [
        (vec!["gemm"], vec!["--m", "4", "--n", "5", "--k", "8"]),
        (vec!["gemm"], vec!["--a", &p("a.npy"), "--b", &p("b.npy")]),
        (vec!["dot"], vec!["--a", "1,2,-0.5", "--b", "0x3c00,2,inf"]),
        (
            vec!["verify", "measurements"],
            vec![
                &set, "--format", "fp16", "--preset", "volta", "--limit", "20",
            ],
        ),
        (
            vec!["sparse", "compress"],
            vec!["--a", &p("a.npy"), "--format", "fp16", "--prune"],
        ),
        (
            vec!["sparse", "check"],
            vec![
                "--a-values",
                &p("v.npy"),
                "--a-meta",
                &p("m.npy"),
                "--format",
                "fp16",
            ],
        ),
        (
            vec!["gemm"],
            vec!["--m", "5", "--n", "6", "--k", "20", "--memory", "tma"],
        ),
        (
            vec!["tma", "load"],
            vec![
                "--tensor",
                &p("b.npy"),
                "--dtype",
                "u16",
                "--box",
                "8,4",
                "--coords",
                "0,0",
            ],
        ),
        (
            vec!["gemm"],
            vec!["--m", "8", "--n", "8", "--k", "8", "--vcd", &p("o.vcd")],
        ),
        (
            vec!["memsweep"],
            vec!["--m", "4", "--n", "4", "--k", "4", "--out", &p("ms")],
        ),
        (
            vec!["verify", "sweep"],
            vec![
                "--format",
                "e4m3",
                "--acc",
                "fused",
                "--k",
                "4",
                "--samples",
                "2",
                "--out",
                &p("sw"),
            ],
        ),
        (vec!["wave-filter"], vec!["fp16"]),
        (
            vec!["gemm"],
            vec!["--m", "5", "--n", "6", "--k", "20", "--dataflow", "ws"],
        ),
        (
            vec!["workload", "run"],
            vec![
                concat!(env!("CARGO_MANIFEST_DIR"), "/docs/workloads/tiny_cnn.csv"),
                "--out",
                &p("wl"),
            ],
        ),
        (vec!["tb", "list"], vec![]),
        (vec!["tb", "run"], vec!["specials"]),
        (vec![], vec![]),
    ]
    .iter()
    .map(|(c, b)| {
        (
            c.iter().map(|x| x.to_string()).collect(),
            b.iter().map(|x| x.to_string()).collect(),
        )
    })
    .collect();
    let mut r = runner(48);
    let codes = std::cell::RefCell::new([0u64; 3]);
    r.run(
        &(
            0..commands.len(),
            any::<bool>(),
            prop::collection::vec(0..pool.len(), 0..4),
        ),
        |(cmd, base, picks)| {
            let (command, valid) = &commands[cmd];
            let mut args: Vec<String> = command.clone();
            if base {
                args.extend(valid.iter().cloned());
            }
            for i in picks {
                args.extend(pool[i].iter().cloned());
            }
            // The sizes past a sweep's limits are there for `verify sweep`, which refuses them
            // before any work; given to a command that accepts them they are legal work of
            // minutes in a debug build (a GEMM with K = 2^20 + 1, a memory sweep's whole grid
            // over 16384 rows), not a front-door case.
            let word = |i: usize| command.get(i).map(String::as_str);
            prop_assume!(word(1) == Some("sweep") || !args.iter().any(|a| a == "1048577"));
            prop_assume!(word(0) != Some("memsweep") || !args.iter().any(|a| a == "16384"));
            // `memsweep` at its defaults is a 256 x 256 x 256 GEMM over 70 memory settings: an
            // hour of legal work in a debug build. It always gets its small base.
            prop_assume!(base || word(0) != Some("memsweep"));
            let before = tree(&d);
            let contents = snapshot(&d, &before);
            let o = Command::new(env!("CARGO_BIN_EXE_tcrtl"))
                .args(&args)
                .current_dir(&d)
                .output()
                .expect("run");
            let err = String::from_utf8_lossy(&o.stderr);
            prop_assert!(!err.contains("panicked"), "{args:?}: {err}");
            let code = o.status.code();
            prop_assert!(
                matches!(code, Some(0..=2)),
                "{args:?}: {:?} {err}",
                o.status
            );
            if let Some(c @ 0..=2) = code {
                codes.borrow_mut()[c as usize] += 1;
            }
            let after = tree(&d);
            prop_assert!(
                !after
                    .iter()
                    .any(|f| f.ends_with(".partial") || f.ends_with(".lock")),
                "{args:?}: {after:?}"
            );
            if code == Some(2) {
                prop_assert!(
                    err.starts_with("error: ") && err.trim_end().lines().count() == 1,
                    "{args:?}: {err}"
                );
                let new: Vec<&String> = after.iter().filter(|f| !before.contains(f)).collect();
                prop_assert!(new.is_empty(), "{args:?} failed and left {new:?}: {err}");
                // All or nothing: a failed run changed no file.
                let changed: Vec<&String> = contents
                    .iter()
                    .filter(|(f, bytes)| std::fs::read(d.join(f)).ok().as_ref() != Some(bytes))
                    .map(|(f, _)| f)
                    .collect();
                prop_assert!(
                    changed.is_empty(),
                    "{args:?} failed and changed {changed:?}: {err}"
                );
            }
            Ok(())
        },
    )
    .expect("command line");
    let [ok, mismatch, error] = *codes.borrow();
    eprintln!("fuzz_command_line: exit 0: {ok}, exit 1: {mismatch}, exit 2: {error}, crashes: 0");
    assert!(
        ok > 0 && error > 0,
        "the generator reaches neither success nor errors"
    );
    assert!(std::fs::metadata("/dev/full").is_ok_and(|m| !m.is_file()));
    let _ = std::fs::remove_dir_all(&d);
}
