//! `tcrtl gemm --pattern`: the teaching operands of a generated problem, built by the library
//! ([`tensorcore_rtl::job::pattern`], which says what each holds).

use clap::ValueEnum;
use tensorcore_rtl::job::pattern::Pattern as Generated;

/// Operand pattern of a generated problem.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Pattern {
    /// Seeded random operands (with --seed).
    Random,
    /// A and B all ones, C zero.
    Ones,
    /// A and B count 1..8 in row-major order, C zero.
    Iota,
    /// A the identity, B counting 1..8, C zero.
    Identity,
}

impl Pattern {
    /// The name as given on the command line.
    pub fn name(self) -> &'static str {
        Generated::from(self).name()
    }
}

impl From<Pattern> for Generated {
    fn from(p: Pattern) -> Generated {
        match p {
            Pattern::Random => Generated::Random,
            Pattern::Ones => Generated::Ones,
            Pattern::Iota => Generated::Iota,
            Pattern::Identity => Generated::Identity,
        }
    }
}
