//! The signal table: every register, wire and input of a design with its hierarchical name and
//! width, built once at elaboration by walking [`Module::visit`].

use std::sync::Arc;

use super::error::{Result, RtlError};
/// What kind of signal a table entry is (defined beside the cold passes that are shown it).
pub use super::module::SignalKind;
use super::module::{Cold, ColdPass, Module, SignalAccess};
use super::signal::{Display, Labels};
use super::value::{push_bits, Value};

/// One signal of the design.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignalInfo {
    /// Scope components from the top module down (the top's name first), shared by the
    /// signals of one module.
    pub scope: Arc<[String]>,
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
    /// The scope being visited, as names and shared by its signals.
    scope: Vec<String>,
    shared: Arc<[String]>,
    /// Each scope entered so far (the top's first) and the one being visited.
    scopes: Vec<Arc<[String]>>,
    open: Vec<u32>,
    signals: Vec<SignalInfo>,
    /// Every name claimed in a scope, for the duplicate check: (scope, name, the order it
    /// was claimed in); a signal's name by its index in `signals`.
    claims: Vec<(u32, Claimed, u32)>,
    /// Storage words (`T::WORDS`) per signal, parallel to `signals`.
    words: Vec<usize>,
}

/// A name claimed in a scope.
enum Claimed {
    /// A signal's (its index in the table).
    Signal(usize),
    /// A child module's, or one the waveform reserves (`clk`, `rst`).
    Name(String),
}

impl Collect {
    pub fn run<M: Module>(top: &mut M) -> Result<(Vec<SignalInfo>, Vec<usize>)> {
        let shared: Arc<[String]> = Arc::from([top.name().to_string()]);
        let mut c = Collect {
            scope: vec![top.name().to_string()],
            shared: shared.clone(),
            scopes: vec![shared],
            open: vec![0],
            signals: Vec::new(),
            claims: Vec::new(),
            words: Vec::new(),
        };
        // `clk` and `rst` live in the top scope of every waveform.
        for name in ["clk", "rst"] {
            c.claim(Claimed::Name(name.to_string()));
        }
        Cold::run(top, &mut c);
        match c.first_duplicate() {
            Some(d) => Err(RtlError::DuplicateName(d)),
            None => Ok((c.signals, c.words)),
        }
    }

    /// Notes `name` in the scope being visited.
    fn claim(&mut self, name: Claimed) {
        let scope = self.open.last().copied().unwrap_or(0);
        let order = self.claims.len() as u32;
        self.claims.push((scope, name, order));
    }

    /// The path of the first name seen twice in one scope (in visit order), if any.
    fn first_duplicate(&self) -> Option<String> {
        fn name<'a>(signals: &'a [SignalInfo], c: &'a Claimed) -> &'a str {
            match c {
                Claimed::Signal(i) => &signals[*i].name,
                Claimed::Name(n) => n,
            }
        }
        let mut sorted: Vec<(u32, &str, u32)> = self
            .claims
            .iter()
            .map(|(scope, c, order)| (*scope, name(&self.signals, c), *order))
            .collect();
        sorted.sort_unstable();
        // Of each name claimed again, the claim that repeats it first.
        let (scope, twice, _) = sorted
            .windows(2)
            .filter(|w| w[0].0 == w[1].0 && w[0].1 == w[1].1)
            .map(|w| w[1])
            .min_by_key(|&(_, _, order)| order)?;
        let mut path = self.scopes[scope as usize].join(".");
        path.push('.');
        path.push_str(twice);
        Some(path)
    }
}

impl ColdPass for Collect {
    fn signal(&mut self, kind: SignalKind, s: &mut dyn SignalAccess) {
        self.words.push(s.words());
        let meta = s.meta();
        let info = SignalInfo {
            scope: self.shared.clone(),
            name: meta.name.to_string(),
            width: s.width(),
            kind,
            labels: meta.labels,
            display: meta.display,
            overview: meta.overview,
        };
        self.signals.push(info);
        self.claim(Claimed::Signal(self.signals.len() - 1));
    }
    fn enter(&mut self, name: &str) {
        self.claim(Claimed::Name(name.to_string()));
        self.scope.push(name.to_string());
        self.shared = Arc::from(self.scope.as_slice());
        self.open.push(self.scopes.len() as u32);
        self.scopes.push(self.shared.clone());
    }
    fn leave(&mut self) {
        self.scope.pop();
        self.open.pop();
        let at = self.open.last().copied().unwrap_or(0) as usize;
        self.shared = self.scopes[at].clone();
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
