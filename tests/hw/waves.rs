//! The tensor core's waveform, read back with `wellen`: scope names, A moving right one PE
//! per cycle, B moving down one PE per cycle (weights and partial sums in `ws`), the
//! controller's state register.

use crate::common::counts::{assert_same_totals, counting, BATCHES};
use crate::common::waves::Waves;
use tensorcore_rtl::gemm::{run_clocked, run_functional, CoreConfig, Gemm};
use tensorcore_rtl::numerics::dot::AccMode;
use tensorcore_rtl::numerics::format::FP16;
use tensorcore_rtl::rtl::TraceConfig;

#[test]
fn a_moves_right_and_b_moves_down_one_pe_per_cycle() {
    links_move_one_pe_a_cycle(4, 4, (4, 4, 6));
}

/// The same on arrays of other sizes: every link of an 8 x 8 and a 3 x 5 array (several
/// tiles, partial ones included) moves its operand one PE a cycle.
#[test]
fn every_link_of_an_8_by_8_and_a_3_by_5_array_moves_one_pe_a_cycle() {
    links_move_one_pe_a_cycle(8, 8, (11, 9, 5));
    links_move_one_pe_a_cycle(3, 5, (7, 6, 4));
}

/// Runs an `m x n x k` FP16 GEMM traced on a `rows x cols` array, reads the VCD back and
/// checks that each PE's signals are there, named `pe_<row>_<col>`, and that A reaches PE
/// `(r, c)` exactly one cycle after PE `(r, c - 1)` and B one cycle after PE `(r - 1, c)`:
/// no operand skips a PE or arrives early.
fn links_move_one_pe_a_cycle(rows: usize, cols: usize, (m, n, k): (usize, usize, usize)) {
    let dir = std::env::temp_dir().join(format!(
        "tcrtl_hw_waves_{rows}x{cols}_{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("tmp dir");
    let path = dir.join("tc.vcd");
    let cfg = CoreConfig::new(FP16, FP16, AccMode::Ieee, 1)
        .with_array(rows, cols)
        .expect("a valid array");
    let g = Gemm::random(m, n, k, cfg, 11).expect("problem");
    let r = run_clocked(&g, Some(&TraceConfig::vcd(&path))).expect("clocked, traced");
    assert_eq!(r.out, run_functional(&g).expect("functional"));

    let waves = Waves::read(&path);
    for name in [
        "tensor_core.clk",
        "tensor_core.rst",
        "tensor_core.controller.state",
    ] {
        assert!(waves.has(name), "{name} missing");
    }
    for r in 0..rows {
        for c in 0..cols {
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
                assert!(waves.has(&n), "{n} missing");
            }
        }
    }
    // No PE beyond the array.
    assert!(!waves.has(&format!("tensor_core.mesh.pe_{rows}_0.a_in")));
    assert!(!waves.has(&format!("tensor_core.mesh.pe_0_{cols}.a_in")));
    let cycles = waves.cycles();
    let value = |name: &str, cycle: usize| waves.bits(name, cycle);
    let mut moved_a = 0;
    let mut moved_b = 0;
    for t in 1..cycles {
        for r in 0..rows {
            for c in 1..cols {
                let here = value(&format!("tensor_core.mesh.pe_{r}_{c}.a_in"), t);
                let left = value(&format!("tensor_core.mesh.pe_{r}_{}.a_in", c - 1), t - 1);
                assert_eq!(here, left, "{rows}x{cols}: A at pe_{r}_{c}, cycle {t}");
                moved_a += usize::from(here.contains('1'));
            }
        }
        for r in 1..rows {
            for c in 0..cols {
                let here = value(&format!("tensor_core.mesh.pe_{r}_{c}.b_in"), t);
                let up = value(&format!("tensor_core.mesh.pe_{}_{c}.b_in", r - 1), t - 1);
                assert_eq!(here, up, "{rows}x{cols}: B at pe_{r}_{c}, cycle {t}");
                moved_b += usize::from(here.contains('1'));
            }
        }
    }
    // The overview save file: a mesh of more than 16 PEs opens as one closed group per row
    // (`mesh.pe_<r>_*`, each holding its row's PE groups), a smaller one as the PE groups.
    let overview =
        std::fs::read_to_string(dir.join("tc.overview.gtkw")).expect("the overview save file");
    for r in 0..rows {
        let row_group = format!("\n-mesh.pe_{r}_*\n");
        assert_eq!(
            overview.matches(&row_group).count(),
            if rows * cols > 16 { 2 } else { 0 },
            "{rows}x{cols}: {row_group:?} opens and closes once"
        );
        assert!(overview.contains(&format!("\n-mesh.pe_{r}_0\n")));
    }
    // Nonzero operands really travelled: every step of the first tile crosses every hop.
    assert!(
        moved_a >= rows * (cols - 1) * (k - 1) && moved_b >= (rows - 1) * cols * (k - 1),
        "{rows}x{cols}: {moved_a} {moved_b}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn controller_state_names_reach_gtkwave() {
    let dir = std::env::temp_dir().join(format!("tcrtl_hw_labels_{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("tmp dir");
    let cfg = CoreConfig::new(FP16, FP16, AccMode::Ieee, 1);
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

/// The save files of a traced GEMM: FP32 words as reals (`@40020`: GTKWave's `TR_REAL` 0x40000
/// with right-justify 0x20), FP16 buses and control words through the `tcrtl wave-filter`
/// process (`@4022`: `TR_PTRANSLATED` 0x4000 with hex and right-justify, one `^>N` slot per
/// kind), and the overview with a few signals per PE in closed groups (`@c00200` to
/// `@1401200`).
#[test]
fn save_files_show_reals_and_filtered_lanes_and_an_overview() {
    let dir = std::env::temp_dir().join(format!("tcrtl_hw_display_{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("tmp dir");
    let cfg = CoreConfig::new(FP16, FP16, AccMode::Ieee, 1);
    let g = Gemm::random(4, 4, 4, cfg, 5).expect("problem");
    run_clocked(&g, Some(&TraceConfig::vcd(dir.join("tc.vcd")))).expect("clocked, traced");
    let full = std::fs::read_to_string(dir.join("tc.gtkw")).expect("save file");
    let has = |text: &str, want: &str| assert!(text.contains(want), "{want:?} not in\n{text}");
    has(&full, "@40020\ntensor_core.d_out_0[31:0]\n");
    has(&full, "@40020\ntensor_core.mesh.pe_2_1.acc_0[31:0]\n");
    has(
        &full,
        "tcrtl wave-filter fp16\ntensor_core.mesh.pe_0_0.a_in[15:0]\n",
    );
    has(
        &full,
        "tcrtl wave-filter ctl\ntensor_core.mesh.pe_3_3.a_ctl[9:0]\n",
    );
    has(&full, "tcrtl wave-filter tag\ntensor_core.d_tag[63:0]\n");
    has(&full, "@24\ntensor_core.mesh.pe_0_0.align_shift[15:0]\n");
    has(
        &full,
        "@4022\n^>4 tcrtl wave-filter prod\ntensor_core.mesh.pe_0_0.s1_prod[63:0]\n",
    );
    // One process slot per kind, the same slot every time the kind recurs.
    let slots: std::collections::BTreeSet<&str> =
        full.lines().filter(|l| l.starts_with("^>")).collect();
    assert_eq!(slots.len(), 4, "{slots:?}");
    for l in &slots {
        assert!(full.contains(&format!("@4022\n{l}\n")), "{l}");
    }
    assert!(
        full.contains("@800200\n-mesh.pe_0_0\n"),
        "groups open in the full file"
    );

    let over = std::fs::read_to_string(dir.join("tc.overview.gtkw")).expect("overview");
    has(&over, "[savefile] \"tc.overview.gtkw\"\n");
    has(&over, "@c00200\n-mesh.pe_1_2\n");
    has(&over, "@1401200\n-mesh.pe_1_2\n");
    has(&over, "tensor_core.mesh.pe_1_2.a_in[15:0]");
    has(&over, "tensor_core.mesh.pe_1_2.acc_1[31:0]");
    has(&over, "^1 tc.tensor_core.controller.state.txt\n");
    for absent in ["s1_prod", "exp_sum", "a_skew", "timer"] {
        assert!(!over.contains(absent), "{absent} in the overview");
    }
    // Every signal of the overview is in the full file.
    for l in over.lines().filter(|l| l.starts_with("tensor_core.")) {
        has(&full, l);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The weight-stationary core's waveform on a `rows x cols` array: A reaches PE `(r, c)` one
/// cycle after PE `(r, c - 1)`; the partial sum entering PE `(r, c)` is PE `(r - 1, c)`'s
/// `psum` register (computed the cycle before), and the top PE's is the identity (-0) when a
/// row arrives; a weight register changes only to take the one above it as it was a cycle
/// earlier (the load shifts down one PE a cycle); every PE adds to some partial sum.
fn ws_links_move_one_pe_a_cycle(rows: usize, cols: usize, (m, n, k): (usize, usize, usize)) {
    use tensorcore_rtl::hw::Dataflow;
    let dir = std::env::temp_dir().join(format!(
        "tcrtl_hw_ws_waves_{rows}x{cols}_{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("tmp dir");
    let path = dir.join("ws.vcd");
    let cfg = CoreConfig::new(FP16, FP16, AccMode::Ieee, 1)
        .with_array(rows, cols)
        .expect("a valid array")
        .with_dataflow(Dataflow::Ws);
    let g = Gemm::random(m, n, k, cfg, 12).expect("problem");
    let r = run_clocked(&g, Some(&TraceConfig::vcd(&path))).expect("clocked, traced");
    assert_eq!(r.out, run_functional(&g).expect("functional"));

    let waves = Waves::read(&path);
    let pe = |r: usize, c: usize, sig: &str| format!("tensor_core.mesh.pe_{r}_{c}.{sig}");
    for name in [
        "tensor_core.controller.state",
        "tensor_core.controller.load",
        "tensor_core.accum.flags",
    ] {
        assert!(waves.has(name), "{name} missing");
    }
    let cycles = waves.cycles();
    let (mut moved_a, mut moved_w, mut added) = (0, 0, 0);
    let neg_zero = format!("1{}", "0".repeat(31));
    for t in 1..cycles {
        for r in 0..rows {
            for c in 0..cols {
                if c > 0 {
                    let here = waves.bits(&pe(r, c, "a_in"), t);
                    assert_eq!(
                        here,
                        waves.bits(&pe(r, c - 1, "a_in"), t - 1),
                        "A at pe_{r}_{c}, {t}"
                    );
                    moved_a += usize::from(here.contains('1'));
                }
                let psum_in = waves.bits(&pe(r, c, "psum_in"), t);
                if r > 0 {
                    let up = waves.bits(&pe(r - 1, c, "psum"), t);
                    assert_eq!(psum_in, up, "partial sum into pe_{r}_{c}, {t}");
                }
                let psum = waves.bits(&pe(r, c, "psum"), t);
                if waves.bits(&pe(r, c, "psum_vld"), t) == "1"
                    && psum != waves.bits(&pe(r, c, "psum_in"), t - 1)
                {
                    added += 1;
                }
                for set in ["w_0", "w_1"] {
                    let now = waves.bits(&pe(r, c, set), t);
                    if r > 0 && now != waves.bits(&pe(r, c, set), t - 1) {
                        assert_eq!(
                            now,
                            waves.bits(&pe(r - 1, c, set), t - 1),
                            "{set} of pe_{r}_{c}, {t}"
                        );
                        moved_w += 1;
                    }
                }
            }
        }
        // The top PEs add to the identity.
        for c in 0..cols {
            if waves.bits(&pe(0, c, "s1_row"), t) == "1" {
                assert_eq!(
                    waves.bits(&pe(0, c, "psum_in"), t),
                    neg_zero,
                    "top of column {c}, {t}"
                );
            }
        }
    }
    assert!(
        moved_a >= rows * (cols - 1) * m,
        "{rows}x{cols}: A moved {moved_a}"
    );
    assert!(
        moved_w >= (rows - 1) * cols,
        "{rows}x{cols}: weights moved {moved_w}"
    );
    assert!(added >= rows * cols * m, "{rows}x{cols}: {added} additions");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn ws_operands_weights_and_partial_sums_move_one_pe_a_cycle() {
    ws_links_move_one_pe_a_cycle(4, 4, (6, 4, 9));
    ws_links_move_one_pe_a_cycle(8, 8, (11, 9, 17));
    ws_links_move_one_pe_a_cycle(3, 5, (7, 6, 8));
}

/// The input-stationary core's waveform on a 3 x 5 array (a 7 x 9 x 8 FP16 GEMM: two blocks
/// of A's rows held, three folds of K): B reaches PE `(r, c)` one cycle after PE `(r, c - 1)`;
/// the partial sum entering PE `(r, c)` is PE `(r - 1, c)`'s `psum` register, and the top
/// PE's is the identity (-0) when a row arrives; a held register (`a_0`, `a_1`) changes only
/// to take the one above it as it was a cycle earlier (the load shifts down one PE a cycle);
/// and A stays: the held set a row multiplies by does not change while the pass streams, and
/// each PE's held registers change at most `R` times a pass (one load, `R` shifts down the
/// column) while `N` columns of B stream past it each pass.
#[test]
fn is_inputs_stay_and_partial_sums_move_one_pe_a_cycle() {
    use tensorcore_rtl::hw::dataflow::is::is_schedule;
    use tensorcore_rtl::hw::Dataflow;
    let (rows, cols, (m, n, k)) = (3usize, 5usize, (7usize, 9usize, 8usize));
    let dir = std::env::temp_dir().join(format!("tcrtl_hw_is_waves_{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("tmp dir");
    let path = dir.join("is.vcd");
    let cfg = CoreConfig::new(FP16, FP16, AccMode::Ieee, 1)
        .with_array(rows, cols)
        .expect("a valid array")
        .with_dataflow(Dataflow::Is);
    let g = Gemm::random(m, n, k, cfg, 13).expect("problem");
    let r = run_clocked(&g, Some(&TraceConfig::vcd(&path))).expect("clocked, traced");
    assert_eq!(r.out, run_functional(&g).expect("functional"));
    let s = is_schedule(&cfg, m, n, k);
    let passes = s.passes();
    assert!(s.folds > 1 && s.col_tiles > 1, "{s:?}");
    assert_eq!(r.cycles, s.total_cycles());

    let waves = Waves::read(&path);
    let pe = |r: usize, c: usize, sig: &str| format!("tensor_core.mesh.pe_{r}_{c}.{sig}");
    for r in 0..rows {
        for c in 0..cols {
            for sig in [
                "b_in", "b_out", "b_ctl", "a_0", "av_0", "a_1", "av_1", "psum_in", "psum",
                "psum_vld", "s1_row",
            ] {
                assert!(waves.has(&pe(r, c, sig)), "{} missing", pe(r, c, sig));
            }
            // The names are input-stationary's: no weights, no A streaming.
            for sig in ["w_0", "w_1", "wv_0", "a_in", "a_out", "a_ctl"] {
                assert!(
                    !waves.has(&pe(r, c, sig)),
                    "{} in the is waves",
                    pe(r, c, sig)
                );
            }
        }
    }
    let cycles = waves.cycles();
    // The control word a PE's row carried in cycle `t` is its `b_ctl` register in `t + 1`:
    // bit 9 valid, bit 8 the held set it multiplies by (`hw::pe::ACtl`).
    let ctl = |r: usize, c: usize, t: usize| waves.value(&pe(r, c, "b_ctl"), t + 1);
    let neg_zero = format!("1{}", "0".repeat(31));
    let mut moved_b = 0;
    let mut stayed = 0;
    let mut changes = vec![vec![0usize; cols]; rows];
    let mut streamed = vec![vec![0usize; cols]; rows];
    for t in 1..cycles {
        for r in 0..rows {
            for c in 0..cols {
                if c > 0 {
                    let here = waves.bits(&pe(r, c, "b_in"), t);
                    assert_eq!(
                        here,
                        waves.bits(&pe(r, c - 1, "b_in"), t - 1),
                        "B at pe_{r}_{c}, {t}"
                    );
                    moved_b += usize::from(here.contains('1'));
                }
                if r > 0 {
                    assert_eq!(
                        waves.bits(&pe(r, c, "psum_in"), t),
                        waves.bits(&pe(r - 1, c, "psum"), t),
                        "partial sum into pe_{r}_{c}, {t}"
                    );
                }
                let mut changed = false;
                for set in ["a_0", "a_1"] {
                    let now = waves.bits(&pe(r, c, set), t);
                    if now != waves.bits(&pe(r, c, set), t - 1) {
                        changed = true;
                        if r > 0 {
                            assert_eq!(
                                now,
                                waves.bits(&pe(r - 1, c, set), t - 1),
                                "{set} of pe_{r}_{c}, {t}"
                            );
                        }
                    }
                }
                changes[r][c] += usize::from(changed);
                streamed[r][c] += usize::from(waves.bits(&pe(r, c, "s1_row"), t) == "1");
                // A stays: two rows in a row on the same set multiply by the same held lanes.
                if t + 1 < cycles {
                    let (now, before) = (ctl(r, c, t), ctl(r, c, t - 1));
                    let valid = |w: u64| w != u64::MAX && w >> 9 & 1 == 1;
                    if valid(now) && valid(before) && (now >> 8 & 1) == (before >> 8 & 1) {
                        let set = if now >> 8 & 1 == 1 { "a_1" } else { "a_0" };
                        assert_eq!(
                            waves.bits(&pe(r, c, set), t),
                            waves.bits(&pe(r, c, set), t - 1),
                            "{set} of pe_{r}_{c} changed under a streaming pass, {t}"
                        );
                        stayed += 1;
                    }
                }
            }
        }
        // The top PEs add to the identity.
        for c in 0..cols {
            if waves.bits(&pe(0, c, "s1_row"), t) == "1" {
                assert_eq!(
                    waves.bits(&pe(0, c, "psum_in"), t),
                    neg_zero,
                    "top of column {c}, {t}"
                );
            }
        }
    }
    for r in 0..rows {
        for c in 0..cols {
            // Every column of B of every pass streams past every PE ...
            assert_eq!(streamed[r][c], passes * n, "rows streamed past pe_{r}_{c}");
            // ... while its held lanes change only with a load: one load a pass, which
            // shifts the column down R times (the values for the rows below pass through).
            assert!(
                changes[r][c] <= passes * rows,
                "pe_{r}_{c}: held registers changed {} times in {passes} passes",
                changes[r][c]
            );
            assert!(changes[r][c] < streamed[r][c]);
        }
    }
    assert!(moved_b >= rows * (cols - 1) * n, "B moved {moved_b} times");
    // Each pass streams its N columns of B on consecutive cycles on one held set (the next
    // pass on the other): every consecutive pair of them was checked above.
    assert_eq!(
        stayed,
        rows * cols * passes * (n - 1),
        "consecutive rows on one held set"
    );
    // Loads did happen: the top PE of each held column took a new row of A.
    assert!(changes[0].iter().all(|&c| c > 0), "{changes:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// 2:4 sparse on the weight-stationary core: each row's selects enter beside A and move
/// right with it one PE a cycle (`meta_in` of PE `(r, c)` is `meta_out` of PE `(r, c - 1)`,
/// which held it since the cycle before), and each weight register holds the dense group of
/// four K positions at w = 1 (64 bits of FP16).
#[test]
fn ws_sparse_selects_move_right_beside_a() {
    use tensorcore_rtl::hw::Dataflow;
    use tensorcore_rtl::sparse::{run_clocked_sparse_measured, run_functional_sparse, SparseGemm};
    let (rows, cols) = (3, 4);
    let dir = std::env::temp_dir().join(format!("tcrtl_hw_ws_sparse_{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("tmp dir");
    let path = dir.join("ws_sparse.vcd");
    let cfg = CoreConfig::new(FP16, FP16, AccMode::Ieee, 1)
        .with_array(rows, cols)
        .expect("a valid array")
        .with_dataflow(Dataflow::Ws);
    let g = SparseGemm::random(7, 5, 24, cfg, 5).expect("problem");
    let r = run_clocked_sparse_measured(&g, Some(&TraceConfig::vcd(&path))).expect("clocked");
    assert_eq!(r.run.out, run_functional_sparse(&g).expect("functional"));

    let waves = Waves::read(&path);
    let pe = |r: usize, c: usize, sig: &str| format!("tensor_core.mesh.pe_{r}_{c}.{sig}");
    for sig in ["meta_in", "meta_out", "sel_0", "b_sel"] {
        assert!(waves.has(&pe(rows - 1, cols - 1, sig)), "{sig} missing");
    }
    let mut moved = 0;
    for t in 1..waves.cycles() {
        for r in 0..rows {
            for c in 1..cols {
                let here = waves.bits(&pe(r, c, "meta_in"), t);
                assert_eq!(
                    here,
                    waves.bits(&pe(r, c - 1, "meta_out"), t),
                    "selects into pe_{r}_{c}, {t}"
                );
                assert_eq!(
                    here,
                    waves.bits(&pe(r, c - 1, "meta_in"), t - 1),
                    "selects one PE a cycle at pe_{r}_{c}, {t}"
                );
                moved += usize::from(here.contains('1'));
            }
        }
    }
    assert!(moved > rows * (cols - 1), "selects moved {moved}");
    assert_eq!(waves.bits(&pe(0, 0, "w_0"), 0).len(), 64, "four FP16 lanes");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The toggle totals counted at the registers (`TraceConfig::counting`, where the array's
/// operand registers are counted as shift chains) equal the SAIF's snapshot counts signal by
/// signal, on the real core at w = 1 and w = 4, with the batch the counter chooses and with
/// short ones (1 to 32 cycles): every batch boundary is one the chains' formula must carry
/// across.
#[test]
fn the_core_counted_in_batches_of_any_length_matches_its_snapshot_counts() {
    let dir = std::env::temp_dir().join(format!("tcrtl_hw_batches_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for width in [1usize, 4] {
        let cfg = CoreConfig::new(FP16, FP16, AccMode::Ieee, width);
        let g = Gemm::random(8, 8, 24 * width, cfg, 7).unwrap();
        let saif = TraceConfig::activity(dir.join(format!("w{width}.saif")));
        let per_bit = run_clocked(&g, Some(&saif)).unwrap().activity.unwrap();
        assert!(per_bit.total_toggles() > 0);
        for batch in BATCHES {
            let totals = run_clocked(&g, Some(&counting(batch)))
                .unwrap()
                .activity
                .unwrap();
            assert_same_totals(&per_bit, &totals, &format!("w = {width} batch {batch:?}"));
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}
