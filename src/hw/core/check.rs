//! The configuration checks of a core: what a core of `W` lanes can be built for, in every
//! dataflow ([`check_config`]), with MX block scaling ([`check_mx_config`]), and what the
//! weight-stationary dataflow asks beyond them ([`check_ws_config`]).

use crate::hw::config::{CoreConfig, Dataflow, MxSpec};
use crate::hw::HwError;
use crate::numerics::dot::{AccMode, MAX_LANES};
use crate::numerics::format::{
    Format, ACC_FORMATS, E2M1, E2M3, E3M2, E4M3, E5M2, FP32, INPUT_FORMATS,
};
use crate::numerics::int::pair_ok;

/// The element formats an MX core takes (the MX specification's FP8, FP6 and FP4 elements).
pub const MX_ELEMENT_FORMATS: [Format; 5] = [E4M3, E5M2, E2M3, E3M2, E2M1];

/// Checks that `cfg` can run the block-scaled `spec` with `W` lanes and inner dimension `k`:
/// A and B pair up ([`MxSpec::check`]), a width dividing the block size, `fused` mode (the
/// MX semantics the PE implements), FP32 accumulation, lane formats matching the block
/// formats' elements, `k` a multiple of the block size.
pub fn check_mx_config<const W: usize>(
    cfg: &CoreConfig,
    spec: &MxSpec,
    k: usize,
) -> Result<(), HwError> {
    spec.check()?;
    let bs = spec.block();
    if cfg.width != W || !W.is_power_of_two() || W > MAX_LANES || W > bs {
        return Err(HwError::Unsupported(format!(
            "width {} in a {W}-lane core with {} (the width must divide its blocks of {bs})",
            cfg.width, spec.a
        )));
    }
    if cfg.mode != AccMode::Fused {
        return Err(HwError::Unsupported(format!(
            "MX in {} mode (the tensor core's MX datapath is fused)",
            cfg.mode.name()
        )));
    }
    if cfg.acc != FP32 {
        return Err(HwError::Unsupported(format!(
            "MX with {} accumulation (the MX datapath accumulates in FP32)",
            cfg.acc.name
        )));
    }
    for (f, lanes) in [(spec.a, cfg.fmt_a), (spec.b, cfg.fmt_b)] {
        let want = MxSpec::lane_format(f);
        if lanes != want || !(spec.int8() || MX_ELEMENT_FORMATS.contains(&lanes)) {
            return Err(HwError::Unsupported(format!(
                "{f} with {} lanes (its elements travel as {})",
                lanes.name, want.name
            )));
        }
    }
    if !k.is_multiple_of(bs) {
        return Err(HwError::Unsupported(format!(
            "{} with K = {k} (K must be a multiple of {bs})",
            spec.a
        )));
    }
    Ok(())
}

/// Checks that `cfg` can be built with `W` lanes.
pub fn check_config<const W: usize>(cfg: &CoreConfig) -> Result<(), HwError> {
    if cfg.width != W || !W.is_power_of_two() || W > MAX_LANES {
        return Err(HwError::Unsupported(format!(
            "width {} in a {W}-lane core",
            cfg.width
        )));
    }
    if let AccMode::Int(im) = cfg.mode {
        // Integer lanes travel in containers of their width (`IntFormat::container`).
        if cfg.fmt_a != im.a.container() || cfg.fmt_b != im.b.container() || !pair_ok(im.a, im.b) {
            return Err(HwError::Unsupported(format!(
                "{} x {} integers with {} x {} lanes",
                im.a, im.b, cfg.fmt_a.name, cfg.fmt_b.name
            )));
        }
        return Ok(());
    }
    for f in [cfg.fmt_a, cfg.fmt_b] {
        if !INPUT_FORMATS.contains(&f) {
            return Err(HwError::Unsupported(format!("{} inputs", f.name)));
        }
    }
    if !ACC_FORMATS.contains(&cfg.acc) {
        return Err(HwError::Unsupported(format!(
            "{} accumulators (fp32 or fp16)",
            cfg.acc.name
        )));
    }
    match cfg.mode {
        AccMode::Exact => Err(HwError::Unsupported(
            "exact mode is a reference (one rounding over all of K), not a datapath".into(),
        )),
        AccMode::Nvidia(p) if p.block == 0 || p.block > MAX_LANES || !p.block.is_power_of_two() => {
            Err(HwError::Unsupported(format!(
                "NVIDIA block size {} (a power of two up to 32)",
                p.block
            )))
        }
        _ => Ok(()),
    }
}

/// Checks that `cfg` can be built as a dense weight-stationary core with `W` lanes.
pub fn check_ws_config<const W: usize>(cfg: &CoreConfig) -> Result<(), HwError> {
    check_config::<W>(cfg)?;
    check_ws_rules(cfg, Dataflow::Ws)
}

/// What a stationary dataflow (`dataflow`: the one the core's PEs hold for) asks of `cfg`
/// beyond the supply's own checks.
pub(crate) fn check_ws_rules(cfg: &CoreConfig, dataflow: Dataflow) -> Result<(), HwError> {
    if cfg.dataflow() != dataflow {
        return Err(HwError::Unsupported(format!(
            "a {dataflow} core built for another dataflow ({})",
            cfg.dataflow()
        )));
    }
    if cfg.gathers() {
        return Err(HwError::Unsupported(format!(
            "nvidia blocks of {} at width {} in {dataflow} (a block would span several PEs down a \
             column, and the block FMA needs all its products at once: use a width of at \
             least {})",
            cfg.block(),
            cfg.width,
            cfg.block()
        )));
    }
    Ok(())
}
