//! The testbench runner: what makes a testbench fail, and the registry.

use crate::common::cli::{scratch, tcrtl, text};
use tensorcore_rtl::tb::{find, registry, run_one, run_one_opts, Bench, RunOptions, Testbench};

fn failing(tb: &mut Bench) -> Result<(), String> {
    tb.check_bits("one", 0x3F80_0000, 0x3F80_0000);
    tb.check_bits("two", 0x3F80_0001, 0x3F80_0000);
    Ok(())
}

fn empty(_: &mut Bench) -> Result<(), String> {
    Ok(())
}

fn erring(tb: &mut Bench) -> Result<(), String> {
    tb.check("fine", true);
    Err("design refused".into())
}

#[test]
fn a_mismatch_an_error_or_no_check_fails() {
    let dir = std::env::temp_dir().join(format!("tcrtl-tb-unit-{}", std::process::id()));
    let t = |run| Testbench {
        name: "x",
        about: "",
        run,
        takes_array: false,
    };
    let r = run_one(&t(failing), &dir);
    assert!(!r.passed);
    assert_eq!((r.checks, r.mismatches), (2, 1));
    assert!(r.failures[0].contains("two"), "{:?}", r.failures);
    assert!(r.line().starts_with("FAIL x: 2 checks, 1 mismatches"));
    assert!(!run_one(&t(empty), &dir).passed);
    let r = run_one(&t(erring), &dir);
    assert!(!r.passed && r.error.as_deref() == Some("design refused"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn registry_is_sorted_and_complete() {
    let names: Vec<&str> = registry().iter().map(|t| t.name).collect();
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(names, sorted);
    assert!(names.len() >= 6);
    assert!(find("specials").is_some() && find("nope").is_none());
}

/// `tb run --rows R --cols C`: the testbenches that build their cores through `Bench::array`
/// pass on other arrays (the reference checks and the tile and latency formulas in R and C),
/// the others are refused before anything runs, and a size out of range is one line.
#[test]
fn sized_testbenches_run_on_other_arrays_and_the_others_refuse_a_size() {
    let sized: Vec<&str> = registry()
        .iter()
        .filter(|t| t.takes_array)
        .map(|t| t.name)
        .collect();
    for name in [
        "mesh_fp16",
        "gemm_odd_shapes",
        "sparse_2_4",
        "mx_blocks",
        "specials",
    ] {
        assert!(sized.contains(&name), "{name} takes no size: {sized:?}");
    }
    assert!(!find("mac_mesh").expect("mac_mesh").takes_array);
    let dir = scratch("tb_sized", "lib");
    for (rows, cols) in [(1, 1), (3, 5), (8, 2)] {
        for name in ["mesh_fp16", "gemm_odd_shapes", "sparse_2_4"] {
            let opts = RunOptions {
                array: Some((rows, cols)),
                ..RunOptions::default()
            };
            let r = run_one_opts(find(name).expect("registered"), &dir, &opts);
            assert!(r.passed, "{name} on {rows} x {cols}: {}", r.line());
            assert!(r.checks > 100, "{name}: {}", r.line());
        }
    }
    // A size for a testbench that builds its own array is the report's error.
    let opts = RunOptions {
        array: Some((2, 2)),
        ..RunOptions::default()
    };
    let r = run_one_opts(find("mac_mesh").expect("registered"), &dir, &opts);
    assert!(!r.passed && r.error.as_deref().is_some_and(|e| e.contains("--rows")));

    // The command line refuses before running, exit 2 with one line.
    let waves = dir.join("cli");
    let waves = waves.to_str().expect("utf-8 path");
    let o = tcrtl(&[
        "tb", "run", "mac_mesh", "--rows", "2", "--cols", "2", "--waves", waves,
    ]);
    assert_eq!(o.status.code(), Some(2));
    let err = text(&o.stderr);
    assert!(
        err.contains("mac_mesh builds its own array") && err.lines().count() == 1,
        "{err}"
    );
    let o = tcrtl(&[
        "tb",
        "run",
        "mesh_fp16",
        "--rows",
        "33",
        "--cols",
        "2",
        "--waves",
        waves,
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("1 to 32"), "{}", text(&o.stderr));
    // `all` with a size runs exactly the sized testbenches.
    let o = tcrtl(&[
        "tb", "run", "all", "--rows", "2", "--cols", "3", "--waves", waves,
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stdout));
    let out = text(&o.stdout);
    assert!(
        out.contains(&format!("{n} of {n} testbenches passed", n = sized.len())),
        "{out}"
    );
    assert!(!out.contains("mac_mesh"), "{out}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Two FP16 GEMMs through `Bench::run_gemm`, the second traced to a waveform narrowed to one
/// PE (so its energy comes from an untraced, counted re-run).
fn two_gemms(tb: &mut Bench) -> Result<(), String> {
    use tensorcore_rtl::gemm::{CoreConfig, Gemm, Problem};
    use tensorcore_rtl::numerics::dot::AccMode;
    use tensorcore_rtl::numerics::format::FP16;
    for (seed, traced) in [(1u64, false), (2, true)] {
        let cfg = CoreConfig::new(FP16, FP16, AccMode::Ieee, 2);
        let g = Gemm::random(6, 5, 12, cfg, seed).map_err(|e| e.to_string())?;
        let trace = traced.then(|| {
            tb.trace_only("mesh.pe_0_0.*");
            tb.trace()
        });
        let run = tb.run_gemm(Problem::Dense(&g), None, trace.as_ref())?;
        tb.check("ran", run.run.cycles > 0);
    }
    Ok(())
}

/// `tb run --energy`: a testbench's report holds the energy of every GEMM it ran, equal to the
/// sum of those GEMMs' own estimates (`gemm::energy::run`, one at a time) block by block; the
/// MACs are the problems' M N K; a narrowed waveform does not narrow the count; without the
/// request there is no energy; a testbench that runs no GEMM reports none.
#[test]
fn energy_of_a_testbench_is_the_sum_of_its_gemms() {
    use tensorcore_rtl::energy::HOROWITZ_45NM;
    use tensorcore_rtl::gemm::{self, CoreConfig, Gemm, Problem};
    use tensorcore_rtl::numerics::dot::AccMode;
    use tensorcore_rtl::numerics::format::FP16;
    use tensorcore_rtl::tb::EnergyRequest;
    let dir = scratch("tb_energy", "lib");
    let t = Testbench {
        name: "two_gemms",
        about: "",
        run: two_gemms,
        takes_array: false,
    };
    let opts = RunOptions {
        energy: Some(EnergyRequest {
            tech: HOROWITZ_45NM,
            clock_ghz: 2.0,
        }),
        ..RunOptions::default()
    };
    let r = run_one_opts(&t, &dir, &opts);
    assert!(r.passed, "{}", r.line());
    assert_eq!(r.energy_runs, 2);
    let e = r.energy.expect("an energy report");
    assert_eq!(e.macs, 2 * 6 * 5 * 12);
    // Each problem on its own, every signal counted, no waveform.
    let mut total = 0.0;
    let mut cycles = 0;
    let mut blocks = vec![0u64; e.by_block.len()];
    for seed in [1u64, 2] {
        let cfg = CoreConfig::new(FP16, FP16, AccMode::Ieee, 2);
        let g = Gemm::random(6, 5, 12, cfg, seed).expect("problem");
        let (done, one) =
            gemm::energy::run(Problem::Dense(&g), None, None, &HOROWITZ_45NM, 2.0).expect("run");
        total += one.total_pj;
        cycles += done.run.cycles;
        for (sum, b) in blocks.iter_mut().zip(&one.by_block) {
            *sum += b.count;
        }
    }
    assert!(
        (e.total_pj - total).abs() <= 1e-9 * total,
        "{} vs {total}",
        e.total_pj
    );
    assert_eq!(e.cycles, cycles);
    assert_eq!(
        e.by_block.iter().map(|b| b.count).collect::<Vec<_>>(),
        blocks
    );
    let seconds = cycles as f64 / 2e9;
    assert!((e.power_w - total * 1e-12 / seconds).abs() <= 1e-9 * e.power_w);
    // No request, no energy; no GEMM, none either.
    let r = run_one_opts(&t, &dir, &RunOptions::default());
    assert!(r.passed && r.energy.is_none() && r.energy_runs == 0);
    let r = run_one_opts(find("tma_box_2d").expect("registered"), &dir, &opts);
    assert!(r.passed && r.energy.is_none(), "{}", r.line());

    // The command line: the lines under each testbench, and bad options as one line, exit 2.
    let waves = dir.join("cli");
    let waves = waves.to_str().expect("utf-8 path");
    let o = tcrtl(&[
        "tb",
        "run",
        "mesh_fp16",
        "tma_box_2d",
        "--energy",
        "--waves",
        waves,
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    assert!(out.contains("24 GEMM runs, 5184 MACs"), "{out}");
    assert!(
        out.contains("pJ/MAC") && out.contains("multipliers"),
        "{out}"
    );
    assert!(out.contains("energy: no GEMM run"), "{out}");
    for bad in [
        &["--energy", "--tech", "3nm"][..],
        &["--energy", "--clock-ghz", "-1"],
    ] {
        let mut args = vec!["tb", "run", "mesh_fp16", "--waves", waves];
        args.extend_from_slice(bad);
        let o = tcrtl(&args);
        assert_eq!(o.status.code(), Some(2), "{bad:?}");
        assert_eq!(text(&o.stderr).lines().count(), 1, "{bad:?}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

fn os_and_ws_gemms(tb: &mut Bench) -> Result<(), String> {
    use tensorcore_rtl::gemm::{CoreConfig, Gemm, Problem};
    use tensorcore_rtl::hw::Dataflow;
    use tensorcore_rtl::numerics::dot::AccMode;
    use tensorcore_rtl::numerics::format::FP16;
    for (seed, dataflow, traced) in [(1u64, Dataflow::Os, false), (2, Dataflow::Ws, true)] {
        let cfg = CoreConfig::new(FP16, FP16, AccMode::Ieee, 1).with_dataflow(dataflow);
        let g = Gemm::random(6, 5, 12, cfg, seed).map_err(|e| e.to_string())?;
        let trace = traced.then(|| {
            tb.trace_only("mesh.pe_0_0.*");
            tb.trace()
        });
        let run = tb.run_gemm(Problem::Dense(&g), None, trace.as_ref())?;
        tb.check("ran", run.run.cycles > 0);
    }
    Ok(())
}

/// `tb run --energy` on a testbench that runs an output-stationary and a weight-stationary
/// GEMM (the second to a narrowed waveform, so counted by an untraced re-run): its report
/// has the ws core's `accumulator` block after `adders`, every block's count the sum of the
/// two runs' own counts matched by name; and `tcrtl tb run mesh_ws --energy` reports the
/// weight-stationary testbench's GEMMs with that block.
#[test]
fn energy_of_os_and_ws_gemms_combines_by_block() {
    use tensorcore_rtl::energy::HOROWITZ_45NM;
    use tensorcore_rtl::gemm::{self, CoreConfig, Gemm, Problem};
    use tensorcore_rtl::hw::Dataflow;
    use tensorcore_rtl::numerics::dot::AccMode;
    use tensorcore_rtl::numerics::format::FP16;
    use tensorcore_rtl::tb::EnergyRequest;
    let dir = scratch("tb_energy", "mixed");
    let t = Testbench {
        name: "os_and_ws",
        about: "",
        run: os_and_ws_gemms,
        takes_array: false,
    };
    let opts = RunOptions {
        energy: Some(EnergyRequest {
            tech: HOROWITZ_45NM,
            clock_ghz: 1.0,
        }),
        ..RunOptions::default()
    };
    let r = run_one_opts(&t, &dir, &opts);
    assert!(r.passed, "{}", r.line());
    assert_eq!(r.energy_runs, 2);
    let e = r.energy.expect("an energy report");
    let names: Vec<&str> = e.by_block.iter().map(|b| b.block).collect();
    assert_eq!(
        &names[..4],
        ["multipliers", "adders", "accumulator", "pe_registers"]
    );
    let mut want = std::collections::BTreeMap::new();
    let mut total = 0.0;
    for (seed, dataflow) in [(1u64, Dataflow::Os), (2, Dataflow::Ws)] {
        let cfg = CoreConfig::new(FP16, FP16, AccMode::Ieee, 1).with_dataflow(dataflow);
        let g = Gemm::random(6, 5, 12, cfg, seed).expect("problem");
        let (_, one) =
            gemm::energy::run(Problem::Dense(&g), None, None, &HOROWITZ_45NM, 1.0).expect("run");
        assert_eq!(
            one.by_block.iter().any(|b| b.block == "accumulator"),
            dataflow == Dataflow::Ws
        );
        for b in &one.by_block {
            *want.entry(b.block).or_insert(0u64) += b.count;
        }
        total += one.total_pj;
    }
    for b in &e.by_block {
        assert_eq!(b.count, want[b.block], "{}", b.block);
    }
    assert_eq!(e.by_block.len(), want.len());
    assert!((e.total_pj - total).abs() <= 1e-9 * total);
    assert!(e.block("accumulator") > 0.0);

    let waves = dir.join("cli");
    let o = tcrtl(&[
        "tb",
        "run",
        "mesh_ws",
        "--energy",
        "--waves",
        waves.to_str().expect("utf-8 path"),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    assert!(
        out.contains("GEMM runs,") && out.contains("pJ/MAC"),
        "{out}"
    );
    assert!(out.contains("  accumulator "), "{out}");
    let _ = std::fs::remove_dir_all(&dir);
}
