//! Energy from the model's own switching activity (`docs/energy.md`): a per-event table with
//! its sources ([`table`]) and the estimate of a run from its counted events
//! ([`estimate()`], in [`mod@estimate`]).
//!
//! The estimate reads a run's [`crate::rtl::ActivityReport`] (every traced signal's toggles,
//! counted by the cycle engine) and, with the memory path, its byte and request counts; it
//! never looks at the operands' values itself.

pub mod estimate;
pub mod power;
pub mod table;

pub use estimate::{
    charged_globs, estimate, AccKind, BlockEnergy, EnergyInputs, EnergyReport, MemoryEvents,
    MulKind,
};
pub use power::PowerWeights;
pub use table::{Tech, HOROWITZ_45NM, SCALED_7NM, TECHS};
