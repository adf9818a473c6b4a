//! The crate's structure: the layers of `src/` import each other only downwards, as the table
//! in `layers.rs` says (docs/architecture.md, "The code"), and no file of any module is
//! imported by a module it imports, directly or through others.
//!
//! The checker reads every `use` declaration and every `crate::`, `tensorcore_rtl::`,
//! `super::` and `self::` path in the code of `src/**/*.rs` (comments, string contents and
//! `#[cfg(test)]` modules left out; `source.rs`), resolves each to the file that defines what
//! it names, re-exports followed (`graph.rs`), and checks
//! - every path from a file of layer L names a module of L or of a layer L may import, and
//!   leads to an item defined there (`layers.rs`);
//! - the graph of files has no circle inside any layer (`graph.rs` says what counts as an
//!   import: a re-export does not, a parent's call into its child does).
//!
//! Run it alone with `cargo test --test cli structure::`.

mod graph;
mod layers;
mod source;

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::OnceLock;

use graph::{circle_sets, circles, Graph};
use layers::{layer_of, violations, LAYERS};
use source::{ModPath, Tree};

fn path(s: &str) -> ModPath {
    s.split("::").map(String::from).collect()
}

/// The crate's source, read once for every test of this file.
fn crate_tree() -> &'static Tree {
    static TREE: OnceLock<Tree> = OnceLock::new();
    TREE.get_or_init(|| Tree::read(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src")))
}

/// The crate's import graph, built once.
fn crate_graph() -> &'static Graph {
    static GRAPH: OnceLock<Graph> = OnceLock::new();
    GRAPH.get_or_init(|| crate_tree().graph())
}

/// The circles of `graph` inside layer `layer`, one line each (`a -> b -> a`).
fn circles_in(graph: &Graph, layer: &str) -> Vec<String> {
    let name = |m: &ModPath| m.join("::");
    circle_sets(graph, |m| layer_of(m) == Some(layer))
        .iter()
        .map(|(cycle, set)| {
            let line = cycle.iter().map(name).collect::<Vec<_>>().join(" -> ");
            if set.len() + 1 > cycle.len() {
                let all: Vec<String> = set.iter().map(name).collect();
                format!("{line} (one of the circles among {})", all.join(", "))
            } else {
                line
            }
        })
        .collect()
}

#[test]
fn every_import_follows_the_layer_table() {
    let tree = crate_tree();
    // The reader sees the crate: its layers and their imports.
    for (layer, _) in LAYERS {
        assert!(
            tree.files.contains_key(&path(layer)),
            "the table's layer `{layer}` is not a module of src/"
        );
    }
    let refs: usize = tree.files.values().map(|f| f.refs.len()).sum();
    assert!(refs > 1000, "only {refs} paths found");
    let bad = violations(tree);
    assert!(
        bad.is_empty(),
        "{} imports against the layer table:\n{}",
        bad.len(),
        bad.join("\n")
    );
}

#[test]
fn the_layer_table_runs_one_way() {
    // Each layer imports only layers listed before it, so the table itself has no circle.
    for (i, (layer, may)) in LAYERS.iter().enumerate() {
        for m in *may {
            assert!(
                LAYERS[..i].iter().any(|(l, _)| l == m),
                "`{layer}` may import `{m}`, which is not listed before it"
            );
        }
    }
}

macro_rules! no_circle_in {
    ($($test:ident: $layer:literal,)*) => {$(
        #[test]
        fn $test() {
            let found = circles_in(crate_graph(), $layer);
            assert!(
                found.is_empty(),
                "import circles in src/{}:\n{}",
                $layer,
                found.join("\n")
            );
        }
    )*};
}

no_circle_in! {
    no_circle_in_numerics: "numerics",
    no_circle_in_rtl: "rtl",
    no_circle_in_hw: "hw",
    no_circle_in_energy: "energy",
    no_circle_in_gemm: "gemm",
    no_circle_in_sparse: "sparse",
    no_circle_in_dispatch: "dispatch",
    no_circle_in_verify: "verify",
    no_circle_in_workload: "workload",
    no_circle_in_io: "io",
    no_circle_in_tb: "tb",
    no_circle_in_job: "job",
    no_circle_in_course: "course",
    no_circle_in_cli: "cli",
}

#[test]
fn every_layer_is_checked_for_circles() {
    // The list above names every layer of the table that is a folder (a one-file layer such
    // as `sweep` cannot hold a circle).
    let listed = [
        "numerics", "rtl", "hw", "energy", "gemm", "sparse", "dispatch", "verify", "workload",
        "io", "tb", "job", "course", "cli",
    ];
    let tree = crate_tree();
    for (layer, _) in LAYERS {
        let folder = tree
            .files
            .keys()
            .any(|m| m.len() > 1 && layer_of(m) == Some(*layer));
        assert_eq!(folder, listed.contains(layer), "layer `{layer}`");
    }
}

#[test]
fn the_graph_holds_the_imports_the_code_makes() {
    // Imports worked out by reading the files: through a module alias (`use super::ieee;`
    // then `ieee::fma_chain_acc`), a `use` (`use super::stage::{...}`), a path through a
    // parent's re-export (`super::dot::MAX_LANES`, defined in `dot/stage.rs`), a path in the
    // code (`crate::sparse::clocked::sparse_figures`) and the binary's `tensorcore_rtl::`
    // (`output::begin_run`, which `io::output` re-exports from `rtl::file`).
    let graph = crate_graph();
    for (from, to) in [
        ("numerics::dot::step", "numerics::dot::ieee"),
        ("numerics::dot::ieee", "numerics::dot::stage"),
        ("numerics::int", "numerics::dot::stage"),
        ("rtl::module", "rtl::mem"),
        ("dispatch", "sparse::clocked"),
        ("main", "rtl::file"),
    ] {
        assert!(
            graph[&path(from)].contains(&path(to)),
            "{from} imports {to}: {:?}",
            graph[&path(from)]
        );
    }
    // And none of the reverse.
    assert!(!graph[&path("numerics::dot::stage")].contains(&path("numerics::dot::step")));
    assert!(!graph[&path("rtl::mem")].contains(&path("rtl::module")));
}

#[test]
fn cli_folders_have_the_dispatch_shape() {
    // Every child of the dot, gemm, grade and workload folders imports nothing from its
    // parent, and the folders' runners do import their leaves.
    let graph = crate_graph();
    assert!(
        graph[&path("cli::dot")].contains(&path("cli::dot::result")),
        "dot/mod.rs imports dot/result.rs"
    );
    for parent in ["cli::dot", "cli::gemm", "cli::grade", "cli::workload"] {
        let p = path(parent);
        let children: Vec<&ModPath> = graph
            .keys()
            .filter(|m| m.len() == p.len() + 1 && m.starts_with(&p))
            .collect();
        assert!(!children.is_empty(), "{parent} has no children");
        for c in children {
            assert!(
                !graph[c].contains(&p),
                "{} imports its parent {parent}",
                c.join("::")
            );
        }
    }
}

/// A small crate of `(path below src/, text)` files.
fn planted(files: &[(&str, &str)]) -> Tree {
    let sources: Vec<(String, String)> = files
        .iter()
        .map(|(p, t)| (p.to_string(), t.to_string()))
        .collect();
    Tree::from_sources(&sources)
}

#[test]
fn the_checker_reports_a_planted_circle_and_a_layer_reversal() {
    let tree = planted(&[
        ("lib.rs", "pub mod hw;\npub mod numerics;\n"),
        ("numerics/mod.rs", "pub mod a;\npub mod b;\npub mod c;\n"),
        // a and b import each other: a circle.
        (
            "numerics/a.rs",
            "use super::b::Wide;\n\npub fn f(x: Wide) {}\n",
        ),
        (
            "numerics/b.rs",
            "pub struct Wide;\n\npub fn g() {\n    crate::numerics::a::f(Wide);\n}\n",
        ),
        // c reaches up into hw: a layer reversal, on its line 3.
        (
            "numerics/c.rs",
            "//! use crate::hw::Pe; (a comment)\n\nuse crate::hw::{Pe, Mesh};\n",
        ),
        ("hw/mod.rs", "pub struct Pe;\npub struct Mesh;\n"),
    ]);
    let graph = tree.graph();
    let found = circles_in(&graph, "numerics");
    assert_eq!(found, ["numerics::a -> numerics::b -> numerics::a"]);
    assert!(circles_in(&graph, "hw").is_empty());
    assert_eq!(
        violations(&tree),
        [
            "src/numerics/c.rs:3: crate::hw::Pe (numerics may not import hw)",
            "src/numerics/c.rs:3: crate::hw::Mesh (numerics may not import hw)",
        ]
    );

    // The same tree mended: b's item moves to a leaf both import, c imports nothing above.
    let mended = planted(&[
        ("lib.rs", "pub mod hw;\npub mod numerics;\n"),
        (
            "numerics/mod.rs",
            "pub mod a;\npub mod b;\npub mod c;\npub mod wide;\n",
        ),
        ("numerics/wide.rs", "pub struct Wide;\n"),
        (
            "numerics/a.rs",
            "use super::wide::Wide;\n\npub fn f(x: Wide) {}\n",
        ),
        (
            "numerics/b.rs",
            "use super::wide::Wide;\n\npub fn g() {\n    crate::numerics::a::f(Wide);\n}\n",
        ),
        ("numerics/c.rs", "pub struct Pe;\n"),
        (
            "hw/mod.rs",
            "pub use crate::numerics::c::Pe;\npub struct Mesh;\n",
        ),
    ]);
    assert!(circles_in(&mended.graph(), "numerics").is_empty());
    assert!(violations(&mended).is_empty(), "{:?}", violations(&mended));

    // A re-export does not carry an import past the table: the door itself is a name, but a
    // path through it leads to hw.
    let smuggled = planted(&[
        ("lib.rs", "pub mod hw;\npub mod numerics;\n"),
        ("numerics/mod.rs", "pub mod door;\npub mod user;\n"),
        ("numerics/door.rs", "pub use crate::hw::Mesh;\n"),
        (
            "numerics/user.rs",
            "pub fn f() {\n    let _ = crate::numerics::door::Mesh;\n}\n",
        ),
        ("hw/mod.rs", "pub struct Mesh;\n"),
    ]);
    assert_eq!(
        violations(&smuggled),
        ["src/numerics/user.rs:2: crate::numerics::door::Mesh (numerics may not import hw)"]
    );
}

#[test]
fn paths_lead_to_the_file_that_defines_the_item() {
    let tree = planted(&[
        ("lib.rs", "pub mod n;\n"),
        (
            "n/mod.rs",
            "pub mod d;\npub mod f;\n\npub use f::{Format, FP32 as F32};\n\npub struct Here;\n",
        ),
        (
            "n/d/mod.rs",
            "mod stage;\npub mod step;\npub use stage::*;\n\npub fn dot() {\n    step::walk();\n}\n",
        ),
        ("n/d/stage.rs", "pub struct Stage;\n"),
        (
            "n/d/step.rs",
            "use crate::n::d;\nuse super::super::F32;\n\npub fn walk() {}\n\nfn s() -> d::Stage {\n    d::dot()\n}\n",
        ),
        ("n/f.rs", "pub struct Format;\npub const FP32: Format = Format;\n"),
    ]);
    let graph = tree.graph();
    // A re-export (`pub use f::Format`), a renamed one (`FP32 as F32`) and a glob
    // (`pub use stage::*`) lead to the defining file.
    let r = |from: &str, p: &[&str]| {
        let p: Vec<String> = p.iter().map(|s| s.to_string()).collect();
        tree.resolve(&path(from), &p)
    };
    assert_eq!(r("n", &["Format"]).home, path("n::f"));
    assert_eq!(r("n", &["F32"]).home, path("n::f"));
    assert_eq!(r("n::d", &["Stage"]).home, path("n::d::stage"));
    assert_eq!(r("n::d", &["Stage"]).named, path("n::d"));
    assert_eq!(r("n", &["Here"]).home, path("n"));
    // step takes Stage through the alias `d` (from stage.rs), F32 through its grandparent
    // (from f.rs), and `d::dot`, defined in its parent's own file, which calls step: a circle.
    let step = &graph[&path("n::d::step")];
    let want: BTreeSet<ModPath> = [path("n::d::stage"), path("n::f"), path("n::d")].into();
    assert_eq!(step, &want);
    assert_eq!(
        circles(&graph, |_| true),
        [vec![path("n::d"), path("n::d::step"), path("n::d")]]
    );
    // A parent imports the child it calls (`step::walk()`), not the one it only declares
    // and re-exports (`pub use stage::*`).
    assert_eq!(graph[&path("n::d")], [path("n::d::step")].into());
    assert!(graph[&path("n")].is_empty(), "{:?}", graph[&path("n")]);
}

#[test]
fn the_reader_skips_comments_strings_and_tests() {
    let code = source::clean(
        "use a; // crate::x\nlet s = \"crate::y\"; let c = '\"';\n#[cfg(test)]\nuse crate::z;\n",
    );
    assert_eq!(code, ["use a; ", "let s = \"\"; let c = ' ';"]);
    let uses = source::expand_use("crate::a::{b::{C, D as E}, f::*, self}");
    let shown: Vec<String> = uses
        .iter()
        .map(|(p, b)| format!("{}={}", p.join("::"), b.clone().unwrap_or_default()))
        .collect();
    assert_eq!(
        shown,
        [
            "crate::a::b::C=C",
            "crate::a::b::D=E",
            "crate::a::f::*=",
            "crate::a=a"
        ]
    );
}

#[test]
fn a_child_named_as_the_function_it_exports_is_no_import() {
    // `pub mod run; pub use run::run;`: the parent declares the child and re-exports its
    // function of the same name; the child takes an item of the parent. Not a circle: the
    // parent's code never uses `run`.
    let door = planted(&[
        ("lib.rs", "pub mod workload;\n"),
        (
            "workload/mod.rs",
            "pub mod run;\n\npub use run::run;\n\npub fn seed() -> u64 {\n    1\n}\n",
        ),
        (
            "workload/run.rs",
            "use super::seed;\n\npub fn run() -> u64 {\n    seed()\n}\n",
        ),
    ]);
    assert!(circles_in(&door.graph(), "workload").is_empty());
    // The parent calling it is: a circle.
    let called = planted(&[
        ("lib.rs", "pub mod workload;\n"),
        (
            "workload/mod.rs",
            "pub mod run;\n\npub use run::run;\n\npub fn seed() -> u64 {\n    1\n}\n\npub fn twice() -> u64 {\n    run() + run()\n}\n",
        ),
        (
            "workload/run.rs",
            "use super::seed;\n\npub fn run() -> u64 {\n    seed()\n}\n",
        ),
    ]);
    assert_eq!(
        circles_in(&called.graph(), "workload"),
        ["workload -> workload::run -> workload"]
    );
}
