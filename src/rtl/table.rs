//! The signal table: every register, wire and input of a design with its hierarchical name and
//! width, built once at elaboration by walking [`Module::visit`].

use std::collections::HashSet;

use super::error::{Result, RtlError};
use super::module::{Cold, ColdPass, Module, SignalAccess};
use super::signal::{Display, Labels};
use super::value::{push_bits, Value};

/// What kind of signal a table entry is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SignalKind {
    /// A register's `q` output.
    Reg,
    /// A named combinational wire.
    Wire,
    /// A testbench-driven input.
    Input,
}

/// One signal of the design.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignalInfo {
    /// Scope components from the top module down (the top's name first).
    pub scope: Vec<String>,
    /// The local name.
    pub name: String,
    /// The declared width in bits.
    pub width: u32,
    /// Register, wire or input.
    pub kind: SignalKind,
    /// Value labels ([`crate::rtl::Reg::with_labels`]; empty if none).
    pub labels: Labels,
    /// How waveform viewers show it ([`crate::rtl::Reg::with_display`]).
    pub display: Display,
    /// In the overview save file ([`crate::rtl::Reg::in_overview`]).
    pub overview: bool,
}

impl SignalInfo {
    /// The dotted hierarchical name, e.g. `tensor_core.mesh.pe_1_2.acc`.
    pub fn path(&self) -> String {
        let mut p = self.scope.join(".");
        p.push('.');
        p.push_str(&self.name);
        p
    }
}

/// A sampled value of one signal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignalValue {
    /// The declared width in bits.
    pub width: u32,
    /// Little-endian 64-bit words.
    pub words: Vec<u64>,
}

impl SignalValue {
    /// The value as `'0'`/`'1'` characters, most significant bit first, exactly `width` long.
    pub fn to_bit_string(&self) -> String {
        let mut out = Vec::with_capacity(self.width as usize);
        push_bits(&self.words, self.width, &mut out);
        out.into_iter().map(char::from).collect()
    }

    /// The low 128 bits.
    pub fn to_u128(&self) -> u128 {
        u128::from_words(&self.words)
    }
}

/// Builds the table (elaboration).
pub(in crate::rtl) struct Collect {
    pub scope: Vec<String>,
    pub signals: Vec<SignalInfo>,
    seen: HashSet<String>,
    pub duplicate: Option<String>,
    /// Storage words (`T::WORDS`) per signal, parallel to `signals`.
    pub words: Vec<usize>,
}

impl Collect {
    pub fn run<M: Module>(top: &mut M) -> Result<(Vec<SignalInfo>, Vec<usize>)> {
        let mut c = Collect {
            scope: vec![top.name().to_string()],
            signals: Vec::new(),
            seen: HashSet::new(),
            duplicate: None,
            words: Vec::new(),
        };
        // `clk` and `rst` live in the top scope of every waveform.
        c.seen.insert(format!("{}.clk", top.name()));
        c.seen.insert(format!("{}.rst", top.name()));
        Cold::run(top, &mut c);
        match c.duplicate {
            Some(d) => Err(RtlError::DuplicateName(d)),
            None => Ok((c.signals, c.words)),
        }
    }

    /// Notes `path`, and the first name seen twice.
    fn claim(&mut self, path: String) {
        if let Some(twice) = self.seen.replace(path) {
            self.duplicate.get_or_insert(twice);
        }
    }
}

impl ColdPass for Collect {
    fn signal(&mut self, kind: SignalKind, s: &mut dyn SignalAccess) {
        self.words.push(s.words());
        let meta = s.meta();
        let info = SignalInfo {
            scope: self.scope.clone(),
            name: meta.name.to_string(),
            width: s.width(),
            kind,
            labels: meta.labels,
            display: meta.display,
            overview: meta.overview,
        };
        self.claim(info.path());
        self.signals.push(info);
    }
    fn enter(&mut self, name: &str) {
        let mut path = self.scope.join(".");
        path.push('.');
        path.push_str(name);
        self.claim(path);
        self.scope.push(name.to_string());
    }
    fn leave(&mut self) {
        self.scope.pop();
    }
}

/// Reads every signal's current value (registers: `q`).
pub(in crate::rtl) struct Grab {
    pub values: Vec<SignalValue>,
}

impl ColdPass for Grab {
    fn signal(&mut self, _kind: SignalKind, s: &mut dyn SignalAccess) {
        let mut words = vec![0u64; s.words()];
        s.encode_now(&mut words);
        self.values.push(SignalValue {
            width: s.width(),
            words,
        });
    }
}

/// Reads one signal's current value (registers: `q`): the signal at `target` in visit order.
pub(in crate::rtl) struct GrabOne {
    target: usize,
    index: usize,
    pub value: Option<SignalValue>,
}

impl GrabOne {
    pub fn new(target: usize) -> Self {
        Self {
            target,
            index: 0,
            value: None,
        }
    }
}

impl ColdPass for GrabOne {
    fn signal(&mut self, _kind: SignalKind, s: &mut dyn SignalAccess) {
        if self.index == self.target {
            let mut words = vec![0u64; s.words()];
            s.encode_now(&mut words);
            self.value = Some(SignalValue {
                width: s.width(),
                words,
            });
        }
        self.index += 1;
    }
}

/// A hash of every register's pending `d` and every wire (checks that `comb` is repeatable).
pub(in crate::rtl) struct CombHash {
    pub hash: u64,
    words: Vec<u64>,
}

impl CombHash {
    pub fn new() -> Self {
        Self {
            hash: 0xcbf2_9ce4_8422_2325,
            words: Vec::new(),
        }
    }
}

impl ColdPass for CombHash {
    fn signal(&mut self, kind: SignalKind, s: &mut dyn SignalAccess) {
        if kind == SignalKind::Input {
            return;
        }
        self.words.clear();
        self.words.resize(s.words(), 0);
        s.encode_next(&mut self.words);
        for w in &self.words {
            self.hash = (self.hash ^ w)
                .wrapping_mul(0x0100_0000_01b3)
                .rotate_left(17);
        }
    }
}
