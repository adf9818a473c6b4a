//! The tensor core's waveform, read back with `wellen`: scope names, A moving right one PE
//! per cycle, B moving down one PE per cycle, the controller's state register.

use std::collections::HashMap;

use tensorcore_rtl::gemm::{run_clocked, run_functional, CoreConfig, Gemm};
use tensorcore_rtl::numerics::dot::AccMode;
use tensorcore_rtl::numerics::format::FP16;
use tensorcore_rtl::rtl::{TraceConfig, PERIOD};

#[test]
fn a_moves_right_and_b_moves_down_one_pe_per_cycle() {
    let dir = std::env::temp_dir().join(format!("tcrtl_hw_waves_{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("tmp dir");
    let path = dir.join("tc.vcd");
    let cfg = CoreConfig {
        fmt_a: FP16,
        fmt_b: FP16,
        mode: AccMode::Ieee,
        width: 1,
        acc: tensorcore_rtl::numerics::format::FP32,
    };
    let g = Gemm::random(4, 4, 6, cfg, 11).expect("problem");
    let r = run_clocked(&g, Some(&TraceConfig::vcd(&path))).expect("clocked, traced");
    assert_eq!(r.out, run_functional(&g).expect("functional"));

    let mut wave = wellen::simple::read(&path).expect("wellen reads the VCD");
    let h = wave.hierarchy();
    let mut vars = HashMap::new();
    for v in h.all_vars().map(|r| &h[r]) {
        vars.insert(v.full_name(h), v.signal_ref());
    }
    for name in [
        "tensor_core.clk",
        "tensor_core.rst",
        "tensor_core.controller.state",
    ] {
        assert!(vars.contains_key(name), "{name} missing");
    }
    for r in 0..4 {
        for c in 0..4 {
            for sig in [
                "a_in",
                "b_in",
                "acc",
                "acc_0",
                "acc_1",
                "exp_sum",
                "max_exp",
                "lzc",
                "round_inc",
            ] {
                let n = format!("tensor_core.mesh.pe_{r}_{c}.{sig}");
                assert!(vars.contains_key(&n), "{n} missing");
            }
        }
    }
    let refs: Vec<_> = vars.values().copied().collect();
    wave.load_signals(&refs);
    let times = wave.time_table().to_vec();
    let cycles = (times.last().copied().unwrap_or(0) / PERIOD) as usize;
    let value = |name: &str, cycle: usize| -> String {
        let ti = times
            .binary_search(&(cycle as u64 * PERIOD))
            .expect("cycle in trace");
        let sig = wave.get_signal(vars[name]).expect("signal");
        let off = sig.get_offset(ti as u32).expect("value");
        sig.get_value_at(&off, 0).to_bit_string().expect("bits")
    };
    let mut moved_a = 0;
    let mut moved_b = 0;
    for t in 1..cycles {
        for r in 0..4 {
            for c in 1..4 {
                let here = value(&format!("tensor_core.mesh.pe_{r}_{c}.a_in"), t);
                let left = value(&format!("tensor_core.mesh.pe_{r}_{}.a_in", c - 1), t - 1);
                assert_eq!(here, left, "A at pe_{r}_{c}, cycle {t}");
                moved_a += usize::from(here.contains('1'));
            }
        }
        for r in 1..4 {
            for c in 0..4 {
                let here = value(&format!("tensor_core.mesh.pe_{r}_{c}.b_in"), t);
                let up = value(&format!("tensor_core.mesh.pe_{}_{c}.b_in", r - 1), t - 1);
                assert_eq!(here, up, "B at pe_{r}_{c}, cycle {t}");
                moved_b += usize::from(here.contains('1'));
            }
        }
    }
    // Nonzero operands really travelled (6 steps through 3 hops in 4 rows/columns).
    assert!(
        moved_a >= 4 * 3 * 5 && moved_b >= 4 * 3 * 5,
        "{moved_a} {moved_b}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn controller_state_names_reach_gtkwave() {
    let dir = std::env::temp_dir().join(format!("tcrtl_hw_labels_{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("tmp dir");
    let cfg = CoreConfig {
        fmt_a: FP16,
        fmt_b: FP16,
        mode: AccMode::Ieee,
        width: 1,
        acc: tensorcore_rtl::numerics::format::FP32,
    };
    let g = Gemm::random(4, 4, 4, cfg, 3).expect("problem");
    let trace = TraceConfig::vcd(dir.join("tc.vcd")).glob("controller.state");
    run_clocked(&g, Some(&trace)).expect("clocked, traced");
    let filter = std::fs::read_to_string(dir.join("tc.tensor_core.controller.state.txt"))
        .expect("filter file");
    let lines: Vec<&str> = filter.lines().filter(|l| !l.starts_with('#')).collect();
    assert_eq!(
        lines,
        [
            "0 Idle",
            "1 Preload",
            "2 Compute",
            "3 Drain",
            "4 Done",
            "5 Wait"
        ]
    );
    let gtkw = std::fs::read_to_string(dir.join("tc.gtkw")).expect("save file");
    assert!(
        gtkw.contains(
            "@2022\n^1 tc.tensor_core.controller.state.txt\ntensor_core.controller.state[2:0]\n"
        ),
        "{gtkw}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
