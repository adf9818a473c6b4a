//! The signal table: every register, wire and input of a design with its hierarchical name and
//! width, built once at elaboration by walking [`Module::visit`].

use std::collections::HashSet;

use super::bundle::{encode_signal, Bundle};
use super::error::{Result, RtlError};
use super::module::{Module, Sealed, Visitor};
use super::reg::Reg;
use super::signal::{Display, Labels};
use super::value::{push_bits, Value};
use super::wire::{Input, Wire};

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
    /// Value labels ([`Reg::with_labels`]; empty if none).
    pub labels: Labels,
    /// How waveform viewers show it ([`Reg::with_display`]).
    pub display: Display,
    /// In the overview save file ([`Reg::in_overview`]).
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

/// A signal's name, width and viewer hints, as the table takes them.
struct View<'a> {
    name: &'a str,
    width: u32,
    labels: Labels,
    display: Display,
    overview: bool,
}

/// The [`View`] of a register, wire or input (they share their accessors).
macro_rules! view {
    ($s:expr) => {
        View {
            name: $s.name(),
            width: $s.width(),
            labels: $s.labels(),
            display: $s.display(),
            overview: $s.is_overview(),
        }
    };
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
        top.visit(&mut c);
        match c.duplicate {
            Some(d) => Err(RtlError::DuplicateName(d)),
            None => Ok((c.signals, c.words)),
        }
    }

    fn push(&mut self, view: View<'_>, kind: SignalKind, words: usize) {
        self.words.push(words);
        let info = SignalInfo {
            scope: self.scope.clone(),
            name: view.name.to_string(),
            width: view.width,
            kind,
            labels: view.labels,
            display: view.display,
            overview: view.overview,
        };
        let path = info.path();
        if !self.seen.insert(path.clone()) && self.duplicate.is_none() {
            self.duplicate = Some(path);
        }
        self.signals.push(info);
    }
}

impl Sealed for Collect {}
impl Visitor for Collect {
    fn reg<T: Bundle>(&mut self, r: &mut Reg<T>) {
        self.push(view!(r), SignalKind::Reg, T::WORDS);
    }
    fn wire<T: Bundle>(&mut self, w: &mut Wire<T>) {
        self.push(view!(w), SignalKind::Wire, T::WORDS);
    }
    fn input<T: Value>(&mut self, i: &mut Input<T>) {
        self.push(view!(i), SignalKind::Input, T::WORDS);
    }
    fn child<M: Module>(&mut self, m: &mut M) {
        let mut path = self.scope.join(".");
        path.push('.');
        path.push_str(m.name());
        if !self.seen.insert(path.clone()) && self.duplicate.is_none() {
            self.duplicate = Some(path);
        }
        self.scope.push(m.name().to_string());
        m.visit(self);
        self.scope.pop();
    }
}

/// Reads every signal's current value (registers: `q`).
pub(in crate::rtl) struct Grab {
    pub values: Vec<SignalValue>,
}

impl Grab {
    fn push<T: Bundle>(&mut self, v: T, width: u32) {
        let mut words = vec![0u64; T::WORDS];
        encode_signal(&v, width, &mut words);
        self.values.push(SignalValue { width, words });
    }
}

impl Sealed for Grab {}
impl Visitor for Grab {
    fn reg<T: Bundle>(&mut self, r: &mut Reg<T>) {
        self.push(r.q(), r.width());
    }
    fn wire<T: Bundle>(&mut self, w: &mut Wire<T>) {
        self.push(w.get(), w.width());
    }
    fn input<T: Value>(&mut self, i: &mut Input<T>) {
        self.push(i.get(), i.width());
    }
    fn child<M: Module>(&mut self, m: &mut M) {
        m.visit(self);
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
    fn mix<T: Bundle>(&mut self, v: T, width: u32) {
        self.words.clear();
        self.words.resize(T::WORDS, 0);
        encode_signal(&v, width, &mut self.words);
        for w in &self.words {
            self.hash = (self.hash ^ w)
                .wrapping_mul(0x0100_0000_01b3)
                .rotate_left(17);
        }
    }
}

impl Sealed for CombHash {}
impl Visitor for CombHash {
    fn reg<T: Bundle>(&mut self, r: &mut Reg<T>) {
        self.mix(r.d(), r.width());
    }
    fn wire<T: Bundle>(&mut self, w: &mut Wire<T>) {
        self.mix(w.get(), w.width());
    }
    fn input<T: Value>(&mut self, _i: &mut Input<T>) {}
    fn child<M: Module>(&mut self, m: &mut M) {
        m.visit(self);
    }
}
