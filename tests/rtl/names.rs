//! The signal table's names: each signal's scope and name, and the refusal of a name that two
//! signals, or a signal and a child module, share in one scope (the waveform would be
//! ambiguous).

use tensorcore_rtl::rtl::*;

/// A leaf module with two registers named as given.
struct Leaf {
    name: &'static str,
    x: Reg<u8>,
    y: Reg<u8>,
}

impl Leaf {
    fn new(name: &'static str, x: &'static str, y: &'static str) -> Self {
        Self {
            name,
            x: Reg::new(x, 8, 0).unwrap(),
            y: Reg::new(y, 8, 0).unwrap(),
        }
    }
}

impl Module for Leaf {
    fn name(&self) -> &str {
        self.name
    }
    fn visit<V: Visitor>(&mut self, v: &mut V) {
        v.reg(&mut self.x);
        v.reg(&mut self.y);
    }
}

/// A top holding a register and two leaves.
struct Top {
    own: Reg<u8>,
    left: Leaf,
    right: Leaf,
}

impl Module for Top {
    fn name(&self) -> &str {
        "top"
    }
    fn visit<V: Visitor>(&mut self, v: &mut V) {
        v.reg(&mut self.own);
        v.child(&mut self.left);
        v.child(&mut self.right);
    }
}

impl Design for Top {
    fn comb(&mut self) {
        self.own.set_d(self.own.q().wrapping_add(1));
    }
}

fn top(own: &'static str, left: Leaf, right: Leaf) -> Top {
    Top {
        own: Reg::new(own, 8, 0).unwrap(),
        left,
        right,
    }
}

fn refused(t: Top) -> String {
    match Simulator::new(t) {
        Err(RtlError::DuplicateName(path)) => path,
        Err(e) => panic!("refused for another reason: {e}"),
        Ok(_) => panic!("a duplicate name was accepted"),
    }
}

#[test]
fn every_signal_is_named_by_its_scope_and_the_same_name_may_recur_in_other_scopes() {
    let mut sim = Simulator::new(top(
        "x",
        Leaf::new("left", "x", "y"),
        Leaf::new("right", "x", "y"),
    ))
    .unwrap();
    let paths: Vec<String> = sim.signals().unwrap().iter().map(|s| s.path()).collect();
    assert_eq!(
        paths,
        [
            "top.x",
            "top.left.x",
            "top.left.y",
            "top.right.x",
            "top.right.y"
        ]
    );
    let table = sim.signals().unwrap();
    assert_eq!(&table[1].scope[..], ["top", "left"]);
    assert_eq!(&table[4].scope[..], ["top", "right"]);
}

#[test]
fn a_name_two_signals_of_one_scope_share_is_refused() {
    let t = top(
        "own",
        Leaf::new("left", "x", "x"),
        Leaf::new("right", "x", "y"),
    );
    assert_eq!(refused(t), "top.left.x");
}

#[test]
fn a_signal_and_a_child_module_of_the_same_name_are_refused() {
    let t = top(
        "left",
        Leaf::new("left", "x", "y"),
        Leaf::new("right", "x", "y"),
    );
    assert_eq!(refused(t), "top.left");
    // Two children of one name.
    let t = top(
        "own",
        Leaf::new("leaf", "x", "y"),
        Leaf::new("leaf", "x", "y"),
    );
    assert_eq!(refused(t), "top.leaf");
}

#[test]
fn the_waveforms_clock_and_reset_names_are_taken_in_the_top_scope() {
    assert_eq!(
        refused(top(
            "clk",
            Leaf::new("a", "x", "y"),
            Leaf::new("b", "x", "y")
        )),
        "top.clk"
    );
    assert_eq!(
        refused(top(
            "rst",
            Leaf::new("a", "x", "y"),
            Leaf::new("b", "x", "y")
        )),
        "top.rst"
    );
    // Below the top they are ordinary names.
    assert!(Simulator::new(top(
        "own",
        Leaf::new("a", "clk", "rst"),
        Leaf::new("b", "x", "y")
    ))
    .is_ok());
}

#[test]
fn of_several_duplicates_the_first_repeated_in_visit_order_is_named() {
    // `top.right.y` repeats after `top.left.x` has; `top.left.x` is named.
    let t = top(
        "own",
        Leaf::new("left", "x", "x"),
        Leaf::new("right", "y", "y"),
    );
    assert_eq!(refused(t), "top.left.x");
    // The first name claimed can be the last repeated: `own`'s repeat (a child named `own`,
    // visited after `left`'s duplicate) comes later, so `top.left.x` is still named.
    let t = top(
        "own",
        Leaf::new("left", "x", "x"),
        Leaf::new("own", "a", "b"),
    );
    assert_eq!(refused(t), "top.left.x");
    let t = top(
        "own",
        Leaf::new("own", "a", "b"),
        Leaf::new("left", "x", "x"),
    );
    assert_eq!(refused(t), "top.own");
}
