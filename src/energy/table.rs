//! The per-event energy table: one [`Tech`] per technology, every coefficient with its source
//! (`docs/energy.md` restates each one and how a figure not in a source is derived).
//!
//! The default, [`HOROWITZ_45NM`], is M. Horowitz's table of 45 nm energies per operation
//! ("Computing's energy problem (and what we can do about it)", ISSCC 2014, keynote 1.1):
//! integer add 8-bit 0.03 pJ, 32-bit 0.1 pJ; integer multiply 8-bit 0.2 pJ, 32-bit 3.1 pJ;
//! FP16 add 0.4 pJ, FP32 add 0.9 pJ; FP16 multiply 1.1 pJ, FP32 multiply 3.7 pJ; a 64-bit read
//! from an 8 KB SRAM 10 pJ, 32 KB 20 pJ, 1 MB 100 pJ; DRAM 1.3 to 2.6 nJ per 64 bits.

/// One technology's energies per event, in picojoules.
#[derive(Debug, Clone, PartialEq)]
pub struct Tech {
    /// The name `--tech` takes (`45nm`, `7nm`).
    pub name: &'static str,
    /// Where the figures come from, in a line.
    pub source: &'static str,
    /// Floating-point multiply of FP16 and of FP32 operands (random data).
    pub fp16_mul: f64,
    /// See [`Tech::fp16_mul`].
    pub fp32_mul: f64,
    /// Integer multiply of 8-bit and of 32-bit operands.
    pub int8_mul: f64,
    /// See [`Tech::int8_mul`].
    pub int32_mul: f64,
    /// Floating-point add of FP16 and of FP32 operands.
    pub fp16_add: f64,
    /// See [`Tech::fp16_add`].
    pub fp32_add: f64,
    /// Integer add of 8-bit and of 32-bit operands.
    pub int8_add: f64,
    /// See [`Tech::int8_add`].
    pub int32_add: f64,
    /// One register bit changing value.
    pub reg_bit_toggle: f64,
    /// A 64-bit SRAM read, by capacity: `(bytes, pJ)`, ascending.
    pub sram_read64: [(f64, f64); 3],
    /// One byte moved to or from global memory (DRAM).
    pub dram_byte: f64,
    /// One TMA request (its descriptor read and address generation).
    pub tma_request: f64,
}

/// Horowitz's 45 nm table (ISSCC 2014), with the register and TMA figures derived from it
/// (see the fields).
pub const HOROWITZ_45NM: Tech = Tech {
    name: "45nm",
    source: "M. Horowitz, ISSCC 2014 (45 nm, 0.9 V)",
    fp16_mul: 1.1,
    fp32_mul: 3.7,
    int8_mul: 0.2,
    int32_mul: 3.1,
    fp16_add: 0.4,
    fp32_add: 0.9,
    int8_add: 0.03,
    int32_add: 0.1,
    // Derived: one bit of Horowitz's 8-bit adder, 0.03 pJ / 8. A static master-slave flip-flop
    // has about as many transistors (24) as a mirror full adder (28), so its data toggle
    // costs about one adder bit's energy.
    reg_bit_toggle: 0.03 / 8.0,
    sram_read64: [
        (8.0 * 1024.0, 10.0),
        (32.0 * 1024.0, 20.0),
        (1024.0 * 1024.0, 100.0),
    ],
    // The middle of Horowitz's 1.3 to 2.6 nJ per 64 bits: 1.95 nJ / 8 bytes.
    dram_byte: 1950.0 / 8.0,
    // Assumed: one 64-bit read of an 8 KB SRAM (the descriptor), the generator's adders
    // being negligible beside it.
    tma_request: 10.0,
};

/// Logic scaled from [`HOROWITZ_45NM`] to a 7 nm-class node by the switching energy
/// `C * V^2` with the capacitance proportional to the feature size (R. Dennard et al., IEEE
/// JSSC 9(5), 1974): `(7 / 45) * (0.75 V / 0.9 V)^2 = 0.108`, 0.75 V being an assumed nominal
/// supply. Global memory is HBM2 at 3.97 pJ per bit (M. O'Connor et al., "Fine-grained DRAM",
/// MICRO 2017): off-chip memory energy is set by its arrays and I/O, not by the logic node.
pub const SCALED_7NM: Tech = {
    let s = LOGIC_7NM;
    let h = HOROWITZ_45NM;
    Tech {
        name: "7nm",
        source: "Horowitz 45 nm scaled by C*V^2 (Dennard 1974) to 7 nm, 0.75 V; HBM2 3.97 pJ/bit (O'Connor, MICRO 2017)",
        fp16_mul: h.fp16_mul * s,
        fp32_mul: h.fp32_mul * s,
        int8_mul: h.int8_mul * s,
        int32_mul: h.int32_mul * s,
        fp16_add: h.fp16_add * s,
        fp32_add: h.fp32_add * s,
        int8_add: h.int8_add * s,
        int32_add: h.int32_add * s,
        reg_bit_toggle: h.reg_bit_toggle * s,
        sram_read64: [
            (h.sram_read64[0].0, h.sram_read64[0].1 * s),
            (h.sram_read64[1].0, h.sram_read64[1].1 * s),
            (h.sram_read64[2].0, h.sram_read64[2].1 * s),
        ],
        dram_byte: 3.97 * 8.0,
        tma_request: h.tma_request * s,
    }
};

/// The logic scaling factor of [`SCALED_7NM`].
const LOGIC_7NM: f64 = (7.0 / 45.0) * (0.75 / 0.9) * (0.75 / 0.9);

/// Every technology `--tech` offers, the default first.
pub const TECHS: [Tech; 2] = [HOROWITZ_45NM, SCALED_7NM];

impl Tech {
    /// The technology named `name` (`45nm`, `7nm`), or an error naming the choices.
    pub fn by_name(name: &str) -> Result<Tech, String> {
        TECHS
            .iter()
            .find(|t| t.name.eq_ignore_ascii_case(name))
            .cloned()
            .ok_or_else(|| {
                let names: Vec<&str> = TECHS.iter().map(|t| t.name).collect();
                format!(
                    "unknown --tech {name:?}: choose one of {}",
                    names.join(", ")
                )
            })
    }

    /// A floating-point multiply of significands of `p_a` and `p_b` bits (hidden bit
    /// included) and exponents of at most `e` bits, random data. The multiplier is an
    /// exponent adder and a significand array: the adder is charged as an integer adder of
    /// `e` bits (`int8_add * e / 8`); the array's size grows with `p_a * p_b`, and its energy
    /// is interpolated log-log in that product through what the FP16 (11 x 11, 5-bit
    /// exponent) and FP32 (24 x 24, 8-bit) figures leave after their exponent adders.
    pub fn fp_mul(&self, p_a: u32, p_b: u32, e: u32) -> f64 {
        let exp_add = |bits: u32| self.int8_add * f64::from(bits) / 8.0;
        let array16 = self.fp16_mul - exp_add(5);
        let array32 = self.fp32_mul - exp_add(8);
        power_law(array16, 121.0, array32, 576.0, f64::from(p_a * p_b)) + exp_add(e)
    }

    /// An integer multiply of `a` by `b` bits, random data: log-log in `a * b` through the
    /// 8-bit (64) and 32-bit (1024) figures.
    pub fn int_mul(&self, a: u32, b: u32) -> f64 {
        power_law(
            self.int8_mul,
            64.0,
            self.int32_mul,
            1024.0,
            f64::from(a * b),
        )
    }

    /// A 64-bit read of an SRAM of `bytes` bytes: log-log between the table's capacities
    /// (the end segments extended beyond them). Writes are taken to cost the same.
    pub fn sram_read64_at(&self, bytes: f64) -> f64 {
        let t = &self.sram_read64;
        let (lo, hi) = if bytes <= t[1].0 {
            (t[0], t[1])
        } else {
            (t[1], t[2])
        };
        power_law(lo.1, lo.0, hi.1, hi.0, bytes.max(1.0))
    }
}

/// The power law through `(x0, y0)` and `(x1, y1)`, evaluated at `x`.
fn power_law(y0: f64, x0: f64, y1: f64, x1: f64, x: f64) -> f64 {
    let k = (y1 / y0).ln() / (x1 / x0).ln();
    y0 * (x / x0).powf(k)
}
