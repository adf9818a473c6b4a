//! [`MBarrier`] (scope `mbar_<i>`): the PTX mbarrier state machine (phase, pending and expected
//! arrivals, transaction count) with `try_wait.parity` and a latched misuse error.

use crate::rtl::{Module, RareBank, Result, Visitor, Wire};

/// The largest arrival count and transaction-count magnitude: 2^20 - 1.
pub const MBAR_MAX: i64 = (1 << 20) - 1;

/// An operation on an mbarrier from the requesting logic (PTX `mbarrier.*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MbarOpKind {
    /// `mbarrier.init(n)`, 1 <= n < 2^20: phase 0, pending = expected = n, tx 0.
    Init(u32),
    /// `mbarrier.arrive`: pending -= 1.
    Arrive,
    /// `mbarrier.arrive.expect_tx(b)`: tx += b, then arrive.
    ArriveExpectTx(u32),
    /// `mbarrier.expect_tx(b)`: tx += b.
    ExpectTx(u32),
    /// `complete_tx(b)`: tx -= b (normally done by the TMA as bytes land).
    CompleteTx(u32),
}

/// An operation addressed to barrier `bar`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MbarOp {
    /// The barrier's index.
    pub bar: usize,
    /// The operation.
    pub op: MbarOpKind,
}

/// A misuse of an mbarrier (undefined on a GPU; the model stops with an error).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MbarMisuse {
    /// An operation other than `init` before `init`.
    UseBeforeInit,
    /// `init` while a phase is in progress (pending != expected or tx != 0).
    ReinitLive,
    /// `init(n)` with n outside 1..2^20.
    InitCount(u32),
    /// An arrival with no pending arrival left.
    ArrivalUnderflow,
    /// The transaction count left +-(2^20 - 1).
    TxOverflow(i64),
}

impl MbarMisuse {
    fn code(self) -> u8 {
        match self {
            MbarMisuse::UseBeforeInit => 1,
            MbarMisuse::ReinitLive => 2,
            MbarMisuse::InitCount(_) => 3,
            MbarMisuse::ArrivalUnderflow => 4,
            MbarMisuse::TxOverflow(_) => 5,
        }
    }
}

impl std::fmt::Display for MbarMisuse {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MbarMisuse::UseBeforeInit => write!(f, "used before init"),
            MbarMisuse::ReinitLive => write!(f, "re-initialised while a phase is in progress"),
            MbarMisuse::InitCount(n) => write!(f, "init count {n} outside 1..2^20"),
            MbarMisuse::ArrivalUnderflow => {
                write!(f, "arrival with no pending arrival (underflow)")
            }
            MbarMisuse::TxOverflow(t) => {
                write!(f, "transaction count {t} outside +-(2^20 - 1)")
            }
        }
    }
}

/// The architectural state of one mbarrier (also the state of the independent models in the
/// tests).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MbarState {
    /// Initialised.
    pub init: bool,
    /// The current phase's parity.
    pub phase: bool,
    /// Arrivals still expected in this phase.
    pub pending: u32,
    /// Arrivals per phase.
    pub expected: u32,
    /// Transaction count (bytes expected minus bytes completed).
    pub tx: i64,
}

impl MbarState {
    /// Applies one operation and the completion check after it (PTX: when pending = 0 and
    /// tx = 0 the phase completes atomically: phase flips, pending = expected).
    pub fn apply(&mut self, op: MbarOpKind) -> std::result::Result<(), MbarMisuse> {
        if let MbarOpKind::Init(n) = op {
            if self.init && (self.pending != self.expected || self.tx != 0) {
                return Err(MbarMisuse::ReinitLive);
            }
            if !(1..=MBAR_MAX as u32).contains(&n) {
                return Err(MbarMisuse::InitCount(n));
            }
            *self = MbarState {
                init: true,
                phase: false,
                pending: n,
                expected: n,
                tx: 0,
            };
            return Ok(());
        }
        if !self.init {
            return Err(MbarMisuse::UseBeforeInit);
        }
        let (tx_delta, arrive) = match op {
            MbarOpKind::Arrive => (0, true),
            MbarOpKind::ArriveExpectTx(b) => (i64::from(b), true),
            MbarOpKind::ExpectTx(b) => (i64::from(b), false),
            MbarOpKind::CompleteTx(b) => (-i64::from(b), false),
            MbarOpKind::Init(_) => (0, false),
        };
        let tx = self.tx + tx_delta;
        if tx.abs() > MBAR_MAX {
            return Err(MbarMisuse::TxOverflow(tx));
        }
        if arrive && self.pending == 0 {
            return Err(MbarMisuse::ArrivalUnderflow);
        }
        self.tx = tx;
        if arrive {
            self.pending -= 1;
        }
        if self.pending == 0 && self.tx == 0 {
            self.phase = !self.phase;
            self.pending = self.expected;
        }
        Ok(())
    }

    /// `mbarrier.try_wait.parity(p)`: true once the phase with parity `p` has completed, i.e.
    /// the current phase's parity differs from `p`.
    pub fn try_wait_parity(&self, p: bool) -> bool {
        self.phase != p
    }
}

/// One mbarrier (scope `mbar_<i>`).
///
/// # Timing
/// Operations presented in cycle `t` ([`MBarrier::comb`]: the requesters' list in order, then
/// the TMA's `complete_tx`, each followed by the completion check) update the registers at the
/// edge ending cycle `t`; the phase bit and [`MBarrier::try_wait_parity`] (register functions)
/// show the result from cycle `t + 1`. A misuse latches `error` (the first one, with its code
/// `err_code`) and leaves the state as it was before the offending operation; the owner turns
/// it into an error naming the cycle and the barrier.
///
/// Traced: `init`, `phase`, `pending`, `expected`, `tx` (21-bit two's complement), `err_code`,
/// and `ops` (operations applied this cycle).
pub struct MBarrier {
    name: String,
    regs: RareBank<MbarRegs>,
    ops: Wire<u8>,
}

/// An mbarrier's registers, one record (a [`RareBank`]: a barrier is written only in the
/// cycles that operate on it).
#[derive(Clone, Copy, Debug, Default)]
struct MbarRegs {
    /// Initialised (`init`).
    init: bool,
    /// The current phase's parity (`phase`).
    phase: bool,
    /// Arrivals still expected in this phase (`pending`, 20 bits).
    pending: u32,
    /// Arrivals per phase (`expected`, 20 bits).
    expected: u32,
    /// Transaction count, 21-bit two's complement (`tx`).
    tx: u32,
    /// The first misuse's code, 0 if none (`err_code`, 3 bits).
    err_code: u8,
}

impl MBarrier {
    /// Barrier `index` (scope `mbar_<index>`), uninitialised.
    pub fn new(index: usize) -> Result<Self> {
        Ok(Self {
            name: format!("mbar_{index}"),
            // Declared in visit order.
            regs: RareBank::new(MbarRegs::default())
                .field("init", 1, |r| &r.init)?
                .field("phase", 1, |r| &r.phase)?
                .field("pending", 20, |r| &r.pending)?
                .field("expected", 20, |r| &r.expected)?
                .field("tx", 21, |r| &r.tx)?
                .field("err_code", 3, |r| &r.err_code)?,
            ops: Wire::new("ops", 8, 0)?,
        })
    }

    /// The state in the registers.
    pub fn state(&self) -> MbarState {
        let q = self.regs.q();
        let raw = q.tx;
        let tx = if raw & (1 << 20) != 0 {
            i64::from(raw) - (1 << 21)
        } else {
            i64::from(raw)
        };
        MbarState {
            init: q.init,
            phase: q.phase,
            pending: q.pending,
            expected: q.expected,
            tx,
        }
    }

    /// The current phase's parity (register).
    pub fn phase(&self) -> bool {
        self.regs.q().phase
    }

    /// `try_wait.parity(p)` from the registers.
    pub fn try_wait_parity(&self, p: bool) -> bool {
        self.regs.q().phase != p
    }

    /// Whether an error has been latched.
    pub fn failed(&self) -> bool {
        self.regs.q().err_code != 0
    }

    /// The combinational phase of a cycle with no operation: the registers hold, the `ops`
    /// wire reads 0 (what [`MBarrier::comb`] with no operation computes, without the work).
    #[inline]
    pub fn idle(&mut self) {
        self.ops.set(0);
    }

    /// One cycle: applies `ops` in order. Returns the first misuse of this cycle (latched into
    /// `err_code` at the edge); after a misuse no further operation is applied, and once an
    /// error is latched the barrier ignores every operation.
    pub fn comb(&mut self, ops: impl Iterator<Item = MbarOpKind>) -> Option<MbarMisuse> {
        let mut s = self.state();
        let mut n = 0u8;
        let mut err = None;
        if !self.failed() {
            for op in ops {
                n = n.saturating_add(1);
                if let Err(e) = s.apply(op) {
                    err = Some(e);
                    break;
                }
            }
        }
        self.ops.set(n);
        let r = &mut self.regs;
        r.set(|r| &mut r.init, s.init);
        r.set(|r| &mut r.phase, s.phase);
        r.set(|r| &mut r.pending, s.pending);
        r.set(|r| &mut r.expected, s.expected);
        r.set(|r| &mut r.tx, (s.tx & ((1 << 21) - 1)) as u32);
        if let Some(e) = err {
            r.set(|r| &mut r.err_code, e.code());
        }
        err
    }
}

impl Module for MBarrier {
    fn name(&self) -> &str {
        &self.name
    }
    fn visit<V: Visitor>(&mut self, v: &mut V) {
        let b = self.regs.bank_mut();
        v.bank_reg(b, 0, |r| &r.init);
        v.bank_reg(b, 1, |r| &r.phase);
        v.bank_reg(b, 2, |r| &r.pending);
        v.bank_reg(b, 3, |r| &r.expected);
        v.bank_reg(b, 4, |r| &r.tx);
        v.bank_reg(b, 5, |r| &r.err_code);
        v.rare_bank(&mut self.regs);
        v.wire(&mut self.ops);
    }
}
