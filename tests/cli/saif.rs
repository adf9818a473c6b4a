//! `--saif`: the switching activity of a run, checked against the same run's VCD read by this
//! file's own reader (not the model's tracer, nor a waveform crate): every bit's toggle count
//! and time at 1 recomputed from the value changes.

use crate::common::cli::{assert_error, scratch, tcrtl, text};
use std::collections::BTreeMap;
use std::path::Path;

/// Per bit (`scope.name[i]`, or `scope.name` for one bit): toggles and time at 1.
type Bits = BTreeMap<String, (u64, u64)>;

/// Reads a VCD: scopes, variables, `$dumpvars` and value changes. Returns the duration (last
/// time stamp less the first) and, per bit, its toggles (a change of the bit after its first
/// value) and the time it spent at 1.
fn vcd_activity(path: &Path) -> (u64, Bits) {
    let body = std::fs::read_to_string(path).expect("read vcd");
    let mut scope: Vec<String> = Vec::new();
    // Per identifier code: the bit names (bit 0 first) of every variable using it.
    let mut vars: BTreeMap<String, Vec<Vec<String>>> = BTreeMap::new();
    let mut reals: Vec<String> = Vec::new();
    let mut tokens = body.split_whitespace().peekable();
    while let Some(tok) = tokens.next() {
        match tok {
            "$scope" => {
                tokens.next(); // module
                scope.push(tokens.next().expect("scope name").to_string());
            }
            "$upscope" => {
                scope.pop();
            }
            "$var" => {
                let kind = tokens.next().expect("type");
                let width: usize = tokens.next().expect("width").parse().expect("width");
                let id = tokens.next().expect("id").to_string();
                let name = tokens.next().expect("name");
                // The power signals of an energy run are not design signals: no SAIF nets.
                if kind == "real" {
                    reals.push(id);
                    continue;
                }
                let base = format!("{}.{name}", scope.join("."));
                let bits = if width == 1 {
                    vec![base]
                } else {
                    (0..width).map(|i| format!("{base}[{i}]")).collect()
                };
                vars.entry(id).or_default().push(bits);
            }
            "$enddefinitions" => break,
            _ => {}
        }
    }
    // Per bit: its value, since when, toggles, time at 1.
    struct Bit {
        value: Option<bool>,
        since: u64,
        toggles: u64,
        high: u64,
    }
    let mut state: BTreeMap<String, Bit> = BTreeMap::new();
    let (mut now, mut first) = (0u64, None);
    let mut set = |name: &str, v: bool, now: u64| {
        let b = state.entry(name.to_string()).or_insert(Bit {
            value: None,
            since: now,
            toggles: 0,
            high: 0,
        });
        if let Some(old) = b.value {
            if old == v {
                return;
            }
            b.toggles += 1;
            if old {
                b.high += now - b.since;
            }
        }
        b.value = Some(v);
        b.since = now;
    };
    while let Some(tok) = tokens.next() {
        if let Some(t) = tok.strip_prefix('#') {
            now = t.parse().expect("time");
            first.get_or_insert(now);
        } else if tok.starts_with('$') {
            // `$dumpvars` and `$end` only frame the initial values.
        } else if tok.starts_with('r') {
            let id = tokens.next().expect("a real's id");
            assert!(reals.iter().any(|r| r == id), "{id}: a real change");
        } else if let Some(digits) = tok.strip_prefix('b') {
            let id = tokens.next().expect("a vector's id");
            let d = digits.len();
            for bits in &vars[id] {
                assert!(d <= bits.len(), "{id}: {d} digits for {} bits", bits.len());
                for (i, name) in bits.iter().enumerate() {
                    // Leading zeros are dropped: bit i is digit i from the right, or 0.
                    set(name, i < d && digits.as_bytes()[d - 1 - i] == b'1', now);
                }
            }
        } else {
            let (v, id) = tok.split_at(1);
            for bits in &vars[id] {
                set(&bits[0], v == "1", now);
            }
        }
    }
    let start = first.expect("a time stamp");
    let out = state
        .into_iter()
        .map(|(name, b)| {
            let high = b.high
                + if b.value == Some(true) {
                    now - b.since
                } else {
                    0
                };
            (name, (b.toggles, high))
        })
        .collect();
    (now - start, out)
}

/// Reads a SAIF file: its duration and, per bit, `(TC, T1)`; checks `T0 + T1 = DURATION` and
/// `TX = 0` for every bit on the way.
fn saif_activity(path: &Path) -> (u64, Bits) {
    let body = std::fs::read_to_string(path).expect("read saif");
    assert!(
        body.starts_with("(SAIFILE\n(SAIFVERSION \"2.0\")"),
        "{}",
        &body[..60]
    );
    let duration: u64 = body
        .lines()
        .find_map(|l| l.strip_prefix("(DURATION "))
        .and_then(|l| l.strip_suffix(')'))
        .expect("DURATION")
        .parse()
        .expect("duration");
    // Open blocks: an instance (its name) or a net list (none).
    let mut open: Vec<Option<String>> = Vec::new();
    let mut out = Bits::new();
    for line in body.lines().map(str::trim) {
        let scope: Vec<&str> = open.iter().flatten().map(String::as_str).collect();
        if let Some(name) = line.strip_prefix("(INSTANCE ") {
            open.push(Some(name.to_string()));
        } else if line == "(NET" {
            open.push(None);
        } else if line == ")" {
            open.pop();
        } else if line.starts_with('(') && line.contains("(TC ") {
            // (name (T0 a) (T1 b) (TX c) (TC d) (IG e))
            let name = line[1..line.find(' ').expect("name")].replace('\\', "");
            let field = |key: &str| -> u64 {
                let at = line.find(&format!("({key} ")).expect(key) + key.len() + 2;
                line[at..at + line[at..].find(')').expect(")")]
                    .parse()
                    .expect(key)
            };
            let (t0, t1, tx, tc) = (field("T0"), field("T1"), field("TX"), field("TC"));
            assert_eq!(tx, 0, "{line}");
            assert_eq!(t0 + t1, duration, "{line}");
            let key = format!("{}.{name}", scope.join("."));
            assert!(out.insert(key, (tc, t1)).is_none(), "{line} twice");
        }
    }
    (duration, out)
}

/// Compares a SAIF with the VCD of the same run, bit by bit; returns the total toggles.
fn assert_saif_matches_vcd(vcd: &Path, saif: &Path) -> u64 {
    let (vd, from_vcd) = vcd_activity(vcd);
    let (sd, from_saif) = saif_activity(saif);
    assert_eq!(vd, sd, "durations");
    let only_vcd: Vec<_> = from_vcd
        .keys()
        .filter(|k| !from_saif.contains_key(*k))
        .collect();
    let only_saif: Vec<_> = from_saif
        .keys()
        .filter(|k| !from_vcd.contains_key(*k))
        .collect();
    assert!(
        only_vcd.is_empty() && only_saif.is_empty(),
        "{} bits only in the VCD (first {:?}), {} only in the SAIF (first {:?})",
        only_vcd.len(),
        only_vcd.first(),
        only_saif.len(),
        only_saif.first()
    );
    for (bit, counts) in &from_vcd {
        assert_eq!(from_saif[bit], *counts, "{bit}: (TC, T1) SAIF against VCD");
    }
    // The clock: 2 toggles a cycle less the first edge, high half the time.
    let clk = from_saif
        .iter()
        .find(|(k, _)| k.ends_with(".clk") && k.matches('.').count() == 1)
        .expect("clk");
    let cycles = vd / 10;
    assert_eq!(*clk.1, (2 * cycles - 1, vd / 2));
    from_saif.values().map(|c| c.0).sum()
}

/// Runs `tcrtl gemm ARGS --vcd --saif` and compares the SAIF with the VCD, bit by bit.
fn check_run(name: &str, args: &[&str]) -> u64 {
    let dir = scratch("saif", name);
    let vcd = dir.join("run.vcd");
    let saif = dir.join("run.saif");
    let mut all: Vec<&str> = vec!["gemm"];
    all.extend_from_slice(args);
    let (v, s) = (vcd.display().to_string(), saif.display().to_string());
    all.extend_from_slice(&["--vcd", &v, "--saif", &s]);
    let o = tcrtl(&all);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(text(&o.stdout).contains("switching activity (SAIF) written to"));
    let toggles = assert_saif_matches_vcd(&vcd, &saif);
    assert!(toggles > 1000, "{name}: only {toggles} toggles");
    std::fs::remove_dir_all(&dir).ok();
    toggles
}

/// `tcrtl tb run NAME --saif` writes `WAVES/NAME.saif` beside `NAME.vcd`, matching it.
#[test]
fn testbench_saif_matches_its_vcd() {
    let dir = scratch("saif", "tb");
    let w = dir.display().to_string();
    let o = tcrtl(&["tb", "run", "mac_mesh", "--waves", &w, "--saif"]);
    assert!(o.status.success(), "{}{}", text(&o.stdout), text(&o.stderr));
    let toggles = assert_saif_matches_vcd(&dir.join("mac_mesh.vcd"), &dir.join("mac_mesh.saif"));
    assert!(toggles > 100, "only {toggles} toggles");
    let o = tcrtl(&["tb", "run", "mac_mesh", "--waves", &w]);
    assert!(o.status.success());
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn dense_saif_matches_the_vcd() {
    check_run(
        "dense",
        &["--m", "12", "--n", "8", "--k", "16", "--seed", "3"],
    );
}

#[test]
fn sparse_saif_matches_the_vcd() {
    check_run(
        "sparse",
        &[
            "--m", "8", "--n", "8", "--k", "16", "--sparse", "--seed", "5",
        ],
    );
}

/// The weight-stationary core: dense on a 3 x 5 array, 2:4 sparse, integer, and an energy
/// run (its probes, the multipliers' and accumulator adders' inputs, are signals like any
/// other: in the VCD and the SAIF alike; its power reals are in the VCD only).
#[test]
fn ws_saif_matches_the_vcd() {
    let ws = ["--dataflow", "ws"];
    let dense = check_run(
        "ws_dense",
        &[
            &ws[..],
            &[
                "--m", "9", "--n", "7", "--k", "13", "--rows", "3", "--cols", "5",
            ],
        ]
        .concat(),
    );
    check_run(
        "ws_sparse",
        &[&ws[..], &["--m", "8", "--n", "8", "--k", "16", "--sparse"]].concat(),
    );
    check_run(
        "ws_int",
        &[
            &ws[..],
            &["--m", "6", "--n", "8", "--k", "12", "--format", "s8"],
        ]
        .concat(),
    );
    let energy = check_run(
        "ws_energy",
        &[
            &ws[..],
            &[
                "--m", "9", "--n", "7", "--k", "13", "--rows", "3", "--cols", "5", "--energy",
            ],
        ]
        .concat(),
    );
    assert!(
        energy > dense,
        "the probes toggle too: {energy} against {dense}"
    );
}

#[test]
fn memory_path_saif_matches_the_vcd() {
    check_run(
        "memory",
        &[
            "--m", "8", "--n", "8", "--k", "8", "--memory", "tma", "--seed", "7",
        ],
    );
}

#[test]
fn windowed_and_selected_saif_matches_the_vcd() {
    let all = check_run("window_all", &["--m", "8", "--n", "8", "--k", "8"]);
    let part = check_run(
        "window_part",
        &[
            "--m",
            "8",
            "--n",
            "8",
            "--k",
            "8",
            "--trace-window",
            "5:30",
            "--trace-glob",
            "mesh.pe_1_*",
        ],
    );
    assert!(part < all, "{part} of {all}");
}

/// A SAIF alone (no waveform), beside a VCD and beside an FST: the same bytes, and the VCD
/// is the same with or without it.
#[test]
fn saif_is_the_same_alone_and_beside_either_waveform() {
    let dir = scratch("saif", "alone");
    let p = |f: &str| dir.join(f).display().to_string();
    let base = [
        "gemm", "--m", "8", "--n", "8", "--k", "8", "--format", "e4m3",
    ];
    let run = |extra: &[&str]| {
        let mut a: Vec<&str> = base.to_vec();
        a.extend_from_slice(extra);
        let o = tcrtl(&a);
        assert!(o.status.success(), "{}", text(&o.stderr));
    };
    let (alone, with_vcd, with_fst) = (p("alone.saif"), p("vcd.saif"), p("fst.saif"));
    let (vcd_plain, vcd, fst) = (p("plain.vcd"), p("run.vcd"), p("run.fst"));
    run(&["--saif", &alone]);
    run(&["--vcd", &vcd, "--saif", &with_vcd]);
    run(&["--fst", &fst, "--saif", &with_fst]);
    run(&["--vcd", &vcd_plain]);
    let read = |f: &str| std::fs::read(f).expect(f);
    assert_eq!(read(&alone), read(&with_vcd));
    assert_eq!(read(&alone), read(&with_fst));
    assert_eq!(
        read(&vcd),
        read(&vcd_plain),
        "the VCD does not change with --saif"
    );
    assert!(!dir.join("alone.gtkw").exists());
    std::fs::remove_dir_all(&dir).ok();
}

/// `tcrtl gemm` on a 4 x 4 x 4 problem with `extra` options.
fn gemm4(extra: &[&str]) -> std::process::Output {
    let mut a = vec!["gemm", "--m", "4", "--n", "4", "--k", "4"];
    a.extend_from_slice(extra);
    tcrtl(&a)
}

#[test]
fn bad_saif_paths_are_refused_before_the_run() {
    let dir = scratch("saif", "bad");
    let v = dir.join("x.vcd").display().to_string();
    assert_error(&gemm4(&["--vcd", &v, "--saif", &v]), "are the same file");
    assert_error(&gemm4(&["--saif", "/nonexistent/a.saif"]), "does not exist");
    assert_error(&gemm4(&["--saif", "/dev/full"]), "write SAIF failed");
    let s = dir.join("y.saif").display().to_string();
    let o = gemm4(&["--saif", &s, "--vcd-limit", "1"]);
    assert_error(&o, "--vcd-limit applies to --vcd");
    assert!(
        std::fs::read_dir(&dir).expect("dir").next().is_none(),
        "nothing written"
    );
    std::fs::remove_dir_all(&dir).ok();
}
