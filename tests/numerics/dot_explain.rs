//! `dot --explain`: the stage-by-stage explanation ends on the same bits as the plain dot
//! product (library, over many random inputs in every mode), and the CLI prints the
//! hand-computed shift and dropped bits of a probe of docs/numerics.md.

use crate::common::cli::{tcrtl, text};
use tensorcore_rtl::numerics::dot::explain::explain;
use tensorcore_rtl::numerics::dot::{dot_rounded, AccMode, Preset};
use tensorcore_rtl::numerics::format::{Format, BF16, E4M3, E5M2, FP16};
use tensorcore_rtl::numerics::RoundingMode;

/// A small deterministic generator (xorshift64*).
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
}

#[test]
fn explained_bits_equal_the_plain_dot_in_every_mode() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut checked = 0;
    for fmt in [FP16, BF16, E4M3, E5M2] {
        let mut modes = vec![
            (AccMode::Ieee, RoundingMode::NearestEven),
            (AccMode::Ieee, RoundingMode::TowardZero),
            (AccMode::Fused, RoundingMode::NearestEven),
            (AccMode::Fused, RoundingMode::Up),
            (AccMode::Exact, RoundingMode::Down),
        ];
        for p in Preset::ALL {
            if let Ok(params) = p.params(fmt, fmt) {
                modes.push((AccMode::Nvidia(params), RoundingMode::NearestEven));
            }
        }
        for (mode, rm) in &modes {
            for _ in 0..60 {
                let k = 1 + (rng.next() % 32) as usize;
                let width = 1 + (rng.next() % 8) as usize;
                let mask = (1u64 << Format::width(&fmt)) - 1;
                let a: Vec<u64> = (0..k).map(|_| rng.next() & mask).collect();
                let b: Vec<u64> = (0..k).map(|_| rng.next() & mask).collect();
                let c = rng.next() as u32;
                let plain = dot_rounded(mode, *rm, fmt, fmt, &a, &b, c, width).expect("dot");
                let e = explain(mode, *rm, fmt, fmt, &a, &b, c, width).expect("explain");
                assert_eq!(e.result, plain);
                let last = e.steps.last().expect("a step");
                assert_eq!(
                    last.bits,
                    plain.bits,
                    "{} {fmt:?} a={a:x?} b={b:x?} c={c:#x} width {width}",
                    mode.name()
                );
                // Each step starts from the previous step's result, the first from c.
                let mut acc = c;
                for s in &e.steps {
                    assert_eq!(s.c, acc);
                    acc = s.bits;
                }
                checked += 1;
            }
        }
    }
    assert!(checked > 1000, "{checked}");
}

/// A Volta alignment probe of docs/numerics.md, `1 - 2^-24`. By hand: c = 1 fixes the block's
/// max_exp at 0 and, with neab = 0, the grid LSB at 2^-23. The product -2^-12 x 2^-12 has the
/// significand 1024 x 1024 = 0x100000 with its LSB at 2^(-24 - 20) = 2^-44: it shifts right by 21
/// onto the grid, nothing is kept and all of 0x100000 is dropped, so D = c = 1.
#[test]
fn the_volta_probe_shows_its_shift_and_dropped_bits() {
    let o = tcrtl(&[
        "dot",
        "--format",
        "fp16",
        "--acc",
        "nvidia",
        "--preset",
        "volta",
        "--c",
        "0x3f800000",
        "--a",
        "0x8c00",
        "--b",
        "0x0c00",
        "--explain",
    ]);
    let out = text(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    for want in [
        "acc nvidia (volta)",
        "lane 0: a 0x8c00 (-0.00024414063) x b 0x0c00 (0.00024414063) = -0x100000 x 2^-44",
        "grid LSB 2^-23",
        "lane 0: shift 21, kept 0, dropped 0x100000",
        "c:      shift 0, kept 8388608, dropped 0x0",
        "bits:  0x3f800000",
    ] {
        assert!(out.contains(want), "{want:?} not in\n{out}");
    }
    // The same inputs without --explain give the same bits.
    let plain = tcrtl(&[
        "dot",
        "--format",
        "fp16",
        "--acc",
        "nvidia",
        "--preset",
        "volta",
        "--c",
        "0x3f800000",
        "--a",
        "0x8c00",
        "--b",
        "0x0c00",
    ]);
    assert!(text(&plain.stdout).contains("bits:  0x3f800000"));
}

/// IEEE mode on the lab 4 input: 1 + 2^-24 is a tie, the guard bit is 1, nothing below it,
/// and round to nearest even does not increment (1 stays even).
#[test]
fn an_ieee_tie_shows_guard_set_and_no_increment() {
    let o = tcrtl(&[
        "dot",
        "--format",
        "fp16",
        "--acc",
        "ieee",
        "--c",
        "0x3f800000",
        "--a",
        "0x0c00",
        "--b",
        "0x0c00",
        "--explain",
    ]);
    let out = text(&o.stdout);
    assert!(
        out.contains("guard 1, sticky 0, round_inc 0 -> 0x3f800000"),
        "{out}"
    );
    let j = tcrtl(&[
        "dot",
        "--format",
        "fp16",
        "--acc",
        "fused",
        "--c",
        "0x3f800000",
        "--a",
        "0x0c00,0x0c00",
        "--b",
        "0x0c00,0x0c00",
        "--explain",
        "--json",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&j.stdout).expect("json");
    // 1 + 2^-23 (two products of 2^-24 added exactly, one rounding).
    assert_eq!(v["bits"], "0x3f800001");
    assert_eq!(v["explain"][0]["bits"], "0x3f800001");
    assert!(v["explain"][0]["lines"]
        .as_array()
        .is_some_and(|l| l.len() > 4));
}

#[test]
fn explain_refuses_what_it_cannot_show() {
    let o = tcrtl(&[
        "dot",
        "--format",
        "fp16",
        "--acc",
        "all",
        "--a",
        "0x3c00",
        "--b",
        "0x3c00",
        "--explain",
    ]);
    crate::common::cli::assert_error(&o, "--explain shows one mode");
}
