//! A test harness around one bare processing element: the top `pe_harness` drives a single
//! [`Pe`] (instance `pe`) from top-level [`Input`]s, so a testbench can work the PE cycle by
//! cycle as a Verilog testbench works a DUT: set the inputs, step the clock, read the
//! registered outputs.
//!
//! The harness holds a PE with any datapath without side values ([`FpPath`] by default,
//! [`IntPath`] through [`PeHarness::with_path`]).
//!
//! Inputs (scope `pe_harness`): `a_in`, `a_ctl` (the control word: [`CTL_LANES`],
//! [`CTL_VALID`], [`CTL_LAST`], [`CTL_SET`], [`CTL_FIRE`]), `b_in`, `b_vld`, and the column
//! shift path `shift_en`, `shift_set`, `shift_value` ([`ShiftIn`]). They hold their value
//! until the testbench changes them, like `reg`s in a Verilog testbench. The PE's own signals
//! are `pe_harness.pe.*` (`a_out`, `s1_prod`, `acc_0`, `acc_1`, `done`, ...).
//!
//! Timing (see [`super`]): inputs driven before the step of cycle `t` appear on
//! [`Pe::a_out`]/[`Pe::b_out`] after that step; the product is in `s1_prod` after that step;
//! the accumulator and [`Pe::done`] change [`crate::hw::PIPELINE_LATENCY`] steps later. A
//! shift (`shift_en`) writes the accumulator at the end of its own cycle.
//!
//! ```
//! use tensorcore_rtl::hw::pe::{ShiftIn, CTL_LAST, CTL_VALID};
//! use tensorcore_rtl::hw::pe::harness::PeHarness;
//! use tensorcore_rtl::hw::{CoreConfig, PIPELINE_LATENCY};
//! use tensorcore_rtl::numerics::dot::AccMode;
//! use tensorcore_rtl::numerics::format::{FP16, FP32};
//! use tensorcore_rtl::rtl::{Simulator, Wide};
//!
//! # fn main() -> Result<(), tensorcore_rtl::hw::HwError> {
//! let cfg = CoreConfig::new(FP16, FP16, AccMode::Ieee, 1);
//! let mut sim = Simulator::new(PeHarness::<1>::new(cfg)?)?;
//! sim.reset(1)?;
//! // Preload C = 1.0 into accumulator set 0 through the shift path.
//! sim.top_mut().set_shift(ShiftIn { en: true, set: false, value: 0x3F80_0000 });
//! sim.step()?;
//! sim.top_mut().set_shift(ShiftIn::default());
//! assert_eq!(sim.top().pe().acc_q(false), 0x3F80_0000);
//! // One step: 2.0 x 3.0, one lane, valid, last.
//! let (two, three) = (Wide::from_words_array([0x4000]), Wide::from_words_array([0x4200]));
//! sim.top_mut().drive(two, 1 | CTL_VALID | CTL_LAST, three, true);
//! sim.step()?;
//! assert_eq!(sim.top().pe().a_out().0, two); // passed on after one cycle
//! sim.top_mut().idle();
//! sim.run(PIPELINE_LATENCY)?;
//! assert!(sim.top().pe().done());
//! assert_eq!(sim.top().pe().acc_q(false), 0x40E0_0000); // 7.0
//! # Ok(()) }
//! ```

#[cfg(doc)]
use super::IntPath;
use super::{ACtl, Datapath, FpPath, Pe, PeIn, ShiftIn, CTL_BITS};
#[cfg(doc)]
use super::{CTL_FIRE, CTL_LANES, CTL_LAST, CTL_SET, CTL_VALID};
use crate::hw::config::CoreConfig;
use crate::hw::core::check_config;
use crate::hw::HwError;
use crate::rtl::{Design, Display, Input, Module, Visitor, Wide};

/// The harness top (`pe_harness`): one [`Pe`] with `W` lanes and datapath `D`, driven from
/// inputs.
pub struct PeHarness<const W: usize, D: Datapath<W, SideA = (), SideB = ()> = FpPath> {
    a_in: Input<Wide<W>>,
    a_ctl: Input<u16>,
    b_in: Input<Wide<W>>,
    b_vld: Input<bool>,
    shift_en: Input<bool>,
    shift_set: Input<bool>,
    shift_value: Input<u32>,
    pe: Pe<W, D>,
}

impl<const W: usize> PeHarness<W> {
    /// A harness around a floating-point PE built for `cfg` (refused, as by the tensor core,
    /// when `cfg` cannot be built with `W` lanes, or is not a floating-point mode). All inputs
    /// start at zero (nothing valid, no shift).
    pub fn new(cfg: CoreConfig) -> Result<Self, HwError> {
        if !super::fp::is_fp(&cfg.mode) {
            return Err(HwError::Unsupported(format!(
                "{} mode on the floating-point PE harness",
                cfg.mode.name()
            )));
        }
        check_config::<W>(&cfg)?;
        let path = FpPath::new(&cfg)?;
        Self::with_path(cfg, path)
    }
}

impl<const W: usize, D: Datapath<W, SideA = (), SideB = ()>> PeHarness<W, D> {
    /// A harness around a PE with datapath `path`, built for `cfg` (refused when `cfg`
    /// cannot be built with `W` lanes).
    pub fn with_path(cfg: CoreConfig, path: D) -> Result<Self, HwError> {
        check_config::<W>(&cfg)?;
        let w = W as u32;
        Ok(Self {
            a_in: Input::new("a_in", cfg.fmt_a.width() * w, Wide::ZERO)?
                .with_display(Display::Filter(cfg.fmt_a.name)),
            a_ctl: Input::new("a_ctl", CTL_BITS, 0)?.with_display(Display::Filter("ctl")),
            b_in: Input::new("b_in", cfg.fmt_b.width() * w, Wide::ZERO)?
                .with_display(Display::Filter(cfg.fmt_b.name)),
            b_vld: Input::new("b_vld", 1, false)?,
            shift_en: Input::new("shift_en", 1, false)?,
            shift_set: Input::new("shift_set", 1, false)?,
            shift_value: Input::new("shift_value", 32, 0)?.with_display(Display::Real),
            pe: Pe::new("pe".to_string(), &cfg, path)?,
        })
    }

    /// Drives the operand inputs for the next steps: A lanes with their control word, B lanes
    /// with their valid bit.
    pub fn drive(&mut self, a_in: Wide<W>, a_ctl: u16, b_in: Wide<W>, b_vld: bool) {
        self.a_in.set(a_in);
        self.a_ctl.set(a_ctl);
        self.b_in.set(b_in);
        self.b_vld.set(b_vld);
    }

    /// Drives the column shift path for the next steps (`ShiftIn::default()`: no shift).
    pub fn set_shift(&mut self, shift: ShiftIn) {
        self.shift_en.set(shift.en);
        self.shift_set.set(shift.set);
        self.shift_value.set(shift.value);
    }

    /// Drives every input to zero: no valid operands, no shift.
    pub fn idle(&mut self) {
        self.drive(Wide::ZERO, 0, Wide::ZERO, false);
        self.set_shift(ShiftIn::default());
    }

    /// The PE under test (read its outputs: `a_out`, `b_out`, `acc_q`, `done`, `flags`).
    pub fn pe(&self) -> &Pe<W, D> {
        &self.pe
    }
}

impl<const W: usize, D: Datapath<W, SideA = (), SideB = ()>> Module for PeHarness<W, D> {
    fn name(&self) -> &str {
        "pe_harness"
    }
    fn visit<V: Visitor>(&mut self, v: &mut V) {
        v.input(&mut self.a_in);
        v.input(&mut self.a_ctl);
        v.input(&mut self.b_in);
        v.input(&mut self.b_vld);
        v.input(&mut self.shift_en);
        v.input(&mut self.shift_set);
        v.input(&mut self.shift_value);
        v.child(&mut self.pe);
    }
}

impl<const W: usize, D: Datapath<W, SideA = (), SideB = ()>> Design for PeHarness<W, D> {
    fn comb(&mut self) {
        let shift = ShiftIn {
            en: self.shift_en.get(),
            set: self.shift_set.get(),
            value: self.shift_value.get(),
        };
        self.pe.comb(PeIn {
            a: self.a_in.get(),
            a_ctl: ACtl::unpack(self.a_ctl.get()),
            side_a: (),
            b: self.b_in.get(),
            b_vld: self.b_vld.get(),
            side_b: (),
            shift,
        });
    }

    fn state(&self) -> String {
        format!(
            "a_ctl={:#05x} b_vld={} shift_en={} acc_0={:#010x} acc_1={:#010x} done={}",
            self.a_ctl.get(),
            self.b_vld.get(),
            self.shift_en.get(),
            self.pe.acc_q(false),
            self.pe.acc_q(true),
            self.pe.done()
        )
    }
}
