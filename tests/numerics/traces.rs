//! The stage trace fields (`RoundTrace`, `AddTrace`, `FmaStage`, `StepResult`) are what the
//! clocked PE exposes on its waveforms, so a speed-up of the datapath must leave them
//! bit-for-bit unchanged, not only the results and flags. This test folds every field of
//! many operations (random and edge-heavy operands, every rounding mode, every format) into
//! one FNV-1a digest per unit and compares it with the digest recorded from the reference
//! implementation (the straightforward 128-bit-window code of commit 47eba23).
//!
//! Besides the one digest per unit, each field has its own digest and the combined digest is
//! checkpointed every [`BLOCK`] operations, recorded in `tests/data/trace_digests/UNIT.txt`:
//! a failure names the fields that differ and the first block of operations where the
//! combined digest departs, so a change can be found without bisecting by hand.
//!
//! If a digest changes on purpose (a trace field is redefined), record the new values
//! (`TCRTL_RECORD_TRACE_DIGESTS=1 cargo test --test numerics traces::`), update the constant
//! here and say why in the commit message.

use crate::common::Rng;
use tensorcore_rtl::numerics::dot::ieee::fma;
use tensorcore_rtl::numerics::dot::{dot_step_w, AccMode, Preset, StepResult};
use tensorcore_rtl::numerics::{
    add, convert, multiply, round_product, AddTrace, Flags, Format, Overflow, RoundTrace, Rounded,
    RoundingMode, Unrounded, BF16, E4M3, E5M2, FP16, FP32,
};

/// The input formats the digests were recorded with (the table has grown since: TF32).
const RECORDED_INPUTS: [Format; 4] = [E4M3, E5M2, FP16, BF16];

/// The presets the step digest was recorded with (the table has grown since: Ada).
const RECORDED_PRESETS: [Preset; 4] = [
    Preset::Volta,
    Preset::Ampere,
    Preset::Hopper,
    Preset::Blackwell,
];

/// Operations between two checkpoints of the combined digest.
const BLOCK: u64 = 1000;

/// FNV-1a over 64-bit words: one combined digest, one per field, and checkpoints.
struct Digest {
    /// The combined digest over every word (the recorded constant).
    all: u64,
    /// One digest per field name, in first-use order.
    fields: Vec<(&'static str, u64)>,
    /// Operations so far.
    ops: u64,
    /// The combined digest after every `BLOCK` operations.
    blocks: Vec<u64>,
}

fn fnv(h: &mut u64, w: u64) {
    for b in w.to_le_bytes() {
        *h ^= b as u64;
        *h = h.wrapping_mul(0x0000_0100_0000_01B3);
    }
}

const FNV_START: u64 = 0xCBF2_9CE4_8422_2325;

impl Digest {
    fn new() -> Self {
        Digest {
            all: FNV_START,
            fields: Vec::new(),
            ops: 0,
            blocks: Vec::new(),
        }
    }
    fn word(&mut self, name: &'static str, w: u64) {
        fnv(&mut self.all, w);
        match self.fields.iter_mut().find(|(n, _)| *n == name) {
            Some((_, h)) => fnv(h, w),
            None => {
                let mut h = FNV_START;
                fnv(&mut h, w);
                self.fields.push((name, h));
            }
        }
    }
    /// Ends one operation (checkpointing every `BLOCK`).
    fn op(&mut self) {
        self.ops += 1;
        if self.ops.is_multiple_of(BLOCK) {
            self.blocks.push(self.all);
        }
    }
    fn int(&mut self, name: &'static str, x: i64) {
        self.word(name, x as u64)
    }
    fn flags(&mut self, name: &'static str, f: Flags) {
        self.word(name, f.to_bits() as u64)
    }
    fn round(&mut self, t: &RoundTrace) {
        self.word("round.lzc", t.lzc as u64);
        self.int("round.norm_exp", t.norm_exp as i64);
        self.int("round.shift", t.shift as i64);
        self.word(
            "round.subnormal|guard|sticky|round_inc",
            (t.subnormal as u64)
                | (t.guard as u64) << 1
                | (t.sticky as u64) << 2
                | (t.round_inc as u64) << 3,
        );
    }
    fn rounded(&mut self, r: &Rounded) {
        self.word("rounded.bits", r.bits);
        self.flags("rounded.flags", r.flags);
        self.round(&r.trace);
    }
    fn align(&mut self, a: &AddTrace) {
        self.word(
            "align.swapped|sticky|effective_sub",
            (a.swapped as u64) | (a.sticky as u64) << 1 | (a.effective_sub as u64) << 2,
        );
        self.int("align.max_exp", a.max_exp as i64);
        self.word("align.exp_diff", a.exp_diff as u64);
        self.word("align.align_shift", a.align_shift as u64);
    }
    fn unrounded(&mut self, u: &Unrounded) {
        self.word("sum.sign|sticky", (u.sign as u64) | (u.sticky as u64) << 1);
        self.int("sum.exp", u.exp as i64);
        self.word("sum.sig[63:0]", u.sig as u64);
        self.word("sum.sig[127:64]", (u.sig >> 64) as u64);
    }
    fn step(&mut self, s: &StepResult) {
        self.word("step.bits", s.bits as u64);
        self.flags("step.flags", s.flags);
        self.int("step.max_exp", s.max_exp as i64);
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

fn add_digest() -> Digest {
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
        d.op();
    }
    for fmt in DIGEST_FORMATS {
        for _ in 0..10_000 {
            let a = operand(&mut rng, fmt);
            let b = operand(&mut rng, fmt);
            for mode in RoundingMode::ALL {
                let r = add(fmt, a, b, mode);
                d.rounded(&r.rounded);
                d.align(&r.align);
            }
            d.op();
        }
    }
    d
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

fn fma_digest() -> Digest {
    let mut d = Digest::new();
    let mut rng = Rng(0xF3A);
    for fa in RECORDED_INPUTS {
        for fb in RECORDED_INPUTS {
            for _ in 0..20_000 {
                let a = operand(&mut rng, fa);
                let b = operand(&mut rng, fb);
                let p = multiply(fa, a, fb, b);
                let c = accumulator(&mut rng, p.exp_sum);
                let s = fma(c, &p);
                d.word("fma.bits", s.bits as u64);
                d.flags("fma.flags", s.flags);
                d.align(&s.align);
                d.unrounded(&s.sum);
                d.round(&s.round);
                for mode in RoundingMode::ALL {
                    d.rounded(&round_product(&p, FP32, mode, Overflow::Ieee));
                    d.rounded(&round_product(&p, fa, mode, Overflow::Saturate));
                }
                d.op();
            }
        }
    }
    d
}

fn convert_digest() -> Digest {
    let mut d = Digest::new();
    let mut rng = Rng(0xC0E);
    for from in DIGEST_FORMATS {
        for to in DIGEST_FORMATS {
            for _ in 0..5_000 {
                let x = operand(&mut rng, from);
                for mode in RoundingMode::ALL {
                    for policy in [Overflow::Ieee, Overflow::Saturate] {
                        d.rounded(&convert(from, to, x, mode, policy));
                    }
                }
                d.op();
            }
        }
    }
    d
}

/// The formats the add and convert digests were recorded over (the table's first five rows;
/// later rows have digests of their own).
const DIGEST_FORMATS: [Format; 5] = [E4M3, E5M2, FP16, BF16, FP32];

/// The input pairs of the step digest (FP8 reaches Blackwell's exact-then-RNE rule).
const PAIRS: [(Format, Format); 3] = [(FP16, FP16), (BF16, BF16), (E4M3, E4M3)];

fn step_digest() -> Digest {
    let mut d = Digest::new();
    let mut rng = Rng(0x57E9);
    let mut modes = vec![AccMode::Ieee, AccMode::Fused];
    for (fa, fb) in PAIRS {
        for preset in RECORDED_PRESETS {
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
                d.op();
            }
        }
    }
    d
}

/// The recorded fields and checkpoints of `unit`.
fn record_path(unit: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/trace_digests")
        .join(format!("{unit}.txt"))
}

/// Writes `d`'s field digests and checkpoints: `field NAME HEX` lines, then `block HEX` lines.
fn record(unit: &str, d: &Digest) {
    let mut text =
        format!("# {unit}: field digests and the combined digest every {BLOCK} operations\n");
    for (name, h) in &d.fields {
        text.push_str(&format!("field {name} {h:016x}\n"));
    }
    for h in &d.blocks {
        text.push_str(&format!("block {h:016x}\n"));
    }
    let path = record_path(unit);
    std::fs::create_dir_all(path.parent().expect("parent")).expect("digest dir");
    std::fs::write(&path, text).expect("write digests");
}

/// Compares `d` with the recorded constant; on a difference, names the fields that differ and
/// the first block of operations where the combined digest departs from the record.
fn check(unit: &str, d: &Digest, want: u64) {
    if std::env::var_os("TCRTL_RECORD_TRACE_DIGESTS").is_some() {
        record(unit, d);
    }
    if d.all == want {
        return;
    }
    let text = std::fs::read_to_string(record_path(unit)).unwrap_or_default();
    let mut fields = Vec::new();
    let mut blocks = Vec::new();
    for line in text.lines() {
        let parts: Vec<&str> = line.split_whitespace().collect();
        let hex = |t: &str| u64::from_str_radix(t, 16).ok();
        match parts.as_slice() {
            ["field", name, h] => fields.push((name.to_string(), hex(h))),
            ["block", h] => blocks.push(hex(h)),
            _ => {}
        }
    }
    let differing: Vec<String> = d
        .fields
        .iter()
        .filter(|(name, h)| {
            fields
                .iter()
                .find(|(n, _)| n == name)
                .is_none_or(|(_, w)| *w != Some(*h))
        })
        .map(|(name, _)| name.to_string())
        .collect();
    let first_block = d
        .blocks
        .iter()
        .zip(&blocks)
        .position(|(got, w)| Some(*got) != *w);
    let place = match first_block {
        Some(i) => format!(
            "operations {}..{}",
            i as u64 * BLOCK,
            (i as u64 + 1) * BLOCK
        ),
        None => format!("after operation {}", blocks.len() as u64 * BLOCK),
    };
    panic!(
        "{unit} digest {:#018x}, recorded {want:#018x}: fields that differ (first one first): [{}]; \
         first departure in {place}",
        d.all,
        differing.join(", ")
    );
}

#[test]
fn add_trace_digest() {
    check("add", &add_digest(), 0x180340cc6ab0cc6e);
}

#[test]
fn fma_trace_digest() {
    check("fma", &fma_digest(), 0x4b68ca797cbea49c);
}

#[test]
fn convert_trace_digest() {
    check("convert", &convert_digest(), 0x340c74fb9d56bb4d);
}

#[test]
fn step_trace_digest() {
    check("step", &step_digest(), 0x190313ecde4c8718);
}
