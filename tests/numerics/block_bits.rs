//! The NVIDIA block FMA's bits-only pass (`block_bits_acc`, used by a PE whose stage-2 wires
//! nobody observes) against the staged block FMA (`block_acc`), for every preset and operand
//! format it supports, into FP32 and FP16.

use crate::common::Rng;
use tensorcore_rtl::numerics::dot::nvidia::{block_acc, block_bits_acc};
use tensorcore_rtl::numerics::dot::{MultiplyStage, Preset};
use tensorcore_rtl::numerics::format::{Format, BF16, E4M3, E5M2, FP16, FP32};
use tensorcore_rtl::numerics::multiply::multiply;

/// Random blocks of every length up to the block size, with operands drawn from all
/// encodings (zeros, subnormals, infinities and NaNs included, where the format has them)
/// and accumulators from all encodings: both passes give the same bits and flags.
#[test]
fn bits_pass_matches_the_staged_block() {
    let mut rng = Rng(0xB10C);
    let mut compared = 0u32;
    for preset in Preset::ALL {
        for fmt in [FP16, BF16, E4M3, E5M2] {
            for acc in [FP32, FP16] {
                let Ok(params) = preset.params_for(fmt, fmt, acc) else {
                    continue;
                };
                for _ in 0..300 {
                    let len = 1 + (rng.next_u64() as usize) % params.block.clamp(1, 32);
                    let products: Vec<_> = (0..len)
                        .map(|_| {
                            let a = rng.next_u64() & fmt.mask();
                            let b = rng.next_u64() & fmt.mask();
                            multiply(fmt, a, fmt, b)
                        })
                        .collect();
                    let c = (rng.next_u64() & acc.mask()) as u32;
                    let staged = block_acc(
                        &params,
                        &MultiplyStage::<32>::from_products(&products),
                        c,
                        acc,
                    );
                    let bits = block_bits_acc(&params, &products, c, acc);
                    assert_eq!(
                        bits,
                        (staged.bits, staged.flags),
                        "{preset:?} {} into {}: c={c:#x} {products:?}",
                        fmt.name,
                        acc.name
                    );
                    compared += 1;
                }
            }
        }
    }
    assert!(compared > 1000, "only {compared} blocks compared");
}

/// The same on blocks of finite products of similar magnitude (where the truncation and the
/// final rounding decide the result, not a special value).
#[test]
fn bits_pass_matches_on_finite_blocks() {
    let mut rng = Rng(0xF1A7);
    for preset in Preset::ALL {
        for fmt in [E4M3, FP16] {
            let Ok(params) = preset.params_for(fmt, fmt, FP32) else {
                continue;
            };
            let finite = |rng: &mut Rng, f: Format| loop {
                let e = (f.bias as u64 - 3 + rng.next_u64() % 6) << f.frac_bits;
                let v = e
                    | (rng.next_u64() & f.frac_mask())
                    | ((rng.next_u64() & 1) << (f.width() - 1));
                if !f.is_nan(v) {
                    return v;
                }
            };
            for _ in 0..500 {
                let len = params.block.clamp(1, 32);
                let products: Vec<_> = (0..len)
                    .map(|_| multiply(fmt, finite(&mut rng, fmt), fmt, finite(&mut rng, fmt)))
                    .collect();
                let c =
                    f32::from_bits(0x3F80_0000 | (rng.next_u64() as u32 & 0x807F_FFFF)).to_bits();
                let staged = block_acc(
                    &params,
                    &MultiplyStage::<32>::from_products(&products),
                    c,
                    FP32,
                );
                assert_eq!(
                    block_bits_acc(&params, &products, c, FP32),
                    (staged.bits, staged.flags),
                    "{preset:?} {}",
                    fmt.name
                );
            }
        }
    }
}

/// The flags' 4-bit vector, which the bits pass ORs the products' flags through, round-trips:
/// bit 3 invalid, bit 2 overflow, bit 1 underflow, bit 0 inexact.
#[test]
fn flag_bits_round_trip() {
    use tensorcore_rtl::numerics::Flags;
    for bits in 0u8..16 {
        let f = Flags::from_bits(bits);
        assert_eq!(f.to_bits(), bits);
        assert_eq!(
            (f.invalid, f.overflow, f.underflow, f.inexact),
            (bits & 8 != 0, bits & 4 != 0, bits & 2 != 0, bits & 1 != 0)
        );
    }
    assert_eq!(Flags::from_bits(0xF0), Flags::NONE);
}
