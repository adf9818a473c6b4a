//! What every dataflow's core shares, in one place: the bundles its top hands out
//! ([`bundles::DRow`], [`bundles::DTag`]), the configuration checks ([`check`]), the output
//! register every top ends in (`output`), and the interface through which one run loop
//! drives any top ([`top::CoreTop`]).
//!
//! The blocks of a dataflow (its PE shell, array, controller and schedule) import from here;
//! nothing here imports a dataflow's blocks, so the tops and their shared parts hold no
//! circle.

pub mod bundles;
pub mod check;
pub(crate) mod output;
pub mod top;

pub use bundles::{DRow, DTag};
pub use check::{check_config, check_mx_config, check_ws_config, MX_ELEMENT_FORMATS};
pub use top::{CoreTop, Edge, RunMonitors};
