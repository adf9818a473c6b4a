//! The command line's files import each other without circles: no file under `src/cli/` is
//! imported by a module it imports, directly or through others. A parent `mod.rs` declares its
//! children and dispatches to them; the children share helpers through leaf modules and never
//! reach back into their parent.
//!
//! The check reads every `super::` and `crate::cli::` path in the code of `src/cli/**/*.rs`
//! (comments and `#[cfg(test)]` modules left out), resolves each to the file that holds the
//! module it names, and looks for a cycle in the resulting graph. Run it alone with
//! `cargo test --test cli structure::`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A module of the binary: its path below the crate root (`["cli", "dot", "all"]`).
type ModPath = Vec<String>;

/// Every `.rs` file under `dir`, with its module path.
fn modules(root: &Path, dir: &Path, out: &mut BTreeMap<ModPath, PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("directory entry").path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            modules(root, &p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            let rel = p.strip_prefix(root).expect("below the root");
            let mut path: ModPath = vec!["cli".into()];
            for c in rel.components() {
                path.push(c.as_os_str().to_string_lossy().into_owned());
            }
            let last = path.pop().expect("a file name");
            let stem = last.trim_end_matches(".rs");
            if stem != "mod" {
                path.push(stem.to_string());
            }
            out.insert(path, p);
        }
    }
}

/// The code of a file: line comments (doc comments with their links included) dropped, and
/// everything from the first `#[cfg(test)]` on (a test module's `super` is the file itself).
fn code(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        if line.trim_start().starts_with("#[cfg(test)]") {
            break;
        }
        let code = match line.find("//") {
            Some(i) => &line[..i],
            None => line,
        };
        out.push_str(code);
        out.push('\n');
    }
    out
}

/// The first-level names after a path prefix: `a::b` gives `["a::b"]`, `{a::x, b}` gives
/// `["a::x", "b"]`.
fn tails(rest: &str) -> Vec<String> {
    let rest = rest.trim_start();
    if let Some(inner) = rest.strip_prefix('{') {
        let mut depth = 0usize;
        let mut items = Vec::new();
        let mut cur = String::new();
        for ch in inner.chars() {
            match ch {
                '{' => {
                    depth += 1;
                    cur.push(ch);
                }
                '}' if depth == 0 => break,
                '}' => {
                    depth -= 1;
                    cur.push(ch);
                }
                ',' if depth == 0 => items.push(std::mem::take(&mut cur)),
                _ => cur.push(ch),
            }
        }
        items.push(cur);
        return items
            .into_iter()
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect();
    }
    let end = rest
        .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
        .unwrap_or(rest.len());
    vec![rest[..end].to_string()]
}

/// The deepest module of `known` that `base` followed by the segments of `tail` names.
fn resolve(known: &BTreeMap<ModPath, PathBuf>, base: &ModPath, tail: &str) -> ModPath {
    let mut at = base.clone();
    for seg in tail.split("::") {
        let seg = seg.trim();
        if seg.is_empty() || seg == "*" || seg == "self" {
            break;
        }
        let mut next = at.clone();
        next.push(seg.to_string());
        if known.contains_key(&next) {
            at = next;
        } else {
            break;
        }
    }
    at
}

/// The modules that module `me` (with source `src`) imports: its own children (a parent
/// declares them and calls into them) and every module named by a `super::` or `crate::cli::`
/// path.
fn imports(known: &BTreeMap<ModPath, PathBuf>, me: &ModPath, src: &str) -> BTreeSet<ModPath> {
    let mut out: BTreeSet<ModPath> = known
        .keys()
        .filter(|m| m.len() == me.len() + 1 && m.starts_with(me))
        .cloned()
        .collect();
    for (prefix, base) in [
        ("crate::cli::", vec!["cli".to_string()]),
        ("super::", me[..me.len().saturating_sub(1)].to_vec()),
    ] {
        let mut from = 0;
        while let Some(i) = src[from..].find(prefix) {
            let at = from + i;
            from = at + prefix.len();
            // `super::` inside `crate::cli::...::super::` cannot occur; a `super::` preceded
            // by an identifier character is part of a longer name.
            if at > 0 {
                let prev = src[..at].chars().next_back().unwrap_or(' ');
                if prev.is_alphanumeric() || prev == '_' || (prefix == "super::" && prev == ':') {
                    continue;
                }
            }
            let mut base = base.clone();
            let mut rest = &src[from..];
            // `super::super::` climbs once more.
            while prefix == "super::" && rest.starts_with("super::") {
                base.pop();
                rest = &rest["super::".len()..];
            }
            for tail in tails(rest) {
                let target = resolve(known, &base, &tail);
                if &target != me {
                    out.insert(target);
                }
            }
        }
    }
    out
}

/// A cycle in `graph`, as the list of modules around it, if there is one.
fn find_cycle(graph: &BTreeMap<ModPath, BTreeSet<ModPath>>) -> Option<Vec<ModPath>> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        New,
        Open,
        Done,
    }
    fn visit(
        n: &ModPath,
        graph: &BTreeMap<ModPath, BTreeSet<ModPath>>,
        marks: &mut BTreeMap<ModPath, Mark>,
        stack: &mut Vec<ModPath>,
    ) -> Option<Vec<ModPath>> {
        marks.insert(n.clone(), Mark::Open);
        stack.push(n.clone());
        for m in graph.get(n).into_iter().flatten() {
            match marks.get(m).copied().unwrap_or(Mark::New) {
                Mark::Open => {
                    let i = stack.iter().position(|s| s == m).unwrap_or(0);
                    let mut c = stack[i..].to_vec();
                    c.push(m.clone());
                    return Some(c);
                }
                Mark::New => {
                    if let Some(c) = visit(m, graph, marks, stack) {
                        return Some(c);
                    }
                }
                Mark::Done => {}
            }
        }
        stack.pop();
        marks.insert(n.clone(), Mark::Done);
        None
    }
    let mut marks = BTreeMap::new();
    for n in graph.keys() {
        if marks.get(n).copied().unwrap_or(Mark::New) == Mark::New {
            if let Some(c) = visit(n, graph, &mut marks, &mut Vec::new()) {
                return Some(c);
            }
        }
    }
    None
}

fn path(s: &str) -> ModPath {
    s.split("::").map(String::from).collect()
}

/// The import graph of the files under `src/cli/`.
fn cli_graph() -> BTreeMap<ModPath, BTreeSet<ModPath>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/cli");
    let mut known = BTreeMap::new();
    modules(&root, &root, &mut known);
    known
        .iter()
        .map(|(m, p)| {
            let text =
                std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            (m.clone(), imports(&known, m, &code(&text)))
        })
        .collect()
}

#[test]
fn no_cli_file_is_imported_by_a_module_it_imports() {
    let graph = cli_graph();
    let edges: usize = graph.values().map(BTreeSet::len).sum();
    // The graph is not empty: the folders' runners do import their leaves.
    assert!(graph.contains_key(&path("cli::dot")), "{:?}", graph.keys());
    assert!(
        graph[&path("cli::dot")].contains(&path("cli::dot::result")),
        "dot/mod.rs imports dot/result.rs"
    );
    assert!(edges > 20, "only {edges} imports found");
    if let Some(c) = find_cycle(&graph) {
        let names: Vec<String> = c.iter().map(|m| m.join("::")).collect();
        panic!("import cycle in src/cli: {}", names.join(" -> "));
    }
}

#[test]
fn folders_have_the_dispatch_shape() {
    // Every child of the dot, gemm, grade and workload folders imports nothing from its parent.
    let graph = cli_graph();
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

#[test]
fn the_checker_finds_what_it_looks_for() {
    // Worked by hand: a child reaching back into its parent is a cycle; a child using its
    // sibling leaf is not.
    let mut known = BTreeMap::new();
    for m in ["cli", "cli::d", "cli::d::a", "cli::d::leaf", "cli::values"] {
        known.insert(path(m), PathBuf::from(format!("{m}.rs")));
    }
    let child = path("cli::d::a");
    let src = code("use super::leaf::x;\nuse crate::cli::values;\n// use super::run;\n");
    let got = imports(&known, &child, &src);
    let want: BTreeSet<ModPath> = [path("cli::d::leaf"), path("cli::values")].into();
    assert_eq!(got, want);
    // A parent imports its children.
    let parent = imports(&known, &path("cli::d"), "");
    assert_eq!(parent, [path("cli::d::a"), path("cli::d::leaf")].into());
    let back = imports(&known, &child, "use super::{leaf::x, run};");
    assert!(back.contains(&path("cli::d")), "{back:?}");
    let back2 = imports(
        &known,
        &child,
        "let v = super::super::values::operand(f, t);",
    );
    assert_eq!(back2, [path("cli::values")].into());

    let mut graph: BTreeMap<ModPath, BTreeSet<ModPath>> = BTreeMap::new();
    graph.insert(path("cli::d"), [path("cli::d::a")].into());
    graph.insert(path("cli::d::a"), [path("cli::d::leaf")].into());
    graph.insert(path("cli::d::leaf"), BTreeSet::new());
    assert_eq!(find_cycle(&graph), None);
    graph.insert(path("cli::d::leaf"), [path("cli::d")].into());
    let c = find_cycle(&graph).expect("d -> a -> leaf -> d is a cycle");
    assert_eq!(c.first(), c.last());
    assert_eq!(c.len(), 4);
}
