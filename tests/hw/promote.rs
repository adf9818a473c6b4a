//! The promoted GEMM (`gemm::promote`): the clocked core run chunk by chunk with the FP32
//! additions outside it gives the functional model's bits and the independent reference's
//! (`verify::promote_ref`: chunk references added with host `f32` `+`), on both dataflows;
//! K <= N is the unpromoted run; the refusals.

use tensorcore_rtl::gemm::promote::{
    run_clocked_promoted, run_functional_promoted, PromoteRunError,
};
use tensorcore_rtl::gemm::{run_clocked, CoreConfig, Gemm};
use tensorcore_rtl::hw::Dataflow;
use tensorcore_rtl::numerics::dot::{AccMode, Preset, PromoteError};
use tensorcore_rtl::numerics::format::{Format, BF16, E4M3, E5M2, FP16, FP32};
use tensorcore_rtl::verify::promote_ref::{promoted_gemm, promoted_mismatches};

fn cfg(fmt: Format, mode: AccMode, width: usize, df: Dataflow) -> CoreConfig {
    CoreConfig::new(fmt, fmt, mode, width)
        .with_acc(FP32)
        .with_array(4, 4)
        .expect("4 x 4")
        .with_dataflow(df)
}

/// Format, mode, preset, width, dataflow, K and the promotion interval of one case.
type Case = (
    Format,
    AccMode,
    Option<Preset>,
    usize,
    Dataflow,
    usize,
    usize,
);

#[test]
fn clocked_functional_and_reference_agree() {
    let hopper = |f: Format| AccMode::Nvidia(Preset::Hopper.params(f, f).expect("preset"));
    let cases: [Case; 6] = [
        (
            E4M3,
            hopper(E4M3),
            Some(Preset::Hopper),
            4,
            Dataflow::Os,
            100,
            32,
        ),
        (
            E5M2,
            hopper(E5M2),
            Some(Preset::Hopper),
            8,
            Dataflow::Os,
            129,
            64,
        ),
        (
            E4M3,
            hopper(E4M3),
            Some(Preset::Hopper),
            32,
            Dataflow::Ws,
            200,
            64,
        ),
        (FP16, AccMode::Ieee, None, 2, Dataflow::Os, 45, 7),
        (BF16, AccMode::Fused, None, 4, Dataflow::Ws, 70, 20),
        (
            FP16,
            hopper(FP16),
            Some(Preset::Hopper),
            16,
            Dataflow::Ws,
            50,
            16,
        ),
    ];
    for (i, (fmt, mode, preset, w, df, k, every)) in cases.into_iter().enumerate() {
        let g = Gemm::random(6, 5, k, cfg(fmt, mode, w, df), 40 + i as u64).expect("problem");
        let run = run_clocked_promoted(&g, every).expect("clocked");
        assert_eq!(run.chunks.len(), k.div_ceil(every), "case {i}");
        let functional = run_functional_promoted(&g, every).expect("functional");
        assert_eq!(run.out, functional, "case {i}: clocked vs functional");
        let want = promoted_gemm(&g, preset, every).expect("reference");
        assert!(
            promoted_mismatches(&run.out.d, &want).is_empty(),
            "case {i}: clocked vs reference"
        );
        // Promotion changes some element of these problems (K spans several chunks).
        let plain = run_clocked(&g, None).expect("plain");
        assert_ne!(
            plain.out.d, run.out.d,
            "case {i}: promotion changed nothing"
        );
    }
}

#[test]
fn an_interval_of_k_or_more_is_the_plain_run() {
    let mode = AccMode::Nvidia(Preset::Hopper.params(E4M3, E4M3).expect("preset"));
    let g = Gemm::random(4, 4, 64, cfg(E4M3, mode, 4, Dataflow::Os), 7).expect("problem");
    let plain = run_clocked(&g, None).expect("plain");
    for n in [64, 128] {
        let run = run_clocked_promoted(&g, n).expect("promoted");
        assert_eq!(run.out, plain.out);
        assert_eq!(run.cycles(), plain.cycles);
    }
}

#[test]
fn refusals() {
    let mode = AccMode::Nvidia(Preset::Hopper.params(E4M3, E4M3).expect("preset"));
    let g = Gemm::random(4, 4, 64, cfg(E4M3, mode, 4, Dataflow::Os), 7).expect("problem");
    assert!(matches!(
        run_clocked_promoted(&g, 16),
        Err(PromoteRunError::Promote(PromoteError::SplitsBlock {
            every: 16,
            block: 32
        }))
    ));
    let half = CoreConfig::new(FP16, FP16, AccMode::Ieee, 1).with_acc(FP16);
    let g = Gemm::random(4, 4, 8, half, 1).expect("problem");
    assert!(matches!(
        run_functional_promoted(&g, 4),
        Err(PromoteRunError::Promote(PromoteError::NotFp32("fp16")))
    ));
}
