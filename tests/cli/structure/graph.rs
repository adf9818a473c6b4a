//! The import graph: each path a file names, resolved to the file that defines what it names,
//! and the circles of that graph.
//!
//! A path is walked through the modules it names (`crate::numerics::dot`), then the item
//! after them is looked up where it is defined: a name the module brings in with `use` (a
//! `pub use` re-export, or a private `use` that its children reach through `super::`) is
//! followed to the module it comes from. So `crate::numerics::dot::MultiplyStage`, re-exported
//! by `dot/mod.rs` from `dot/stage.rs`, is an import of `dot/stage.rs`.
//!
//! A re-export is not an import of the file that makes it: `pub use stage::MultiplyStage;` in
//! `dot/mod.rs` is a door to `stage.rs`, and a path through it leads past it; only when the
//! file's own code also uses the name (`pub use int::IntMode;` beside `Int(IntMode)`) is it an
//! import as well. Declaring a child (`mod stage;`) is not an import either. A module imports
//! what its own code uses: its private `use` declarations and the paths written in its code
//! (`crate::`, `super::`, `self::`, a child's name, a name a `use` binds to a module). So a
//! parent that calls into a child, and a child that takes an item defined in its parent's own
//! file, make a circle.

use std::collections::{BTreeMap, BTreeSet};

use super::source::{ModPath, Ref, Tree};

/// The import graph: each module and the modules it imports.
pub type Graph = BTreeMap<ModPath, BTreeSet<ModPath>>;

/// Where a path leads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    /// The deepest module the path names as written (`numerics::dot` for
    /// `crate::numerics::dot::MultiplyStage`).
    pub named: ModPath,
    /// The module that defines the item, re-exports followed (`numerics::dot::stage`).
    pub home: ModPath,
}

/// How many re-exports a lookup follows before it gives up (no circle of re-exports compiles).
const MAX_DEPTH: usize = 16;

impl Tree {
    /// The longest prefix of `m` that is a file's module (an inline module's path is its
    /// file's).
    fn file_of(&self, m: &ModPath) -> ModPath {
        let mut m = m.clone();
        while !m.is_empty() && !self.files.contains_key(&m) {
            m.pop();
        }
        m
    }

    /// Where the path `rest`, looked up from `base`, leads.
    pub fn resolve(&self, base: &ModPath, rest: &[String]) -> Target {
        self.resolve_at(base, rest, 0)
    }

    fn resolve_at(&self, base: &ModPath, rest: &[String], depth: usize) -> Target {
        let mut at = self.file_of(base);
        for seg in rest {
            match seg.as_str() {
                "*" | "self" => break,
                "super" => {
                    at.pop();
                    continue;
                }
                _ => {}
            }
            let mut next = at.clone();
            next.push(seg.clone());
            if self.files.contains_key(&next) {
                at = next;
                continue;
            }
            let home = self.home_of(&at, seg, depth);
            return Target { named: at, home };
        }
        Target {
            named: at.clone(),
            home: at,
        }
    }

    /// The module that defines `name` as module `m` sees it.
    fn home_of(&self, m: &ModPath, name: &str, depth: usize) -> ModPath {
        let Some(file) = self.files.get(m) else {
            return m.clone();
        };
        if depth > MAX_DEPTH || file.defines.contains(name) {
            return m.clone();
        }
        for r in file
            .refs
            .iter()
            .filter(|r| r.binds.as_deref() == Some(name))
        {
            let t = self.resolve_at(&r.base, &r.rest, depth + 1);
            if &t.home != m {
                return t.home;
            }
        }
        for r in file.refs.iter().filter(|r| is_glob(r)) {
            let from = self.resolve_at(&r.base, &r.rest, depth + 1).named;
            if &from != m && self.provides(&from, name, depth + 1) {
                return self.home_of(&from, name, depth + 1);
            }
        }
        m.clone()
    }

    /// Whether module `m` defines `name` or brings it in.
    fn provides(&self, m: &ModPath, name: &str, depth: usize) -> bool {
        let Some(file) = self.files.get(m) else {
            return false;
        };
        if depth > MAX_DEPTH {
            return false;
        }
        file.defines.contains(name)
            || file.refs.iter().any(|r| r.binds.as_deref() == Some(name))
            || file.refs.iter().filter(|r| is_glob(r)).any(|r| {
                let from = self.resolve_at(&r.base, &r.rest, depth + 1).named;
                &from != m && self.provides(&from, name, depth + 1)
            })
    }

    /// Whether `r` is a `use` that only names a module (`use crate::numerics::dot;`): it binds
    /// an alias, and the paths written through the alias are the imports.
    pub fn binds_module(&self, r: &Ref) -> bool {
        r.is_use && r.binds.is_some() && self.module_named(&r.base, &r.rest).is_some()
    }

    /// The modules that module `m` imports: the homes of the paths its own code names (its
    /// re-exports left out).
    pub fn imports(&self, m: &ModPath) -> BTreeSet<ModPath> {
        let mut out = BTreeSet::new();
        if let Some(file) = self.files.get(m) {
            for r in &file.refs {
                if !r.reexport && !self.binds_module(r) {
                    out.insert(self.resolve(&r.base, &r.rest).home);
                }
            }
        }
        out.remove(m);
        out.remove(&ModPath::new());
        out
    }

    /// The import graph of every file.
    pub fn graph(&self) -> Graph {
        self.files
            .keys()
            .map(|m| (m.clone(), self.imports(m)))
            .collect()
    }
}

fn is_glob(r: &Ref) -> bool {
    r.is_use && r.rest.last().is_some_and(|s| s == "*")
}

/// The circles of `graph` among the modules `keep` accepts: each strongly connected set of
/// two or more modules, as one cycle through it (`a -> b -> a`).
pub fn circles(graph: &Graph, keep: impl Fn(&ModPath) -> bool) -> Vec<Vec<ModPath>> {
    circle_sets(graph, keep)
        .into_iter()
        .map(|(c, _)| c)
        .collect()
}

/// [`circles`], each with every module of its strongly connected set.
pub fn circle_sets(
    graph: &Graph,
    keep: impl Fn(&ModPath) -> bool,
) -> Vec<(Vec<ModPath>, BTreeSet<ModPath>)> {
    let sub: Graph = graph
        .iter()
        .filter(|(m, _)| keep(m))
        .map(|(m, to)| (m.clone(), to.iter().filter(|t| keep(t)).cloned().collect()))
        .collect();
    let mut out = Vec::new();
    for set in components(&sub) {
        if set.len() < 2 {
            continue;
        }
        let inner: Graph = set
            .iter()
            .map(|m| (m.clone(), sub[m].intersection(&set).cloned().collect()))
            .collect();
        let cycle = cycle_from(&inner, set.iter().next().expect("not empty"));
        out.push((cycle, set));
    }
    out
}

/// The strongly connected components of `graph` (Tarjan's algorithm).
fn components(graph: &Graph) -> Vec<BTreeSet<ModPath>> {
    struct State<'g> {
        graph: &'g Graph,
        index: BTreeMap<&'g ModPath, usize>,
        low: BTreeMap<&'g ModPath, usize>,
        stack: Vec<&'g ModPath>,
        on_stack: BTreeSet<&'g ModPath>,
        out: Vec<BTreeSet<ModPath>>,
    }
    fn visit<'g>(s: &mut State<'g>, n: &'g ModPath) {
        let i = s.index.len();
        s.index.insert(n, i);
        s.low.insert(n, i);
        s.stack.push(n);
        s.on_stack.insert(n);
        let graph = s.graph;
        for m in graph.get(n).into_iter().flatten() {
            let Some((m, _)) = graph.get_key_value(m) else {
                continue;
            };
            if !s.index.contains_key(m) {
                visit(s, m);
                let l = s.low[n].min(s.low[m]);
                s.low.insert(n, l);
            } else if s.on_stack.contains(m) {
                let l = s.low[n].min(s.index[m]);
                s.low.insert(n, l);
            }
        }
        if s.low[n] == s.index[n] {
            let mut set = BTreeSet::new();
            while let Some(m) = s.stack.pop() {
                s.on_stack.remove(m);
                set.insert(m.clone());
                if m == n {
                    break;
                }
            }
            s.out.push(set);
        }
    }
    let mut s = State {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        out: Vec::new(),
    };
    for n in graph.keys() {
        if !s.index.contains_key(n) {
            visit(&mut s, n);
        }
    }
    s.out
}

/// A shortest cycle through `start` in a strongly connected `graph` (breadth-first back to
/// `start`).
fn cycle_from(graph: &Graph, start: &ModPath) -> Vec<ModPath> {
    let mut came_from: BTreeMap<&ModPath, &ModPath> = BTreeMap::new();
    let mut queue = std::collections::VecDeque::from([start]);
    while let Some(n) = queue.pop_front() {
        for m in &graph[n] {
            if m == start {
                let mut path = vec![start.clone()];
                let mut at = n;
                while at != start {
                    path.push(at.clone());
                    at = came_from[at];
                }
                path.push(start.clone());
                path.reverse();
                return path;
            }
            if !came_from.contains_key(m) {
                came_from.insert(m, n);
                queue.push_back(m);
            }
        }
    }
    vec![start.clone()]
}
