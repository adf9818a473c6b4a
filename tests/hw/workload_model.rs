//! The workload layer's library pieces (`tensorcore_rtl::workload`): topology parsing and
//! im2col lowering worked by hand, SCALE-Sim's fold formula worked by hand, the per-layer
//! seeds and output samples, and the sampled check on the clocked core in both dataflows.

use std::collections::BTreeSet;
use tensorcore_rtl::gemm::dispatch::Problem;
use tensorcore_rtl::gemm::{CoreConfig, Gemm};
use tensorcore_rtl::hw::Dataflow;
use tensorcore_rtl::numerics::dot::AccMode;
use tensorcore_rtl::numerics::format::FP16;
use tensorcore_rtl::workload::{
    check_layer, layer_seed, parse, sample_indices, scalesim_cycles, ConvLayer, LayerKind,
    TopologyFormat,
};

#[test]
fn conv_lowering_worked_by_hand() {
    // ResNet's first layer: 224 x 224 (padded), 7 x 7 filters, 3 channels, 64 filters,
    // stride 2: ceil((224 - 7 + 2) / 2) = ceil(219 / 2) = 110 (SCALE-Sim's rounding up).
    let t = parse(
        "Layer name, IFMAP Height, IFMAP Width, Filter Height, Filter Width, Channels, Num Filter, Strides,\n\
         Conv1, 224, 224, 7, 7, 3, 64, 2,\n",
    )
    .unwrap();
    assert_eq!(t.format, TopologyFormat::Conv);
    let LayerKind::Conv(c) = t.layers[0].kind else {
        panic!("not a convolution")
    };
    assert_eq!(c.ofmap(), (110, 110));
    // M = 110 * 110 = 12100, N = 64, K = 7 * 7 * 3 = 147.
    assert_eq!(t.layers[0].gemm(), (12100, 64, 147));
}

#[test]
fn conv_non_square_and_exact_fit() {
    // AlexNet-like: 227 x 227, 11 x 11, stride 4: (227 - 11) / 4 + 1 = 54 + 1 = 55.
    let c = ConvLayer {
        ifmap_h: 227,
        ifmap_w: 13,
        filt_h: 11,
        filt_w: 13,
        channels: 3,
        num_filters: 96,
        stride: 4,
    };
    // Width: the filter fits once: (13 - 13) / 4 + 1 = 1.
    assert_eq!(c.ofmap(), (55, 1));
    assert_eq!(c.gemm(), (55, 96, 11 * 13 * 3));
}

#[test]
fn gemm_format_with_and_without_trailing_comma_and_blank_lines() {
    let t = parse("Layer, M, N, K,\n\nqkv, 16, 48, 32,\n  \nout,16,16,16\n\n").unwrap();
    assert_eq!(t.format, TopologyFormat::Gemm);
    assert_eq!(t.layers.len(), 2);
    assert_eq!(t.layers[0].name, "qkv");
    assert_eq!(t.layers[0].gemm(), (16, 48, 32));
    assert_eq!(t.layers[1].gemm(), (16, 16, 16));
}

#[test]
fn header_case_and_spacing_do_not_matter() {
    let t = parse("layer name,ifmap height,ifmap width,filter height,filter width,channels,num filter,strides\nc,8,8,3,3,2,4,1\n").unwrap();
    assert_eq!(t.format, TopologyFormat::Conv);
    assert_eq!(t.layers[0].gemm(), (36, 4, 18));
}

#[test]
fn refusals_name_the_line() {
    let conv = "Layer name, IFMAP Height, IFMAP Width, Filter Height, Filter Width, Channels, Num Filter, Strides,\n";
    for (text, want) in [
        ("", "empty topology"),
        ("Name, A, B\nx,1,2\n", "line 1: unknown header"),
        ("Layer, M, N, K\nx, 1, 2\n", "line 2: 3 columns"),
        ("Layer, M, N, K\nx, 1, 2, 3, 4\n", "line 2: 5 columns"),
        ("Layer, M, N, K\nx, 1, 0, 3\n", "line 2: layer x: N is 0"),
        (
            "Layer, M, N, K\n\nx, 1, two, 3\n",
            "line 3: layer x: N \"two\" is not a whole number",
        ),
        ("Layer, M, N, K\nx, -1, 2, 3\n", "is not a whole number"),
        ("Layer, M, N, K\n", "no layers"),
    ] {
        let e = parse(text).unwrap_err().0;
        assert!(e.contains(want), "{text:?}: {e}");
        assert!(!e.contains('\n'), "{e}");
    }
    let e = parse(&format!("{conv}big, 4, 4, 5, 3, 1, 1, 1,\n"))
        .unwrap_err()
        .0;
    assert!(
        e.starts_with("line 2: layer big: the 5 x 3 filter is larger"),
        "{e}"
    );
    let e = parse(&format!("{conv}s0, 4, 4, 3, 3, 1, 1, 0,\n"))
        .unwrap_err()
        .0;
    assert!(e.contains("Strides is 0"), "{e}");
}

#[test]
fn layer_seeds_differ_and_repeat() {
    let s: Vec<u64> = (0..8).map(|i| layer_seed(1, i)).collect();
    let distinct: BTreeSet<u64> = s.iter().copied().collect();
    assert_eq!(distinct.len(), 8);
    assert_eq!(layer_seed(1, 3), s[3]);
    assert_ne!(layer_seed(2, 3), s[3]);
}

#[test]
fn samples_are_distinct_sorted_and_in_range() {
    let v = sample_indices(1000, 256, 7);
    assert_eq!(v.len(), 256);
    assert!(v.windows(2).all(|w| w[0] < w[1]));
    assert!(v.iter().all(|&i| i < 1000));
    assert_eq!(sample_indices(10, 256, 7), (0..10).collect::<Vec<_>>());
    assert_ne!(sample_indices(1000, 8, 7), sample_indices(1000, 8, 8));
}

#[test]
fn a_sampled_check_finds_a_flipped_element_it_draws() {
    let cfg = CoreConfig::new(FP16, FP16, AccMode::Ieee, 1);
    let g = Gemm::random(8, 8, 8, cfg, 3).unwrap();
    let done = tensorcore_rtl::gemm::run(Problem::Dense(&g), None, None).unwrap();
    let mut d = done.run.out.d.clone();
    let whole = check_layer(&g, None, &d, u64::MAX, 0, 0).unwrap();
    assert!(whole.complete() && whole.mismatches.is_empty());
    // Sampled (max_check 0): 5 of 64, none wrong.
    let s = check_layer(&g, None, &d, 0, 5, 9).unwrap();
    assert_eq!((s.checked, s.total), (5, 64));
    assert!(s.mismatches.is_empty());
    // Flip one drawn element: the sample finds it; the full check finds it too.
    let i = sample_indices(64, 5, 9)[2];
    d[i] ^= 1;
    assert_eq!(
        check_layer(&g, None, &d, 0, 5, 9).unwrap().mismatches,
        vec![i]
    );
    assert_eq!(
        check_layer(&g, None, &d, u64::MAX, 0, 0)
            .unwrap()
            .mismatches,
        vec![i]
    );
}

#[test]
fn a_sampled_ws_check_uses_the_ws_order() {
    // K = 40 on 4 rows: 10 folds, each rounded on its own and added in K order.
    let cfg = CoreConfig::new(FP16, FP16, AccMode::Ieee, 1)
        .with_array(4, 4)
        .unwrap()
        .with_dataflow(Dataflow::Ws);
    let g = Gemm::random(6, 5, 40, cfg, 11).unwrap();
    let done = tensorcore_rtl::gemm::run(Problem::Dense(&g), None, None).unwrap();
    let d = done.run.out.d;
    let s = check_layer(&g, None, &d, 0, 12, 4).unwrap();
    assert_eq!(s.reference, "ws_ref(ieee_dot)");
    assert_eq!((s.checked, s.total), (12, 30));
    assert!(s.mismatches.is_empty());
    let whole = check_layer(&g, None, &d, u64::MAX, 0, 0).unwrap();
    assert_eq!(whole.reference, "ws_ref(ieee_dot)");
    assert!(whole.complete() && whole.mismatches.is_empty());
}

#[test]
fn scalesim_folds_worked_by_hand() {
    // 4 x 4 array, 4 x 4 x 4: one fold; os 4 + 4 + 4 - 2 = 10, ws 8 + 4 + 4 - 2 = 14
    // (SCALE-Sim's paper example), each reported as the last cycle's index.
    assert_eq!(scalesim_cycles(Dataflow::Os, (4, 4), 4, 4, 4), 9);
    assert_eq!(scalesim_cycles(Dataflow::Ws, (4, 4), 4, 4, 4), 13);
    // 8 x 8 x 70 on 4 x 4: os 4 folds of 76; ws ceil(70/4) = 18 row folds x 2 column
    // folds of 2*4 + 4 + 8 - 2 = 18.
    assert_eq!(scalesim_cycles(Dataflow::Os, (4, 4), 8, 8, 70), 4 * 76 - 1);
    assert_eq!(scalesim_cycles(Dataflow::Ws, (4, 4), 8, 8, 70), 36 * 18 - 1);
}
