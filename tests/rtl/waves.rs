//! Round-trip, determinism, order-independence and failure tests of the cycle engine's
//! waveforms. Every waveform is read back with `wellen`, an independent parser.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::common::counts::{assert_same_totals, counting, BATCHES};
use tensorcore_rtl::rtl::demo::Demo;
use tensorcore_rtl::rtl::*;
use tensorcore_rtl::tb::mac_mesh::MacMesh;

fn tmp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("tcrtl_{}_{}", name, std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A design with awkward widths: 1, 7, 64, 65 (in a u128), 127, 1000 (in a Wide<16>), and a
/// 64-bit register that starts with every bit set (the first sample must still write it).
struct Widths {
    n: Reg<u64>,
    b1: Reg<bool>,
    b7: Reg<u8>,
    b64: Reg<u64>,
    ones: Reg<u64>,
    b65: Reg<u128>,
    b127: Reg<u128>,
    b1000: Reg<Wide<16>>,
    mix: Wire<u32>,
}

impl Widths {
    fn new() -> Result<Self> {
        Ok(Self {
            n: Reg::new("n", 64, 0)?,
            b1: Reg::new("b1", 1, false)?,
            b7: Reg::new("b7", 7, 0)?,
            b64: Reg::new("b64", 64, 0)?,
            ones: Reg::new("ones", 64, u64::MAX)?,
            b65: Reg::new("b65", 65, 0)?,
            b127: Reg::new("b127", 127, 0)?,
            b1000: Reg::new("b1000", 1000, Wide::ZERO)?,
            mix: Wire::new("mix", 20, 0)?,
        })
    }
}

impl Module for Widths {
    fn name(&self) -> &str {
        "widths"
    }
    fn visit<V: Visitor>(&mut self, v: &mut V) {
        v.reg(&mut self.n);
        v.reg(&mut self.b1);
        v.reg(&mut self.b7);
        v.reg(&mut self.b64);
        v.reg(&mut self.ones);
        v.reg(&mut self.b65);
        v.reg(&mut self.b127);
        v.reg(&mut self.b1000);
        v.wire(&mut self.mix);
    }
}

impl Design for Widths {
    fn comb(&mut self) {
        let n = self.n.q();
        let x = n.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        self.n.set_d(n + 1);
        self.b1.set_d(n.is_multiple_of(3));
        self.b7.set_d(x as u8);
        self.b64
            .set_d(if n.is_multiple_of(4) { u64::MAX } else { x });
        self.ones.set_d(if n < 5 { u64::MAX } else { x });
        self.b65.set_d((u128::from(x) << 1) | u128::from(n & 1));
        self.b127.set_d(u128::MAX.rotate_left(n as u32));
        let mut w = self.b1000.q();
        w.bits_mut().shift_end(3);
        w.set_field(0, 64, x);
        self.b1000.set_d(w);
        self.mix.set((x >> 7) as u32);
    }
}

/// What the simulator recorded: per cycle, every signal's value right after the combinational
/// phase (what the trace must show at time 10*cycle), and `rst`.
struct Record {
    table: Vec<SignalInfo>,
    cycles: Vec<(u64, bool, Vec<SignalValue>)>,
}

fn run_recorded<D: Design>(
    top: D,
    cfg: &TraceConfig,
    reset: u64,
    cycles: u64,
) -> (Record, TraceSummary) {
    let mut sim = Simulator::with_trace(top, cfg).unwrap();
    let table = sim.signals().unwrap();
    let mut rec = Vec::new();
    for c in 0..reset + cycles {
        sim.set_reset(c < reset);
        sim.settle();
        rec.push((sim.cycle(), c < reset, sim.values()));
        sim.step().unwrap();
    }
    let (_, summary) = sim.finish().unwrap();
    (Record { table, cycles: rec }, summary.unwrap())
}

/// Reads `path` with wellen and checks every traced signal against the record at every traced
/// cycle, with its width and scope; returns the number of values checked.
fn check_against_wellen(path: &Path, rec: &Record, cfg: &TraceConfig) -> usize {
    let mut wave = wellen::simple::read(path).expect("wellen reads the waveform");
    let h = wave.hierarchy();
    let top = rec.table[0].scope[0].clone();
    let mut vars = HashMap::new();
    for v in h.all_vars().map(|r| &h[r]) {
        vars.insert(v.full_name(h), (v.signal_ref(), v.length(h).unwrap_or(0)));
    }
    // clk and rst at the top scope.
    let top_scope = h.scopes().next().map(|s| h[s].name(h).to_string());
    assert_eq!(top_scope.as_deref(), Some(top.as_str()), "one top scope");
    let clk = vars[&format!("{top}.clk")];
    let rst = vars[&format!("{top}.rst")];
    // Every selected signal, with its true width and scope; nothing else.
    let selected: Vec<usize> = (0..rec.table.len())
        .filter(|&i| cfg.selects(&rec.table[i].path()))
        .collect();
    assert_eq!(
        vars.len(),
        selected.len() + 2,
        "declared exactly the selected signals"
    );
    for &i in &selected {
        let s = &rec.table[i];
        let (_, len) = vars
            .get(&s.path())
            .unwrap_or_else(|| panic!("{} missing from the waveform", s.path()));
        assert_eq!(*len, s.width, "{} width", s.path());
    }
    let refs: Vec<_> = vars.values().map(|v| v.0).collect();
    wave.load_signals(&refs);
    let times = wave.time_table().to_vec();
    let (from, to) = cfg.window.unwrap_or((0, u64::MAX));
    let mut checked = 0;
    for (cycle, rst_on, values) in &rec.cycles {
        if *cycle < from || *cycle >= to {
            continue;
        }
        let t = cycle * PERIOD;
        let ti = times
            .binary_search(&t)
            .unwrap_or_else(|_| panic!("time {t} missing"));
        let value_at = |sref, ti: usize| -> String {
            let sig = wave.get_signal(sref).unwrap();
            let off = sig.get_offset(ti as u32).expect("a value at this time");
            sig.get_value_at(&off, 0).to_bit_string().unwrap()
        };
        assert_eq!(value_at(clk.0, ti), "1", "clk high at {t}");
        assert_eq!(value_at(clk.0, ti + 1), "0", "clk low at {}", t + 5);
        assert_eq!(value_at(rst.0, ti), if *rst_on { "1" } else { "0" });
        for &i in &selected {
            let s = &rec.table[i];
            let got = value_at(vars[&s.path()].0, ti);
            let want = values[i].to_bit_string();
            assert_eq!(
                got.len(),
                s.width as usize,
                "{} width in value at cycle {cycle}",
                s.path()
            );
            assert_eq!(got, want, "{} at cycle {cycle}", s.path());
            checked += 1;
        }
    }
    checked
}

#[test]
fn vcd_and_fst_round_trip_through_wellen() {
    let dir = tmp_dir("roundtrip");
    for fmt in [TraceFormat::Vcd, TraceFormat::Fst] {
        let ext = if fmt == TraceFormat::Vcd {
            "vcd"
        } else {
            "fst"
        };
        // Everything, including a 512-bit bus.
        let mut cfg = TraceConfig::vcd(dir.join(format!("demo.{ext}")));
        cfg.format = fmt;
        let (rec, sum) = run_recorded(Demo::new("demo", 3).unwrap(), &cfg, 2, 200);
        assert_eq!(sum.cycles, 202);
        assert!(sum.gtkw.as_ref().is_some_and(|g| g.exists()));
        assert!(!dir.join(format!("demo.{ext}.partial")).exists());
        let n = check_against_wellen(&sum.path, &rec, &cfg);
        assert_eq!(n, 202 * rec.table.len());

        // Awkward widths up to 1000 bits.
        let mut cfg = TraceConfig::vcd(dir.join(format!("widths.{ext}")));
        cfg.format = fmt;
        let (rec, sum) = run_recorded(Widths::new().unwrap(), &cfg, 1, 150);
        check_against_wellen(&sum.path, &rec, &cfg);

        // A glob and a window: only the FIFO, cycles 30..90.
        let mut cfg = TraceConfig::vcd(dir.join(format!("fifo.{ext}")))
            .glob("fifo")
            .window(30, 90);
        cfg.format = fmt;
        let (rec, sum) = run_recorded(Demo::new("demo", 3).unwrap(), &cfg, 2, 150);
        assert_eq!(sum.cycles, 60);
        let n = check_against_wellen(&sum.path, &rec, &cfg);
        assert_eq!(n, 60 * 11);

        // The mesh with a hierarchical glob.
        let mut cfg = TraceConfig::vcd(dir.join(format!("mesh.{ext}"))).glob("mesh.pe_0_*");
        cfg.format = fmt;
        let (rec, sum) = run_recorded(MacMesh::<4>::new().unwrap(), &cfg, 1, 40);
        let n = check_against_wellen(&sum.path, &rec, &cfg);
        assert_eq!(n, 41 * 4 * 4);
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn same_run_twice_is_byte_identical_and_order_does_not_matter() {
    let dir = tmp_dir("determinism");
    let orders = [
        [0, 1, 2],
        [0, 2, 1],
        [1, 0, 2],
        [1, 2, 0],
        [2, 0, 1],
        [2, 1, 0],
    ];
    for fmt in [TraceFormat::Vcd, TraceFormat::Fst] {
        let mut reference: Option<(Vec<u8>, Vec<SignalValue>)> = None;
        for (k, order) in orders.iter().chain(&orders[..1]).enumerate() {
            let mut cfg = TraceConfig::vcd(dir.join(format!("run{k}.w")));
            cfg.format = fmt;
            let mut top = Demo::new("demo", 4).unwrap();
            top.set_order(*order);
            let mut sim = Simulator::with_trace(top, &cfg).unwrap();
            sim.set_check_comb(true);
            sim.reset(3).unwrap();
            sim.run(300).unwrap();
            let values = sim.values();
            let (_, sum) = sim.finish().unwrap();
            let bytes = std::fs::read(sum.unwrap().path).unwrap();
            match &reference {
                None => reference = Some((bytes, values)),
                Some((b, v)) => {
                    assert!(
                        *b == bytes,
                        "waveform differs for order {order:?} ({fmt:?})"
                    );
                    assert_eq!(*v, values, "state differs for order {order:?}");
                }
            }
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn vcd_header_is_well_formed() {
    let dir = tmp_dir("header");
    let cfg = TraceConfig::vcd(dir.join("h.vcd"));
    let (_, sum) = run_recorded(Demo::new("demo", 2).unwrap(), &cfg, 1, 5);
    let text = std::fs::read_to_string(&sum.path).unwrap();
    assert!(text.contains("$timescale 1 ns $end"));
    assert!(!text.contains("$date"), "no date: runs are reproducible");
    assert!(text.starts_with("$version"));
    let lines: Vec<&str> = text.lines().collect();
    let top = lines
        .iter()
        .position(|l| *l == "$scope module demo $end")
        .unwrap();
    assert!(lines[top + 1].ends_with(" clk $end") && lines[top + 2].ends_with(" rst $end"));
    assert!(text.contains("$scope module fifo $end"));
    assert!(
        text.contains("$var reg 512 "),
        "history bus at its true width"
    );
    assert!(text.contains("#0\n$dumpvars\n"));
    let gtkw = std::fs::read_to_string(sum.gtkw.unwrap()).unwrap();
    assert!(gtkw.contains("[dumpfile] \"h.vcd\""));
    assert!(gtkw.contains("demo.fifo.count[2:0]"));
    assert!(gtkw.contains("@22"));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn vcd2fst_accepts_the_demo_vcd() {
    let dir = tmp_dir("vcd2fst");
    let cfg = TraceConfig::vcd(dir.join("demo.vcd"));
    let (_, sum) = run_recorded(Demo::new("demo", 3).unwrap(), &cfg, 2, 100);
    let out = dir.join("demo.fst");
    let res = std::process::Command::new("vcd2fst")
        .arg(&sum.path)
        .arg(&out)
        .output();
    let res = match res {
        Ok(r) => r,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => panic!(
            "vcd2fst is not on PATH: install GTKWave (Debian/Ubuntu: `apt-get install gtkwave`) \
             to run this check"
        ),
        Err(e) => panic!("could not run vcd2fst: {e}"),
    };
    let stderr = String::from_utf8_lossy(&res.stderr);
    assert!(res.status.success(), "vcd2fst failed: {stderr}");
    assert!(
        !stderr.to_lowercase().contains("error"),
        "vcd2fst: {stderr}"
    );
    // GTKWave's FST must hold the same signals wellen sees in our VCD.
    let ours = wellen::simple::read(&sum.path).unwrap();
    let theirs = wellen::simple::read(&out).unwrap();
    let names = |w: &wellen::simple::Waveform| {
        let h = w.hierarchy();
        let mut v: Vec<String> = h.all_vars().map(|v| h[v].full_name(h)).collect();
        v.sort();
        v
    };
    assert_eq!(names(&ours), names(&theirs));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn watchdog_names_cycle_and_state() {
    let mut top = Demo::new("demo", 2).unwrap();
    top.set_enable(false);
    let mut sim = Simulator::new(top).unwrap();
    sim.set_watchdog(50);
    sim.reset(5).unwrap();
    let err = sim.run(1000).unwrap_err();
    let msg = err.to_string();
    assert!(matches!(
        err,
        RtlError::Watchdog {
            cycle: 55,
            stalled_for: 50,
            ..
        }
    ));
    assert!(
        msg.contains("cycle 55") && msg.contains("enable=false"),
        "{msg}"
    );
    // A running design does not trip it.
    let mut sim = Simulator::new(Demo::new("demo", 2).unwrap()).unwrap();
    sim.set_watchdog(50);
    sim.run(2000).unwrap();
    // run_until reports its own limit.
    let err = sim.run_until(|d| d.fifo().popped() > u32::MAX - 1, 10);
    assert!(matches!(err, Err(RtlError::Timeout { max_cycles: 10, .. })));
    let target = sim.top().fifo().popped() + 5;
    let n = sim
        .run_until(|d| d.fifo().popped() >= target, 10_000)
        .unwrap();
    assert!(n > 0);
}

#[test]
fn elaboration_errors_are_clear() {
    let e = Reg::new("x", 9, 0u8).unwrap_err();
    assert!(e.to_string().contains("width 9 is outside 1..=8"), "{e}");
    assert!(Reg::new("x", 0, 0u32).is_err());
    assert!(Reg::new("x", 1025, Wide::<16>::ZERO).is_err());
    let e = Reg::new("x", 3, 9u8).unwrap_err();
    assert!(matches!(e, RtlError::ResetTooWide { .. }));
    let mut sim = Simulator::new(Demo::new("demo", 2).unwrap()).unwrap();
    assert!(matches!(
        sim.peek("demo.nope"),
        Err(RtlError::NoSuchSignal(_))
    ));
    assert_eq!(sim.peek("demo.lfsr.state").unwrap().to_u128(), 0xACE1);
    let bad = TraceConfig::vcd(std::env::temp_dir().join("x.vcd")).window(5, 5);
    assert!(matches!(
        Simulator::with_trace(Demo::new("demo", 2).unwrap(), &bad),
        Err(RtlError::BadWindow { .. })
    ));
}

#[test]
fn unwritable_path_fails_cleanly() {
    let cfg = TraceConfig::vcd("/nonexistent-dir/sub/run.vcd");
    let err = match Simulator::with_trace(Demo::new("demo", 2).unwrap(), &cfg) {
        Err(e) => e,
        Ok(_) => panic!("opened an unwritable path"),
    };
    let msg = err.to_string();
    assert!(
        msg.contains("/nonexistent-dir/sub/run.vcd") && msg.contains("create"),
        "{msg}"
    );
}

#[test]
fn full_disk_fails_cleanly() {
    if !Path::new("/dev/full").exists() {
        return;
    }
    let cfg = TraceConfig::vcd("/dev/full");
    let mut sim = Simulator::with_trace(Demo::new("demo", 8).unwrap(), &cfg).unwrap();
    let res = sim.run(100_000);
    let err = match res {
        Err(e) => e,
        Ok(()) => match sim.finish() {
            Err(e) => e,
            Ok(_) => panic!("wrote a full disk without error"),
        },
    };
    let msg = err.to_string();
    assert!(msg.contains("/dev/full") && msg.contains("space"), "{msg}");
}

#[test]
fn closed_pipe_fails_cleanly_and_failed_file_is_removed() {
    let dir = tmp_dir("pipe");
    let fifo = dir.join("pipe.vcd");
    let ok = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .is_ok_and(|s| s.success());
    if ok {
        // A reader that takes 100 bytes and goes away.
        let mut reader = std::process::Command::new("head")
            .arg("-c")
            .arg("100")
            .arg(&fifo)
            .stdout(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let cfg = TraceConfig::vcd(&fifo);
        let mut sim = Simulator::with_trace(Demo::new("demo", 8).unwrap(), &cfg).unwrap();
        let err = sim.run(1_000_000).unwrap_err();
        reader.wait().unwrap();
        assert!(err.to_string().contains("Broken pipe"), "{err}");
        // Later steps keep failing instead of silently running untraced.
        assert!(matches!(sim.step(), Err(RtlError::TraceClosed)));
    }
    // An unfinished regular file is only ever visible as a temporary
    // `NAME.<pid>-<n>-<random>.partial`, never as NAME.
    let path = dir.join("gone.vcd");
    let cfg = TraceConfig::vcd(&path);
    let mut sim = Simulator::with_trace(Demo::new("demo", 2).unwrap(), &cfg).unwrap();
    sim.run(10).unwrap();
    let temp = std::fs::read_dir(&dir).unwrap().any(|e| {
        let n = e.unwrap().file_name().to_string_lossy().into_owned();
        n.starts_with("gone.vcd.") && n.ends_with(".partial")
    });
    assert!(temp && !path.exists());
    drop(sim);
    std::fs::remove_dir_all(&dir).ok();
}

/// A tiny FSM whose state register (and a 1-bit wire) carry value labels.
struct Fsm {
    labelled: bool,
    state: Reg<u8>,
    busy: Wire<bool>,
    count: Reg<u16>,
}

const FSM_LABELS: Labels = &[(0, "Idle"), (1, "Run"), (2, "Wait state"), (10, "Ten")];

impl Fsm {
    fn new(labelled: bool) -> Self {
        let mut state = Reg::new("state", 4, 0u8).unwrap();
        let mut busy = Wire::new("busy", 1, false).unwrap();
        if labelled {
            state = state.with_labels(FSM_LABELS);
            busy = busy.with_labels(&[(0, "no"), (1, "yes")]);
        }
        Self {
            labelled,
            state,
            busy,
            count: Reg::new("count", 9, 0u16).unwrap(),
        }
    }
}

impl Module for Fsm {
    fn name(&self) -> &str {
        "fsm"
    }
    fn visit<V: Visitor>(&mut self, v: &mut V) {
        v.reg(&mut self.state);
        v.wire(&mut self.busy);
        v.reg(&mut self.count);
    }
}

impl Design for Fsm {
    fn comb(&mut self) {
        let s = self.state.q();
        self.state.set_d(match s {
            0 => 1,
            1 => 2,
            2 => 10,
            _ => 0,
        });
        self.busy.set(s != 0);
        self.count.set_d(self.count.q() + 1);
    }
}

/// Runs the FSM 12 cycles traced to `dir/NAME.vcd`; returns the summary.
fn run_fsm(dir: &Path, name: &str, labelled: bool) -> TraceSummary {
    let fsm = Fsm::new(labelled);
    assert_eq!(fsm.labelled, !fsm.state.labels().is_empty());
    let cfg = TraceConfig::vcd(dir.join(format!("{name}.vcd")));
    let mut sim = Simulator::with_trace(fsm, &cfg).unwrap();
    sim.run(12).unwrap();
    sim.finish().unwrap().1.unwrap()
}

#[test]
fn value_labels_write_gtkwave_filter_files_and_leave_the_vcd_alone() {
    let dir = tmp_dir("labels");
    let a = run_fsm(&dir, "a", true);
    let b = run_fsm(&dir, "b", true);
    let plain = run_fsm(&dir, "plain", false);
    let read = |p: &Path| std::fs::read(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));

    // The VCD does not see labels.
    assert_eq!(read(&a.path), read(&plain.path));
    assert_eq!(read(&a.path), read(&b.path));

    // One filter file per labelled signal, beside the save file, deterministic.
    let fa = dir.join("a.fsm.state.txt");
    let want = "# fsm.state: value labels for GTKWave\n0 Idle\n1 Run\n2 Wait state\nA Ten\n";
    assert_eq!(String::from_utf8(read(&fa)).unwrap(), want);
    assert_eq!(read(&fa), read(&dir.join("b.fsm.state.txt")));
    let busy = String::from_utf8(read(&dir.join("a.fsm.busy.txt"))).unwrap();
    assert_eq!(busy, "# fsm.busy: value labels for GTKWave\n0 no\n1 yes\n");
    assert!(!dir.join("plain.fsm.state.txt").exists());

    // The save file: byte-identical apart from the run's name, filter lines before the trace,
    // the file-translated flag (0x2000) on top of hex/binary + right-justify.
    let ga = String::from_utf8(read(a.gtkw.as_ref().unwrap())).unwrap();
    let gb = String::from_utf8(read(b.gtkw.as_ref().unwrap())).unwrap();
    assert_eq!(ga.replace("a.", "X."), gb.replace("b.", "X."));
    assert!(ga.contains("[savefile] \"a.gtkw\"\n"), "{ga}");
    assert!(
        ga.contains("@2022\n^1 a.fsm.state.txt\nfsm.state[3:0]\n"),
        "{ga}"
    );
    assert!(ga.contains("@2028\n^2 a.fsm.busy.txt\nfsm.busy\n"), "{ga}");
    assert!(ga.contains("@22\nfsm.count[8:0]\n"), "{ga}");
    let gp = String::from_utf8(read(plain.gtkw.as_ref().unwrap())).unwrap();
    assert!(!gp.contains('^'), "{gp}");

    // Nothing half-written is left behind.
    for e in std::fs::read_dir(&dir).unwrap() {
        let n = e.unwrap().file_name().to_string_lossy().into_owned();
        assert!(!n.ends_with(".partial"), "{n} left behind");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_failed_trace_writes_no_filter_file() {
    let dir = tmp_dir("labels_fail");
    let cfg = TraceConfig::vcd(dir.join("f.vcd"));
    let mut sim = Simulator::with_trace(Fsm::new(true), &cfg).unwrap();
    sim.run(3).unwrap();
    // Make the rename into place fail: a directory now sits at the waveform's path.
    std::fs::create_dir_all(dir.join("f.vcd").join("x")).unwrap();
    assert!(sim.finish().is_err());
    let names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["f.vcd"], "only the blocking directory remains");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Checks every bit of the FSM's signals over the traced cycles `traced`: the 9-bit counter
/// holds `j mod 512` at cycle `j` and the state runs 0, 1, 2, 10 (busy whenever it is not 0),
/// so each bit's toggles and time at 1 follow from the sequences.
fn check_fsm_activity(act: &tensorcore_rtl::rtl::ActivityReport, traced: std::ops::Range<u64>) {
    let count = |c: u64| c % 512;
    let state = |c: u64| [0, 1, 2, 10][(c % 4) as usize];
    let busy = |c: u64| u64::from(state(c) != 0);
    type Sequence<'a> = &'a dyn Fn(u64) -> u64;
    let sequences: [(&str, u32, Sequence); 3] = [
        ("fsm.count", 9, &count),
        ("fsm.state", 4, &state),
        ("fsm.busy", 1, &busy),
    ];
    for (path, width, value) in sequences {
        let s = act
            .signals
            .iter()
            .find(|s| s.path == path)
            .unwrap_or_else(|| panic!("{path} traced"));
        assert_eq!(s.width, width);
        for bit in 0..width as usize {
            let at = |c: u64| (value(c) >> bit) & 1;
            let toggles = (traced.start + 1..traced.end)
                .filter(|&c| at(c) != at(c - 1))
                .count() as u64;
            let high = traced.clone().filter(|&c| at(c) == 1).count() as u64 * PERIOD;
            assert_eq!(s.toggles[bit], toggles, "{path} bit {bit} toggles");
            assert_eq!(s.high_ns[bit], high, "{path} bit {bit} time at 1");
        }
    }
}

/// Switching activity alone (no waveform): every bit's toggles and time at 1 follow from the
/// FSM's sequences; the scope sums and the clock follow from the definitions.
#[test]
fn activity_counts_the_counter_bit_by_bit() {
    let dir = tmp_dir("activity");
    let cfg = TraceConfig::activity(dir.join("fsm.saif"));
    let mut sim = Simulator::with_trace(Fsm::new(false), &cfg).unwrap();
    sim.run(40).unwrap();
    let summary = sim.finish().unwrap().1.unwrap();
    assert_eq!(summary.path, dir.join("fsm.saif"));
    assert!(summary.gtkw.is_none());
    assert!(!dir.join("fsm.vcd").exists());
    let act = summary.activity.expect("activity counted");
    let cycles = summary.cycles;
    assert_eq!(act.duration_ns, cycles * PERIOD);
    let clk = &act.signals[0];
    assert_eq!(clk.path, "fsm.clk");
    assert_eq!(clk.toggles, [2 * cycles - 1]);
    assert_eq!(clk.high_ns, [cycles * PERIOD / 2]);
    check_fsm_activity(&act, 0..cycles);
    assert_eq!(
        act.by_scope(),
        vec![("fsm".to_string(), act.total_toggles())]
    );
    let saif = std::fs::read_to_string(dir.join("fsm.saif")).unwrap();
    assert!(
        saif.contains(&format!("(DURATION {})", cycles * PERIOD)),
        "{saif}"
    );
    assert!(saif.contains("(count\\[0\\] (T0 "), "{saif}");
    std::fs::remove_dir_all(&dir).ok();
}

/// A run long enough for the counters to empty their bit-sliced planes into the totals twice
/// (every 65,520 cycles) and merge their low planes thousands of times, in a window that
/// starts mid-run: every bit still matches the sequences.
#[test]
fn activity_survives_long_runs_and_windows() {
    let dir = tmp_dir("activity_long");
    let (from, to) = (5, 140_003);
    let cfg = TraceConfig::activity(dir.join("fsm.saif")).window(from, to);
    let mut sim = Simulator::with_trace(Fsm::new(false), &cfg).unwrap();
    sim.run(to + 7).unwrap();
    let summary = sim.finish().unwrap().1.unwrap();
    let act = summary.activity.expect("activity counted");
    assert_eq!(summary.cycles, to - from);
    assert_eq!(act.duration_ns, (to - from) * PERIOD);
    check_fsm_activity(&act, from..to);
    std::fs::remove_dir_all(&dir).ok();
}

/// Counting without a SAIF (`TraceConfig::counting`, what the energy estimate uses) keeps
/// only each signal's toggle total: the same totals as the per-bit counts of a SAIF run, no
/// per-bit vectors, and no file.
#[test]
fn counting_alone_keeps_the_same_totals() {
    let dir = tmp_dir("counting");
    let run = |cfg: &TraceConfig| {
        let mut sim = Simulator::with_trace(Fsm::new(false), cfg).unwrap();
        sim.run(300).unwrap();
        let summary = sim.finish().unwrap().1.unwrap();
        summary.activity.expect("activity counted")
    };
    let per_bit = run(&TraceConfig::activity(dir.join("fsm.saif")));
    let totals = run(&TraceConfig::counting());
    assert!(per_bit.per_bit && !totals.per_bit);
    assert!(totals.saif.is_none());
    assert_eq!(per_bit.signals.len(), totals.signals.len());
    for (a, b) in per_bit.signals.iter().zip(&totals.signals) {
        assert_eq!(a.path, b.path);
        assert_eq!(a.total_toggles(), a.toggles.iter().sum::<u64>());
        assert_eq!(a.total_toggles(), b.total_toggles(), "{}", a.path);
    }
    // clk and rst are counted bit by bit either way; the design signals only as totals.
    assert!(totals.signals.iter().skip(2).all(|s| s.toggles.is_empty()));
    assert!(totals.total_toggles() > 0);
    let files: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
    assert_eq!(files.len(), 1, "only the SAIF of the first run");
    std::fs::remove_dir_all(&dir).ok();
}

/// A 64-bit register that inverts every cycle (every bit toggles each cycle, the most a word
/// can) and a 12-bit counter in a 16-bit container.
struct Flipper {
    all: Reg<u64>,
    narrow: Reg<u16>,
}

impl Module for Flipper {
    fn name(&self) -> &str {
        "flip"
    }
    fn visit<V: Visitor>(&mut self, v: &mut V) {
        v.reg(&mut self.all);
        v.reg(&mut self.narrow);
    }
}

impl Design for Flipper {
    fn comb(&mut self) {
        self.all.set_d(!self.all.q());
        self.narrow.set_d(self.narrow.q().wrapping_add(1) & 0xFFF);
    }
}

/// The toggle totals (`TraceConfig::counting`, masked and counted in one pass) of a register
/// whose 64 bits all toggle every cycle, over runs of several lengths: 64 per cycle after the
/// first, worked out by hand; and a 12-bit counter's bits toggle as counting from 0 says.
#[test]
fn counting_totals_hold_at_the_most_toggles_a_word_can_have() {
    for cycles in [2u64, 31, 32, 62, 63, 200] {
        let flip = Flipper {
            all: Reg::new("all", 64, 0u64).unwrap(),
            narrow: Reg::new("narrow", 12, 0u16).unwrap(),
        };
        let mut sim = Simulator::with_trace(flip, &TraceConfig::counting()).unwrap();
        sim.run(cycles).unwrap();
        let summary = sim.finish().unwrap().1.unwrap();
        let act = summary.activity.expect("activity counted");
        let n = summary.cycles;
        let find = |name: &str| {
            act.signals
                .iter()
                .find(|s| s.path == format!("flip.{name}"))
                .unwrap_or_else(|| panic!("{name} counted"))
                .total_toggles()
        };
        assert_eq!(find("all"), 64 * (n - 1), "{n} cycles");
        // Counting 0, 1, 2, ... (mod 2^12): bit b toggles at every multiple of 2^b.
        let want: u64 = (0..12).map(|b| (n - 1) >> b).sum();
        assert_eq!(find("narrow"), want, "{n} cycles");
    }
}

/// Registers of every kind the engine has (a register, a register bank's fields, delay-line
/// stages, driven only in some cycles so their inputs hold in the others), a wire and a
/// testbench input: what the toggle counters must agree on.
struct Mixed {
    count: Reg<u16>,
    /// A register of a type written rarely (written in some cycles only, reset to a value
    /// that is not 0).
    rare: Reg<Rare>,
    /// The D input of the bank's `odd` (presented before `low`'s, so the fields' batch
    /// totals the pass remembers for them come out of order).
    odd_in: NextWire<bool>,
    /// The D input of the bank's `low`, and a plain wire driven with the same value.
    low_in: NextWire<u8>,
    low_copy: Wire<u8>,
    bank: RegBank<Pair>,
    lines: DelayLines<u8>,
    sum: Wire<u32>,
    din: Input<u8>,
}

#[derive(Clone, Copy, Default)]
struct Pair {
    low: u8,
    odd: bool,
}

/// A value whose register notes its writes (`Value::WRITTEN_RARELY`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Rare(u16);

impl Value for Rare {
    const CAPACITY: u32 = 16;
    const WORDS: usize = 1;
    const WRITTEN_RARELY: bool = true;
    fn mask(self, width: u32) -> Self {
        Rare(self.0.mask(width))
    }
    fn to_words(&self, out: &mut [u64]) {
        out[0] = u64::from(self.0);
    }
    fn from_words(words: &[u64]) -> Self {
        Rare(u16::from_words(words))
    }
}

impl Mixed {
    fn new() -> Self {
        let mut lines = DelayLines::new(0u8, &[1, 3]);
        lines.field(|j, k| format!("d{j}_{k}"), 8, |e| e).unwrap();
        Self {
            count: Reg::new("count", 12, 0u16).unwrap(),
            rare: Reg::new("rare", 10, Rare(0x2A5)).unwrap(),
            odd_in: NextWire::new("odd_in", 1).unwrap(),
            low_in: NextWire::new("low_in", 8).unwrap(),
            low_copy: Wire::new("low_copy", 8, 0u8).unwrap(),
            bank: RegBank::new(Pair::default())
                .field::<u8>("low", 8, |p| &p.low)
                .unwrap()
                .field::<bool>("odd", 1, |p| &p.odd)
                .unwrap(),
            lines,
            sum: Wire::new("sum", 32, 0u32).unwrap(),
            din: Input::new("din", 8, 0u8).unwrap(),
        }
    }
}

impl Module for Mixed {
    fn name(&self) -> &str {
        "mixed"
    }
    fn visit<V: Visitor>(&mut self, v: &mut V) {
        v.reg(&mut self.count);
        v.reg(&mut self.rare);
        v.bank_next(&mut self.bank, &mut self.odd_in, |p| &p.odd);
        v.bank_next(&mut self.bank, &mut self.low_in, |p| &p.low);
        v.bank_reg(&mut self.bank, 0, |p| &p.low);
        v.bank_reg(&mut self.bank, 1, |p| &p.odd);
        v.bank(&mut self.bank);
        for stage in 0..self.lines.stages() {
            v.delay_reg(&mut self.lines, stage, 0, |e| e);
        }
        v.delay(&mut self.lines);
        v.wire(&mut self.sum);
        v.wire(&mut self.low_copy);
        v.input(&mut self.din);
    }
}

impl Design for Mixed {
    fn comb(&mut self) {
        let c = self.count.q();
        self.count.set_d((c + 3) & 0xFFF);
        let low = (c as u8) ^ self.din.get();
        self.bank.set(|p| &mut p.low, low);
        self.low_copy.set(low);
        self.bank.set(|p| &mut p.odd, c & 1 == 1);
        if c.is_multiple_of(2) {
            self.lines.set_inputs(&[c as u8, !(c as u8)]);
        }
        // Written in one cycle of five (a value from the input), held in the others.
        if c % 5 == 1 {
            self.rare.set_d(Rare(u16::from(self.din.get()) * 3));
        }
        self.sum.set(u32::from(c) * 7);
    }
}

/// The toggle totals alone (`TraceConfig::counting`: each register's counted at the
/// register itself, from `q` and the value it is about to latch, each wire against its last
/// value) equal the per-bit counts of a SAIF run (every signal compared with its last
/// traced value) for every signal, through resets in the middle of the run and in windows
/// that start and end in it (a window's last cycle a reset cycle too); a register's next
/// value shown as a wire (`low_in`, a `NextWire`) toggles as a plain wire driven with the
/// same value (`low_copy`) in both, also beside another one (`odd_in`) presented before it,
/// whose field comes after; with `TraceConfig::registers` the registers keep the same
/// totals and the wires the globs leave out are not reported, also when a peek turns every
/// wire on before or during the run.
#[test]
fn totals_at_the_registers_equal_the_snapshot_counts() {
    let dir = tmp_dir("edge_counts");
    let run_peeking = |cfg: &TraceConfig, peek_at: u64| {
        let mut sim = Simulator::with_trace(Mixed::new(), cfg).unwrap();
        let mut rng = 0x2545_f491_4f6c_dd1du64;
        for cycle in 0..90u64 {
            if cycle == peek_at {
                // Every wire observed from here on (the unselected `sum` too).
                assert!(sim.peek("mixed.sum").is_ok());
            }
            sim.set_reset(cycle < 2 || (37..40).contains(&cycle) || cycle == 71);
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            sim.top_mut().din.set(rng as u8);
            sim.step().unwrap();
        }
        sim.finish().unwrap().1.unwrap().activity.expect("counted")
    };
    let run = |cfg: &TraceConfig| run_peeking(cfg, u64::MAX);
    for window in [
        None,
        Some((0, 90)),
        Some((5, 60)),
        Some((38, 72)),
        Some((20, 200)),
    ] {
        let with = |c: TraceConfig| match window {
            Some((a, b)) => c.window(a, b),
            None => c,
        };
        let per_bit = run(&with(TraceConfig::activity(dir.join("m.saif"))));
        // The batch the counter chose, and short ones that cross many batch boundaries
        // (between resets, and where a batch ends at a reset cycle or a window's edge).
        for batch in BATCHES {
            let totals = run(&with(counting(batch)));
            assert_same_totals(&per_bit, &totals, &format!("{window:?} batch {batch:?}"));
        }
        let totals = run(&with(TraceConfig::counting()));
        for peek_at in [u64::MAX, 0, 50] {
            let regs = run_peeking(
                &with(TraceConfig::counting().registers().glob("din")),
                peek_at,
            );
            let names: Vec<&str> = regs.signals.iter().map(|s| s.path.as_str()).collect();
            assert!(!names.contains(&"mixed.sum") && names.contains(&"mixed.din"));
            for b in &regs.signals {
                let a = per_bit.signals.iter().find(|a| a.path == b.path).unwrap();
                assert_eq!(
                    a.total_toggles(),
                    b.total_toggles(),
                    "{} {window:?}",
                    a.path
                );
            }
        }
        // The D input shown by the bank is the value the plain wire was driven with: the
        // same toggles, and per bit the same toggles and time at 1.
        for counts in [&per_bit, &totals] {
            let of = |name: &str| {
                let s = counts.signals.iter().find(|s| s.path == name).unwrap();
                (s.total_toggles(), s.toggles.clone(), s.high_ns.clone())
            };
            assert_eq!(of("mixed.low_in"), of("mixed.low_copy"), "{window:?}");
        }
        // Something toggled everywhere: the comparison is not between zeros.
        assert!(per_bit
            .signals
            .iter()
            .skip(2)
            .all(|s| s.total_toggles() > 0));
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// One stage of [`Chain`]: a value and its flag.
#[derive(Clone, Copy, Default)]
struct Stage {
    x: u16,
    v: bool,
}

/// A shift chain of three register banks, each stage taking the one before it at every edge
/// (the first the testbench inputs), its fields declared as the chain's links
/// (`Visitor::bank_reg_linked`), with each stage's next value shown as a `NextWire` (also
/// linked).
struct Chain {
    stages: Vec<RegBank<Stage>>,
    nexts: Vec<NextWire<u16>>,
    din: Input<u16>,
    vin: Input<bool>,
}

impl Chain {
    fn new() -> Self {
        let stages = (0..3)
            .map(|k| {
                RegBank::new(Stage::default())
                    .field::<u16>(format!("x{k}"), 12, |s| &s.x)
                    .unwrap()
                    .field::<bool>(format!("v{k}"), 1, |s| &s.v)
                    .unwrap()
            })
            .collect();
        let nexts = (0..3)
            .map(|k| NextWire::new(format!("x{k}_in"), 12).unwrap())
            .collect();
        Self {
            stages,
            nexts,
            din: Input::new("din", 12, 0u16).unwrap(),
            vin: Input::new("vin", 1, false).unwrap(),
        }
    }
}

impl Module for Chain {
    fn name(&self) -> &str {
        "chain"
    }
    fn visit<V: Visitor>(&mut self, v: &mut V) {
        for (k, (bank, next)) in self.stages.iter_mut().zip(&mut self.nexts).enumerate() {
            let link = |field: u32| Link {
                id: 2 * k as u32 + field,
                from: k.checked_sub(1).map(|before| 2 * before as u32 + field),
            };
            v.bank_next_linked(bank, next, |s| &s.x, link(0));
            v.bank_reg_linked(bank, 0, |s| &s.x, link(0));
            v.bank_reg_linked(bank, 1, |s| &s.v, link(1));
            v.bank(bank);
        }
        v.input(&mut self.din);
        v.input(&mut self.vin);
    }
}

impl Design for Chain {
    fn comb(&mut self) {
        let mut before = Stage {
            x: self.din.get(),
            v: self.vin.get(),
        };
        for bank in &mut self.stages {
            let now = *bank.q();
            bank.set(|s| &mut s.x, before.x);
            bank.set(|s| &mut s.v, before.v);
            before = now;
        }
    }
}

/// Registers declared as the stages of a shift chain (`Link`) are counted from the stage
/// before them: their totals, and their next values', equal the snapshot counts of a SAIF
/// run through resets (one lasting three cycles) and in windows that start and end mid-run,
/// with the batch the counter chooses and with short ones (many batch boundaries).
#[test]
fn a_shift_chains_stages_count_as_their_snapshots() {
    let dir = tmp_dir("chain_counts");
    let run = |cfg: &TraceConfig| {
        let mut sim = Simulator::with_trace(Chain::new(), cfg).unwrap();
        let mut rng = 0x9E37_79B9_7F4A_7C15u64;
        for cycle in 0..300u64 {
            sim.set_reset(cycle < 2 || (100..103).contains(&cycle) || cycle == 193);
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            sim.top_mut().din.set((rng & 0xFFF) as u16);
            sim.top_mut().vin.set(rng >> 63 == 1);
            sim.step().unwrap();
        }
        sim.finish().unwrap().1.unwrap().activity.expect("counted")
    };
    for window in [None, Some((3, 250)), Some((101, 300)), Some((70, 194))] {
        let with = |c: TraceConfig| match window {
            Some((a, b)) => c.window(a, b),
            None => c,
        };
        let per_bit = run(&with(TraceConfig::activity(dir.join("c.saif"))));
        for batch in BATCHES {
            let totals = run(&with(counting(batch)));
            assert_same_totals(&per_bit, &totals, &format!("{window:?} batch {batch:?}"));
            for s in &totals.signals {
                assert!(s.total_toggles() > 0, "{} {window:?}", s.path);
            }
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}
