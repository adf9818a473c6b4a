//! Fixed operand sets shared by the benchmarks and the callgrind driver
//! (`examples/numerics_ops.rs`), so every figure is measured on the same inputs.

#![allow(dead_code)]

use tensorcore_rtl::gemm::rng::SplitMix64;

/// 256 pseudo-random normal FP16 operands near 1 (both signs, exponent 14 or 15), and their
/// exact FP32 widenings (for SoftFloat, which takes FP32).
pub fn fp16_operands() -> (Vec<u64>, Vec<u32>) {
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let mut h = Vec::new();
    let mut f = Vec::new();
    for _ in 0..256 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let bits = (x & 0x83FF) | 0x3800 | ((x >> 20) & 0x0400);
        h.push(bits);
        f.push(half::f16::from_bits(bits as u16).to_f32().to_bits());
    }
    (h, f)
}

/// 4096 FP32 operand pairs: three quarters finite values with exponents spread over the whole
/// range and nearby pairs (cancellations, carries), one quarter raw random bit patterns
/// (specials and subnormals included). Fixed seed, so every run sees the same set.
pub fn fp32_pairs() -> Vec<(u32, u32)> {
    let mut rng = SplitMix64::new(0x5EED);
    (0..4096)
        .map(|i| {
            let r = rng.next_u64();
            let a = r as u32;
            let b = (r >> 32) as u32;
            if i % 4 == 3 {
                (a, b)
            } else {
                // Finite operands whose exponents differ by at most 31.
                let ea = 1 + (a >> 23) % 254;
                let eb = (ea + (b >> 23) % 32).saturating_sub(16).clamp(1, 254);
                (
                    (a & 0x807F_FFFF) | (ea << 23),
                    (b & 0x807F_FFFF) | (eb << 23),
                )
            }
        })
        .collect()
}
