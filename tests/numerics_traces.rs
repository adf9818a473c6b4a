//! The stage trace fields (`RoundTrace`, `AddTrace`, `FmaStage`, `StepResult`) are what the
//! clocked PE exposes on its waveforms, so a speed-up of the datapath must leave them
//! bit-for-bit unchanged, not only the results and flags. This test folds every field of
//! many operations (random and edge-heavy operands, every rounding mode, every format) into
//! one FNV-1a digest per unit and compares it with the digest recorded from the reference
//! implementation (the straightforward 128-bit-window code of commit 47eba23).
//!
//! If a digest changes on purpose (a trace field is redefined), record the new value here and
//! say why in the commit message.

mod common;

use common::Rng;
use tensorcore_rtl::numerics::dot::ieee::fma;
use tensorcore_rtl::numerics::dot::{dot_step_w, AccMode, Preset, StepResult};
use tensorcore_rtl::numerics::{
    add, convert, multiply, round_product, AddTrace, Flags, Format, Overflow, RoundTrace, Rounded,
    RoundingMode, Unrounded, ALL_FORMATS, BF16, E4M3, FP16, FP32, INPUT_FORMATS,
};

/// FNV-1a over 64-bit words.
struct Digest(u64);

impl Digest {
    fn new() -> Self {
        Digest(0xCBF2_9CE4_8422_2325)
    }
    fn word(&mut self, w: u64) {
        for b in w.to_le_bytes() {
            self.0 ^= b as u64;
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01B3);
        }
    }
    fn int(&mut self, x: i64) {
        self.word(x as u64)
    }
    fn flags(&mut self, f: Flags) {
        self.word(f.to_bits() as u64)
    }
    fn round(&mut self, t: &RoundTrace) {
        self.word(t.lzc as u64);
        self.int(t.norm_exp as i64);
        self.int(t.shift as i64);
        self.word(
            (t.subnormal as u64)
                | (t.guard as u64) << 1
                | (t.sticky as u64) << 2
                | (t.round_inc as u64) << 3,
        );
    }
    fn rounded(&mut self, r: &Rounded) {
        self.word(r.bits);
        self.flags(r.flags);
        self.round(&r.trace);
    }
    fn align(&mut self, a: &AddTrace) {
        self.word((a.swapped as u64) | (a.sticky as u64) << 1 | (a.effective_sub as u64) << 2);
        self.int(a.max_exp as i64);
        self.word(a.exp_diff as u64);
        self.word(a.align_shift as u64);
    }
    fn unrounded(&mut self, u: &Unrounded) {
        self.word((u.sign as u64) | (u.sticky as u64) << 1);
        self.int(u.exp as i64);
        self.word(u.sig as u64);
        self.word((u.sig >> 64) as u64);
    }
    fn step(&mut self, s: &StepResult) {
        self.word(s.bits as u64);
        self.flags(s.flags);
        self.int(s.max_exp as i64);
        self.round(&s.round);
    }
}

/// An encoding of `fmt` biased toward edges: random bits, extreme exponents, near-ties.
fn operand(rng: &mut Rng, fmt: Format) -> u64 {
    let r = rng.next_u64();
    let emax = fmt.exp_field_max();
    let exp = match rng.below(4) {
        0 => (r >> 40) & emax,
        1 => rng.pick(&[0, 1, 2, emax / 2, emax / 2 + 1, emax - 1, emax]),
        _ => (emax / 2).saturating_sub(4) + rng.below(9),
    };
    let frac = match rng.below(4) {
        0 => r & fmt.frac_mask(),
        1 => rng.pick(&[
            0,
            1,
            fmt.frac_mask(),
            fmt.frac_mask() - 1,
            fmt.frac_mask() >> 1,
        ]),
        _ => (r >> 7) & fmt.frac_mask(),
    };
    fmt.with_sign((exp << fmt.frac_bits) | frac, rng.coin())
}

/// A second FP32 operand near `a`: nearby exponent, negation, one ulp away, or random.
fn partner32(rng: &mut Rng, a: u64) -> u64 {
    match rng.below(5) {
        0 => a ^ 0x8000_0000,
        1 => (a ^ 0x8000_0000).wrapping_add(1) & 0xFFFF_FFFF,
        2 => {
            let e = ((a >> 23) & 0xFF) as i64 - rng.below(64) as i64;
            let e = e.clamp(0, 255) as u64;
            (rng.next_u64() & 0x807F_FFFF) | (e << 23)
        }
        3 => {
            let e = ((a >> 23) & 0xFF) as i64 - rng.below(160) as i64 + 20;
            let e = e.clamp(0, 254) as u64;
            (rng.next_u64() & 0x807F_FFFF) | (e << 23)
        }
        _ => operand(rng, FP32),
    }
}

fn add_digest() -> u64 {
    let mut d = Digest::new();
    let mut rng = Rng(0xADD);
    for _ in 0..60_000 {
        let a = operand(&mut rng, FP32);
        let b = partner32(&mut rng, a);
        for mode in RoundingMode::ALL {
            let r = add(FP32, a, b, mode);
            d.rounded(&r.rounded);
            d.align(&r.align);
        }
    }
    for fmt in ALL_FORMATS {
        for _ in 0..10_000 {
            let a = operand(&mut rng, fmt);
            let b = operand(&mut rng, fmt);
            for mode in RoundingMode::ALL {
                let r = add(fmt, a, b, mode);
                d.rounded(&r.rounded);
                d.align(&r.align);
            }
        }
    }
    d.0
}

/// An FP32 accumulator in the range of the products of `fa` x `fb`, or an edge value.
fn accumulator(rng: &mut Rng, p_exp: i32) -> u32 {
    match rng.below(4) {
        0 => operand(rng, FP32) as u32,
        _ => {
            let e = (p_exp + 127 + rng.below(80) as i32 - 40).clamp(0, 255) as u32;
            (rng.next_u64() as u32 & 0x807F_FFFF) | (e << 23)
        }
    }
}

fn fma_digest() -> u64 {
    let mut d = Digest::new();
    let mut rng = Rng(0xF3A);
    for fa in INPUT_FORMATS {
        for fb in INPUT_FORMATS {
            for _ in 0..20_000 {
                let a = operand(&mut rng, fa);
                let b = operand(&mut rng, fb);
                let p = multiply(fa, a, fb, b);
                let c = accumulator(&mut rng, p.exp_sum);
                let s = fma(c, &p);
                d.word(s.bits as u64);
                d.flags(s.flags);
                d.align(&s.align);
                d.unrounded(&s.sum);
                d.round(&s.round);
                for mode in RoundingMode::ALL {
                    d.rounded(&round_product(&p, FP32, mode, Overflow::Ieee));
                    d.rounded(&round_product(&p, fa, mode, Overflow::Saturate));
                }
            }
        }
    }
    d.0
}

fn convert_digest() -> u64 {
    let mut d = Digest::new();
    let mut rng = Rng(0xC0E);
    for from in ALL_FORMATS {
        for to in ALL_FORMATS {
            for _ in 0..5_000 {
                let x = operand(&mut rng, from);
                for mode in RoundingMode::ALL {
                    for policy in [Overflow::Ieee, Overflow::Saturate] {
                        d.rounded(&convert(from, to, x, mode, policy));
                    }
                }
            }
        }
    }
    d.0
}

/// The input pairs of the step digest (FP8 reaches Blackwell's exact-then-RNE rule).
const PAIRS: [(Format, Format); 3] = [(FP16, FP16), (BF16, BF16), (E4M3, E4M3)];

fn step_digest() -> u64 {
    let mut d = Digest::new();
    let mut rng = Rng(0x57E9);
    let mut modes = vec![AccMode::Ieee, AccMode::Fused];
    for (fa, fb) in PAIRS {
        for preset in Preset::ALL {
            if let Ok(p) = preset.params(fa, fb) {
                modes.push(AccMode::Nvidia(p));
            }
        }
    }
    for mode in &modes {
        for (fa, fb) in PAIRS {
            for _ in 0..4_000 {
                let a: Vec<u64> = (0..16).map(|_| operand(&mut rng, fa)).collect();
                let b: Vec<u64> = (0..16).map(|_| operand(&mut rng, fb)).collect();
                let c = accumulator(&mut rng, 0);
                d.step(&dot_step_w::<1>(mode, fa, fb, &a[..1], &b[..1], c));
                d.step(&dot_step_w::<4>(mode, fa, fb, &a[..4], &b[..4], c));
                d.step(&dot_step_w::<16>(mode, fa, fb, &a, &b, c));
            }
        }
    }
    d.0
}

#[test]
fn add_trace_digest() {
    let d = add_digest();
    assert_eq!(d, 0x180340cc6ab0cc6e, "add digest {d:#018x}");
}

#[test]
fn fma_trace_digest() {
    let d = fma_digest();
    assert_eq!(d, 0x4b68ca797cbea49c, "fma digest {d:#018x}");
}

#[test]
fn convert_trace_digest() {
    let d = convert_digest();
    assert_eq!(d, 0x340c74fb9d56bb4d, "convert digest {d:#018x}");
}

#[test]
fn step_trace_digest() {
    let d = step_digest();
    assert_eq!(d, 0x939c00699acb330d, "step digest {d:#018x}");
}
