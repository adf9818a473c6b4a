//! `verify sweep` with FP32 promotion (`SweepConfig::promote_every`): an interval of K or
//! more measures the unpromoted mode (the same statistics); promotion every 32 products cuts
//! Hopper's E4M3 median error at K = 1024 at least fourfold (the exact sums come from
//! `verify::exact`, apart from the datapath); an interval that splits a block is refused
//! before any sample; the command line writes `promote_every` into the summary.

use tensorcore_rtl::hw::Dataflow;
use tensorcore_rtl::numerics::dot::{AccMode, Preset};
use tensorcore_rtl::numerics::format::{E4M3, FP32};
use tensorcore_rtl::numerics::RoundingMode;
use tensorcore_rtl::sweep::{self, Dist, SweepConfig};

fn config(ks: Vec<usize>, promote_every: Option<usize>) -> SweepConfig {
    SweepConfig {
        fmt_a: E4M3,
        fmt_b: E4M3,
        mode: AccMode::Nvidia(Preset::Hopper.params(E4M3, E4M3).expect("fp8")),
        out: FP32,
        rm: RoundingMode::NearestEven,
        width: 16,
        ks,
        samples: 60,
        dist: Dist::Normal,
        seed: 3,
        shard: (0, 1),
        dataflow: Dataflow::Os,
        rows: 4,
        promote_every,
    }
}

#[test]
fn an_interval_of_k_or_more_measures_the_plain_mode() {
    let plain = sweep::run(&config(vec![64, 200], None), &|_| {}).expect("sweep");
    let wide = sweep::run(&config(vec![64, 200], Some(224)), &|_| {}).expect("sweep");
    assert_eq!(plain, wide);
}

#[test]
fn promotion_every_block_cuts_the_error() {
    let plain = sweep::run(&config(vec![1024], None), &|_| {}).expect("sweep");
    let promoted = sweep::run(&config(vec![1024], Some(32)), &|_| {}).expect("sweep");
    let (p, q) = (&plain[0], &promoted[0]);
    assert_eq!((p.nonfinite, q.nonfinite), (0, 0));
    // The medians (the mean of so few samples follows its heaviest tail).
    let (pm, qm) = (p.quantile_ulp(0.5), q.quantile_ulp(0.5));
    assert!(qm * 4.0 <= pm, "median ulps: promoted {qm} vs plain {pm}");
}

#[test]
fn an_interval_splitting_a_block_is_refused() {
    let e = sweep::run(&config(vec![64], Some(48)), &|_| {}).expect_err("48 splits 32");
    assert!(e.contains("48") && e.contains("32"), "{e}");
}

#[test]
fn the_summary_names_the_interval() {
    let dir = std::env::temp_dir().join(format!("tcrtl-promote-sweep-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_tcrtl"))
        .args([
            "verify",
            "sweep",
            "--format",
            "e5m2",
            "--acc",
            "nvidia",
            "--preset",
            "hopper",
            "--k",
            "64",
            "--samples",
            "10",
            "--promote-every",
            "32",
            "--out",
        ])
        .arg(&dir)
        .output()
        .expect("run tcrtl");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = std::fs::read_to_string(dir.join("summary.json")).expect("summary");
    let s: serde_json::Value = serde_json::from_str(&text).expect("json");
    assert_eq!(s["promote_every"], 32);
    let svg = std::fs::read_to_string(dir.join("errors.svg")).expect("svg");
    assert!(svg.contains("FP32 promotion every 32"));
    let _ = std::fs::remove_dir_all(&dir);
}
