//! `PE`: one processing element of the clocked core, worked cycle by cycle from Python (the
//! library's `hw::pe::harness::PeHarness` under the cycle engine), so a testbench can drive
//! one cycle's inputs, step the clock and read the registered outputs and stage fields.

use crate::errors::{value_error, IntoPy};
use pyo3::prelude::*;
use tensorcore_rtl::hw::pe::harness::PeHarness;
use tensorcore_rtl::hw::pe::{set_lane, ShiftIn, CTL_FIRE, CTL_LAST, CTL_SET, CTL_VALID};
use tensorcore_rtl::hw::CoreConfig;
use tensorcore_rtl::io::arith::ArithNames;
use tensorcore_rtl::io::values::acc_format;
use tensorcore_rtl::numerics::format::Format;
use tensorcore_rtl::rtl::{Simulator, TraceConfig, Wide};

/// A PE under the simulator, whatever its lane count.
trait PeSim {
    fn drive(&mut self, a: &[u64], ctl: u16, b: &[u64], b_vld: bool);
    fn shift(&mut self, s: ShiftIn);
    fn step(&mut self) -> Result<(), String>;
    fn reset(&mut self, cycles: u64) -> Result<(), String>;
    fn cycle(&self) -> u64;
    fn a_out(&self) -> (Vec<u64>, u16);
    fn b_out(&self) -> (Vec<u64>, bool);
    fn acc(&self, set: bool) -> u32;
    fn done(&self) -> bool;
    fn flags(&self) -> u8;
    fn hazard(&self) -> bool;
    fn peek(&mut self, name: &str) -> Result<u128, String>;
    fn signals(&mut self) -> Result<Vec<String>, String>;
    fn finish(self: Box<Self>) -> Result<(), String>;
}

/// The lane-count-generic implementation.
struct Harness<const W: usize> {
    sim: Simulator<PeHarness<W>>,
    fmt_a: Format,
    fmt_b: Format,
}

fn bus<const W: usize>(lanes: &[u64], fmt: Format) -> Wide<W> {
    let mut w = Wide::<W>::ZERO;
    for (k, &v) in lanes.iter().enumerate() {
        set_lane(&mut w, k, fmt.width(), v);
    }
    w
}

fn lanes<const W: usize>(w: &Wide<W>, fmt: Format) -> Vec<u64> {
    (0..W)
        .map(|k| w.field(k * fmt.width() as usize, fmt.width() as usize))
        .collect()
}

impl<const W: usize> PeSim for Harness<W> {
    fn drive(&mut self, a: &[u64], ctl: u16, b: &[u64], b_vld: bool) {
        let (fa, fb) = (self.fmt_a, self.fmt_b);
        self.sim
            .top_mut()
            .drive(bus::<W>(a, fa), ctl, bus::<W>(b, fb), b_vld);
    }
    fn shift(&mut self, s: ShiftIn) {
        self.sim.top_mut().set_shift(s);
    }
    fn step(&mut self) -> Result<(), String> {
        self.sim.step().map_err(|e| e.to_string())
    }
    fn reset(&mut self, cycles: u64) -> Result<(), String> {
        self.sim.reset(cycles).map_err(|e| e.to_string())
    }
    fn cycle(&self) -> u64 {
        self.sim.cycle()
    }
    fn a_out(&self) -> (Vec<u64>, u16) {
        let (a, ctl) = self.sim.top().pe().a_out();
        (lanes(&a, self.fmt_a), ctl.pack())
    }
    fn b_out(&self) -> (Vec<u64>, bool) {
        let (b, vld) = self.sim.top().pe().b_out();
        (lanes(&b, self.fmt_b), vld)
    }
    fn acc(&self, set: bool) -> u32 {
        self.sim.top().pe().acc_q(set)
    }
    fn done(&self) -> bool {
        self.sim.top().pe().done()
    }
    fn flags(&self) -> u8 {
        self.sim.top().pe().flags().to_bits()
    }
    fn hazard(&self) -> bool {
        self.sim.top().pe().hazard()
    }
    fn peek(&mut self, name: &str) -> Result<u128, String> {
        let path = if name.contains('.') {
            name.to_string()
        } else {
            format!("pe_harness.pe.{name}")
        };
        self.sim
            .peek(&path)
            .map(|v| v.to_u128())
            .map_err(|e| e.to_string())
    }
    fn signals(&mut self) -> Result<Vec<String>, String> {
        Ok(self
            .sim
            .signals()
            .map_err(|e| e.to_string())?
            .iter()
            .map(|s| s.path())
            .collect())
    }
    fn finish(self: Box<Self>) -> Result<(), String> {
        self.sim.finish().map(drop).map_err(|e| e.to_string())
    }
}

fn build<const W: usize>(cfg: CoreConfig, vcd: Option<&str>) -> Result<Box<dyn PeSim>, String> {
    let top = PeHarness::<W>::new(cfg).map_err(|e| e.to_string())?;
    let sim = match vcd {
        Some(p) => Simulator::with_trace(top, &TraceConfig::vcd(p)),
        None => Simulator::new(top),
    }
    .map_err(|e| e.to_string())?;
    Ok(Box::new(Harness::<W> {
        sim,
        fmt_a: cfg.fmt_a,
        fmt_b: cfg.fmt_b,
    }))
}

/// One floating-point processing element of the tensor core, stepped cycle by cycle.
///
/// ``PE(fmt="fp16", acc="ieee", width=1, *, fmt_b=None, preset=None, out_fmt="fp32",
/// vcd=None, gpu=None, instr=None)`` builds a PE with ``width`` lanes (1, 2, 4, 8, 16 or 32)
/// for the operand formats and accumulation mode of ``tcrtl.dot`` (``ieee``, ``fused`` or
/// ``nvidia`` with a ``preset``, or with a ``gpu`` and its ``instr`` instead).
/// ``vcd`` writes a waveform of the PE (completed by ``close()``).
///
/// Each ``step(...)`` drives one cycle's inputs and advances the clock one edge. Timing: the
/// operands of a step appear on ``a_out``/``b_out`` and their products in ``s1_prod`` after that
/// step; the accumulator and ``done`` change one step later (pipeline latency 1). A shift
/// writes the idle accumulator at the end of its own step.
#[pyclass(unsendable, module = "tcrtl._tcrtl", name = "PE")]
pub struct Pe {
    sim: Option<Box<dyn PeSim>>,
    width: usize,
}

impl Pe {
    fn sim(&mut self) -> PyResult<&mut Box<dyn PeSim>> {
        self.sim
            .as_mut()
            .ok_or_else(|| value_error("the PE was closed"))
    }
    fn sim_ref(&self) -> PyResult<&dyn PeSim> {
        self.sim
            .as_deref()
            .ok_or_else(|| value_error("the PE was closed"))
    }
}

#[pymethods]
impl Pe {
    #[new]
    #[pyo3(signature = (fmt="fp16", acc="ieee", width=1, *, fmt_b=None, preset=None, out_fmt="fp32", vcd=None, gpu=None, instr=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        fmt: &str,
        acc: &str,
        width: usize,
        fmt_b: Option<&str>,
        preset: Option<&str>,
        out_fmt: &str,
        vcd: Option<&str>,
        gpu: Option<&str>,
        instr: Option<&str>,
    ) -> PyResult<Self> {
        let accf = acc_format(out_fmt).py()?;
        let names = ArithNames {
            format: fmt,
            format_b: fmt_b,
            acc: Some(acc),
            preset,
            gpu,
            instr,
        };
        let arith = names.resolve_datapath(accf).py()?;
        let cfg = CoreConfig::new(arith.fmt_a, arith.fmt_b, arith.mode, width).with_acc(accf);
        let sim = match width {
            1 => build::<1>(cfg, vcd),
            2 => build::<2>(cfg, vcd),
            4 => build::<4>(cfg, vcd),
            8 => build::<8>(cfg, vcd),
            16 => build::<16>(cfg, vcd),
            32 => build::<32>(cfg, vcd),
            w => Err(format!("--width {w}: a PE has 1, 2, 4, 8, 16 or 32 lanes")),
        }
        .py()?;
        Ok(Pe {
            sim: Some(sim),
            width,
        })
    }

    /// Lanes of the PE.
    #[getter]
    fn width(&self) -> usize {
        self.width
    }

    /// Holds reset for ``cycles`` clock edges (every register back to zero).
    #[pyo3(signature = (cycles=1))]
    fn reset(&mut self, cycles: u64) -> PyResult<()> {
        self.sim()?.reset(cycles).py()
    }

    /// Drives one cycle's inputs, then steps the clock one edge.
    ///
    /// ``a``, ``b``: this cycle's operand lanes as bit patterns (a sequence of at most
    /// ``width`` ints; missing lanes are zero), or ``None`` for no operands. ``lanes``: valid
    /// lanes of this step (default ``len(a)``). ``valid``: A carries data (default: ``a`` is
    /// not ``None``); ``b_valid``: B carries data (default: ``b`` is not ``None``). ``last``:
    /// the last step of a tile (``done`` rises one step later); ``fire``: the last step of an
    /// NVIDIA block when ``width`` is smaller than the block; ``set``: the accumulator set
    /// (0 or 1) the step adds into. ``shift``: ``(set, value)`` writes ``value`` (an
    /// accumulator bit pattern) into accumulator ``set`` through the column shift path this
    /// cycle (C preload), or ``None``.
    #[pyo3(signature = (a=None, b=None, *, lanes=None, valid=None, b_valid=None, last=false, fire=false, set=0, shift=None))]
    #[allow(clippy::too_many_arguments)]
    fn step(
        &mut self,
        a: Option<Vec<u64>>,
        b: Option<Vec<u64>>,
        lanes: Option<u8>,
        valid: Option<bool>,
        b_valid: Option<bool>,
        last: bool,
        fire: bool,
        set: u8,
        shift: Option<(u8, u32)>,
    ) -> PyResult<()> {
        let w = self.width;
        for (name, v) in [("a", &a), ("b", &b)] {
            if let Some(v) = v {
                if v.len() > w {
                    return Err(value_error(format!(
                        "{name} has {} lanes but the PE has {w}",
                        v.len()
                    )));
                }
            }
        }
        if set > 1 {
            return Err(value_error(format!(
                "set {set}: the PE has accumulator sets 0 and 1"
            )));
        }
        let n = lanes.unwrap_or(a.as_ref().map_or(0, |v| v.len()) as u8);
        if usize::from(n) > w {
            return Err(value_error(format!("lanes {n}: the PE has {w}")));
        }
        let valid = valid.unwrap_or(a.is_some());
        let b_vld = b_valid.unwrap_or(b.is_some());
        let ctl = u16::from(n)
            | if valid { CTL_VALID } else { 0 }
            | if last { CTL_LAST } else { 0 }
            | if fire { CTL_FIRE } else { 0 }
            | if set == 1 { CTL_SET } else { 0 };
        let shift = match shift {
            Some((s, value)) if s <= 1 => ShiftIn {
                en: true,
                set: s == 1,
                value,
            },
            Some((s, _)) => {
                return Err(value_error(format!(
                    "shift set {s}: the PE has accumulator sets 0 and 1"
                )))
            }
            None => ShiftIn::default(),
        };
        let sim = self.sim()?;
        sim.drive(
            a.as_deref().unwrap_or(&[]),
            ctl,
            b.as_deref().unwrap_or(&[]),
            b_vld,
        );
        sim.shift(shift);
        sim.step().py()
    }

    /// Clock edges so far.
    #[getter]
    fn cycle(&self) -> PyResult<u64> {
        Ok(self.sim_ref()?.cycle())
    }

    /// A passed on to the right (register output): ``(lanes, control word)``.
    #[getter]
    fn a_out(&self) -> PyResult<(Vec<u64>, u16)> {
        Ok(self.sim_ref()?.a_out())
    }

    /// B passed on downwards (register output): ``(lanes, valid)``.
    #[getter]
    fn b_out(&self) -> PyResult<(Vec<u64>, bool)> {
        Ok(self.sim_ref()?.b_out())
    }

    /// Accumulator ``set`` (0 or 1): its bit pattern (FP32, or FP16 in the low 16 bits).
    #[pyo3(signature = (set=0))]
    fn acc(&self, set: u8) -> PyResult<u32> {
        Ok(self.sim_ref()?.acc(set == 1))
    }

    /// High for one step after stage 2 handled the last step of a tile.
    #[getter]
    fn done(&self) -> PyResult<bool> {
        Ok(self.sim_ref()?.done())
    }

    /// The sticky IEEE flags as a 4-bit vector: invalid 8, overflow 4, underflow 2, inexact 1.
    #[getter]
    fn flags(&self) -> PyResult<u8> {
        Ok(self.sim_ref()?.flags())
    }

    /// True once the shift path and stage 2 wrote the same accumulator in one cycle.
    #[getter]
    fn hazard(&self) -> PyResult<bool> {
        Ok(self.sim_ref()?.hazard())
    }

    /// The current value of a signal of the PE by name (``s1_prod``, ``s1_ctl``, ``max_exp``,
    /// ``align_shift``, ``sticky``, ``lzc``, ``round_inc``, ``special``, ``exp_sum``,
    /// ``sig_product``, ``acc_0``, ...; see ``signals()``), or by its full dotted path.
    fn peek(&mut self, name: &str) -> PyResult<u128> {
        self.sim()?.peek(name).py()
    }

    /// Every signal's full dotted path (inputs, registers and wires), in the waveform's order.
    fn signals(&mut self) -> PyResult<Vec<String>> {
        self.sim()?.signals().py()
    }

    /// Ends the run: completes the waveform if one was asked for. The PE cannot step after.
    fn close(&mut self) -> PyResult<()> {
        match self.sim.take() {
            Some(s) => s.finish().py(),
            None => Ok(()),
        }
    }
}
