//! The crate's source as the structure checker reads it: every file of `src/` with its module
//! path, its code (comments, the contents of string literals and test modules left out), the
//! names it defines and every path it names (`use` declarations and paths written in the code).
//!
//! The reader is textual and relies on the repository's formatting (`cargo fmt`): a top-level
//! item starts in column 0, an inline `mod name {` ends at the `}` of its own indentation.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// A module: its path below the crate root (`["numerics", "dot", "step"]`). The library's root
/// (`lib.rs`) is `[]`; the binary's root (`main.rs`) is `["main"]` and its modules are
/// `["cli", ...]`, names the library does not use.
pub type ModPath = Vec<String>;

/// A path named by a file, and where its resolution starts.
#[derive(Clone, Debug)]
pub struct Ref {
    /// Line (from 1) of the path's first segment.
    pub line: usize,
    /// The path as written (`crate::numerics::format::Format`).
    pub text: String,
    /// The module the path's remaining segments are looked up in (`crate::` is `[]`,
    /// `super::` the enclosing module's parent).
    pub base: ModPath,
    /// The segments after the base (`["numerics", "format", "Format"]`; a glob ends in `*`).
    pub rest: Vec<String>,
    /// For a `use` declaration: the name it binds (`Format`, or the `as` name); `None` for a
    /// glob and for a path written in the code.
    pub binds: Option<String>,
    /// Whether it is a `use` declaration (a binding or a glob) rather than a path in the code.
    pub is_use: bool,
    /// Whether it is only a re-export: a `use` with a visibility (`pub use`, `pub(crate)
    /// use`) whose name the file's own code does not use (a glob re-export always is).
    pub reexport: bool,
}

/// One source file.
#[derive(Clone, Debug)]
pub struct File {
    /// Its path as messages show it (`src/numerics/dot/step.rs`).
    pub shown: String,
    /// The names of the items defined at its top level (functions, types, constants,
    /// statics, traits, inline modules).
    pub defines: BTreeSet<String>,
    /// Every path it names, in order.
    pub refs: Vec<Ref>,
}

/// Every file of a crate tree.
#[derive(Clone, Debug, Default)]
pub struct Tree {
    /// The files by module path.
    pub files: BTreeMap<ModPath, File>,
}

/// The module path of a file, from its path below `src/` (`numerics/dot/mod.rs`).
pub fn module_of(rel: &str) -> ModPath {
    let stem = rel.trim_end_matches(".rs");
    let mut path: ModPath = stem.split('/').map(String::from).collect();
    if path.last().is_some_and(|s| s == "mod") {
        path.pop();
    }
    if path == ["lib"] {
        path.clear();
    }
    path
}

impl Tree {
    /// Every `.rs` file under the `src` folder.
    pub fn read(src: &Path) -> Tree {
        let mut sources = Vec::new();
        collect(src, src, &mut sources);
        Tree::from_sources(&sources)
    }

    /// A tree from `(path below src/, text)` pairs (`("numerics/format.rs", "...")`).
    pub fn from_sources(sources: &[(String, String)]) -> Tree {
        let known: BTreeSet<ModPath> = sources.iter().map(|(r, _)| module_of(r)).collect();
        let mut tree = Tree::default();
        let mut lines_of = BTreeMap::new();
        for (rel, text) in sources {
            let me = module_of(rel);
            let lines = clean(text);
            let contexts = inline_contexts(&me, &lines);
            let mut refs = use_refs(&known, &lines, &contexts);
            let words = code_words(&lines);
            for r in &mut refs {
                if r.binds.as_ref().is_some_and(|b| words.contains(b)) {
                    r.reexport = false;
                }
            }
            refs.extend(code_refs(&lines, &contexts, &rooted_prefixes()));
            refs.sort_by_key(|r| r.line);
            let file = File {
                shown: format!("src/{rel}"),
                defines: definitions(&lines),
                refs,
            };
            lines_of.insert(me.clone(), (lines, contexts));
            tree.files.insert(me, file);
        }
        // A child module's name, and a name that a `use` binds to a module, start paths in
        // the code (`step::walk()`, `dot::AccMode`): found once every module is known.
        let aliases: Vec<(ModPath, Vec<(String, ModPath)>)> = tree
            .files
            .iter()
            .map(|(m, f)| {
                let children = known
                    .iter()
                    .filter(|c| c.len() == m.len() + 1 && c.starts_with(m))
                    .map(|c| (c[m.len()].clone(), c.clone()));
                let bound = f.refs.iter().filter_map(|r| {
                    let name = r.binds.clone()?;
                    let target = tree.module_named(&r.base, &r.rest)?;
                    Some((name, target))
                });
                (m.clone(), children.chain(bound).collect())
            })
            .collect();
        for (m, list) in aliases {
            if list.is_empty() {
                continue;
            }
            let (lines, contexts) = &lines_of[&m];
            let prefixes: Vec<(String, Root)> = list
                .into_iter()
                .map(|(name, target)| (format!("{name}::"), Root::Module(target)))
                .collect();
            let extra = code_refs(lines, contexts, &prefixes);
            let file = tree.files.get_mut(&m).expect("known");
            file.refs.extend(extra);
            file.refs.sort_by_key(|r| r.line);
        }
        tree
    }

    /// The module a path names, when every segment is a module (`crate::numerics::dot`).
    pub fn module_named(&self, base: &ModPath, rest: &[String]) -> Option<ModPath> {
        let mut at = base.clone();
        for seg in rest {
            match seg.as_str() {
                "*" => return None,
                "self" => continue,
                "super" => {
                    at.pop();
                    continue;
                }
                _ => {}
            }
            at.push(seg.clone());
            if !self.files.contains_key(&at) {
                return None;
            }
        }
        Some(at)
    }
}

/// Every `.rs` file under `dir`, as `(path below root, text)`.
fn collect(root: &Path, dir: &Path, out: &mut Vec<(String, String)>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("directory entry").path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            collect(root, &p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            let rel = p.strip_prefix(root).expect("below the root");
            let rel: Vec<String> = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            let text =
                std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            out.push((rel.join("/"), text));
        }
    }
}

/// The lines of a file's code: line comments (doc comments included) dropped, the contents of
/// string and character literals emptied, and nothing from the first `#[cfg(test)]` on (a
/// test module's `super` is the file itself). Line numbers are kept.
pub fn clean(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    // Inside a string literal: `Some(hashes)` of a raw string, `Some(None)` of a plain one.
    let mut in_str: Option<Option<usize>> = None;
    for line in text.lines() {
        if in_str.is_none() && line.trim_start().starts_with("#[cfg(test)]") {
            break;
        }
        let chars: Vec<char> = line.chars().collect();
        let mut code = String::new();
        let mut i = 0;
        while i < chars.len() {
            let c = chars[i];
            match in_str {
                Some(None) => {
                    if c == '\\' {
                        i += 2;
                        continue;
                    }
                    if c == '"' {
                        code.push('"');
                        in_str = None;
                    }
                    i += 1;
                }
                Some(Some(hashes)) => {
                    if c == '"'
                        && chars[i + 1..]
                            .iter()
                            .take(hashes)
                            .filter(|&&h| h == '#')
                            .count()
                            == hashes
                    {
                        code.push('"');
                        in_str = None;
                        i += 1 + hashes;
                    } else {
                        i += 1;
                    }
                }
                None => {
                    if c == '/' && chars.get(i + 1) == Some(&'/') {
                        break;
                    }
                    let prev_ident =
                        i > 0 && (chars[i - 1].is_alphanumeric() || chars[i - 1] == '_');
                    if c == '"' {
                        code.push('"');
                        in_str = Some(None);
                        i += 1;
                    } else if c == 'r'
                        && !prev_ident
                        && matches!(chars.get(i + 1), Some('"') | Some('#'))
                    {
                        let hashes = chars[i + 1..].iter().take_while(|&&h| h == '#').count();
                        if chars.get(i + 1 + hashes) == Some(&'"') {
                            code.push('"');
                            in_str = Some(Some(hashes));
                            i += 2 + hashes;
                        } else {
                            code.push(c);
                            i += 1;
                        }
                    } else if c == '\'' {
                        // A character literal ('x', '\n', '\u{..}') or a lifetime ('a).
                        if chars.get(i + 1) == Some(&'\\') {
                            let end = chars[i + 2..]
                                .iter()
                                .position(|&q| q == '\'')
                                .map_or(chars.len(), |p| i + 3 + p);
                            code.push_str("' '");
                            i = end;
                        } else if chars.get(i + 2) == Some(&'\'') {
                            code.push_str("' '");
                            i += 3;
                        } else {
                            code.push(c);
                            i += 1;
                        }
                    } else {
                        code.push(c);
                        i += 1;
                    }
                }
            }
        }
        out.push(code);
    }
    out
}

/// The module each line is in: the file's own, or an inline `mod name { ... }` within it.
fn inline_contexts(me: &ModPath, lines: &[String]) -> Vec<ModPath> {
    let mut stack: Vec<(usize, String)> = Vec::new();
    let mut out = Vec::with_capacity(lines.len());
    for line in lines {
        let indent = line.len() - line.trim_start().len();
        let t = line.trim();
        if t == "}" && stack.last().is_some_and(|(i, _)| *i == indent) {
            stack.pop();
        }
        let mut here = me.clone();
        here.extend(stack.iter().map(|(_, n)| n.clone()));
        out.push(here);
        let decl = strip_visibility(t);
        if let Some(rest) = decl.strip_prefix("mod ") {
            if let Some(name) = rest.strip_suffix('{') {
                stack.push((indent, name.trim().to_string()));
            }
        }
    }
    out
}

/// `pub fn x` -> `fn x`, `pub(crate) use` -> `use`.
fn strip_visibility(t: &str) -> &str {
    if let Some(rest) = t.strip_prefix("pub(") {
        match rest.find(')') {
            Some(i) => rest[i + 1..].trim_start(),
            None => t,
        }
    } else if let Some(rest) = t.strip_prefix("pub ") {
        rest
    } else {
        t
    }
}

/// The names of the items defined at a file's top level (column 0).
fn definitions(lines: &[String]) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for line in lines {
        if line.starts_with(char::is_whitespace) {
            continue;
        }
        let mut t = strip_visibility(line.trim_end());
        for q in ["const ", "async ", "unsafe "] {
            if let Some(rest) = t.strip_prefix(q) {
                if rest.starts_with("fn ") {
                    t = rest;
                }
            }
        }
        for kw in [
            "fn ",
            "struct ",
            "enum ",
            "const ",
            "static ",
            "type ",
            "trait ",
            "union ",
            "mod ",
            "macro_rules! ",
        ] {
            if let Some(rest) = t.strip_prefix(kw) {
                let rest = rest.trim_start_matches("mut ");
                let name: String = rest
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                if !name.is_empty() {
                    out.insert(name);
                }
            }
        }
    }
    out
}

/// Where a rooted path starts.
#[derive(Clone, Debug)]
enum Root {
    /// `crate::` or `tensorcore_rtl::`: the crate root.
    Crate,
    /// `super::`: the enclosing module's parent.
    Super,
    /// `self::`: the enclosing module.
    SelfMod,
    /// An alias bound to a module by a `use`.
    Module(ModPath),
}

fn rooted_prefixes() -> Vec<(String, Root)> {
    vec![
        ("crate::".into(), Root::Crate),
        ("tensorcore_rtl::".into(), Root::Crate),
        ("super::".into(), Root::Super),
        ("self::".into(), Root::SelfMod),
    ]
}

/// The base of a path with root `root` written in module `context`, and the segments left
/// after any further `super`s.
fn base_of(root: &Root, context: &ModPath, mut segs: Vec<String>) -> (ModPath, Vec<String>) {
    let mut base = match root {
        Root::Crate => Vec::new(),
        Root::SelfMod => context.clone(),
        Root::Super => context[..context.len().saturating_sub(1)].to_vec(),
        Root::Module(m) => m.clone(),
    };
    while segs.first().is_some_and(|s| s == "super") {
        segs.remove(0);
        base.pop();
    }
    (base, segs)
}

/// The words (identifiers) of the code outside `use` declarations and child declarations
/// (`mod run;` names a child, not something the code uses: a module re-exporting a function
/// of the same name from it, `pub use run::run`, does not use it).
fn code_words(lines: &[String]) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut in_use = false;
    for line in lines {
        let item = strip_visibility(line.trim_start());
        let starts_use = item.starts_with("use ");
        if starts_use || in_use {
            in_use = !line.contains(';');
            continue;
        }
        if item.starts_with("mod ") && line.trim_end().ends_with(';') {
            continue;
        }
        for w in line.split(|c: char| !(c.is_alphanumeric() || c == '_')) {
            if !w.is_empty() {
                out.insert(w.to_string());
            }
        }
    }
    out
}

/// The paths written in the code (outside `use` declarations) that start with one of
/// `prefixes` at an identifier boundary.
fn code_refs(lines: &[String], contexts: &[ModPath], prefixes: &[(String, Root)]) -> Vec<Ref> {
    let mut out = Vec::new();
    let mut in_use = false;
    for (n, line) in lines.iter().enumerate() {
        let starts_use = strip_visibility(line.trim_start()).starts_with("use ");
        if starts_use || in_use {
            in_use = !line.contains(';');
            continue;
        }
        for (prefix, root) in prefixes {
            let mut from = 0;
            while let Some(i) = line[from..].find(prefix.as_str()) {
                let at = from + i;
                from = at + prefix.len();
                let prev = line[..at].chars().next_back().unwrap_or(' ');
                if prev.is_alphanumeric() || prev == '_' || prev == ':' || prev == '.' {
                    continue;
                }
                let rest = &line[from..];
                let end = rest
                    .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
                    .unwrap_or(rest.len());
                let segs: Vec<String> = rest[..end]
                    .split("::")
                    .filter(|s| !s.is_empty())
                    .map(String::from)
                    .collect();
                let (base, rest_segs) = base_of(root, &contexts[n], segs);
                out.push(Ref {
                    line: n + 1,
                    text: format!("{prefix}{}", &rest[..end])
                        .trim_end_matches(':')
                        .to_string(),
                    base,
                    rest: rest_segs,
                    binds: None,
                    is_use: false,
                    reexport: false,
                });
            }
        }
    }
    out
}

/// The paths of every `use` declaration whose root is in the crate: `crate`, `super`, `self`,
/// `tensorcore_rtl` or a child module of the enclosing one (`pub use step::dot_step;`).
fn use_refs(known: &BTreeSet<ModPath>, lines: &[String], contexts: &[ModPath]) -> Vec<Ref> {
    let mut out = Vec::new();
    let mut n = 0;
    while n < lines.len() {
        let t = strip_visibility(lines[n].trim_start());
        let reexport = t.len() < lines[n].trim_start().len();
        let Some(first) = t.strip_prefix("use ") else {
            n += 1;
            continue;
        };
        let start = n;
        let mut text = first.to_string();
        while !text.contains(';') && n + 1 < lines.len() {
            n += 1;
            text.push(' ');
            text.push_str(&lines[n]);
        }
        n += 1;
        let text = text.split(';').next().unwrap_or("");
        let context = &contexts[start];
        for (segs, binds) in expand_use(text) {
            let Some(first) = segs.first() else { continue };
            let root = match first.as_str() {
                "crate" | "tensorcore_rtl" => Root::Crate,
                "super" => Root::Super,
                "self" => Root::SelfMod,
                name => {
                    let mut child = context.clone();
                    child.push(name.to_string());
                    if !known.contains(&child) {
                        continue; // another crate (`std`, `serde`, ...)
                    }
                    Root::SelfMod
                }
            };
            let shown = segs.join("::");
            let tail = if matches!(root, Root::SelfMod) && first != "self" {
                segs.clone()
            } else {
                segs[1..].to_vec()
            };
            let (base, rest) = base_of(&root, context, tail);
            let glob = rest.last().is_some_and(|s| s == "*");
            out.push(Ref {
                line: start + 1,
                text: shown,
                base,
                rest,
                binds: if glob { None } else { binds },
                is_use: true,
                reexport,
            });
        }
    }
    out
}

/// The paths of a use tree (`crate::a::{b::C, d as e, f::*}`), each with the name it binds.
pub fn expand_use(text: &str) -> Vec<(Vec<String>, Option<String>)> {
    let mut tokens = Vec::new();
    let mut word = String::new();
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_alphanumeric() || c == '_' {
            word.push(c);
        } else {
            if !word.is_empty() {
                tokens.push(std::mem::take(&mut word));
            }
            if c == ':' && chars.get(i + 1) == Some(&':') {
                tokens.push("::".into());
                i += 1;
            } else if "{},*".contains(c) {
                tokens.push(c.to_string());
            }
        }
        i += 1;
    }
    if !word.is_empty() {
        tokens.push(word);
    }
    let mut out = Vec::new();
    let mut pos = 0;
    use_tree(&tokens, &mut pos, &[], &mut out);
    out
}

fn use_tree(
    tokens: &[String],
    pos: &mut usize,
    prefix: &[String],
    out: &mut Vec<(Vec<String>, Option<String>)>,
) {
    let mut segs = prefix.to_vec();
    while *pos < tokens.len() {
        let t = tokens[*pos].as_str();
        match t {
            "{" => {
                *pos += 1;
                while *pos < tokens.len() && tokens[*pos] != "}" {
                    use_tree(tokens, pos, &segs, out);
                    if tokens.get(*pos).is_some_and(|t| t == ",") {
                        *pos += 1;
                    }
                }
                *pos += 1;
                return;
            }
            "*" => {
                *pos += 1;
                segs.push("*".into());
                out.push((segs, None));
                return;
            }
            "::" => *pos += 1,
            "," | "}" => break,
            _ => {
                segs.push(t.to_string());
                *pos += 1;
                if tokens.get(*pos).is_some_and(|t| t == "::") {
                    continue;
                }
                break;
            }
        }
    }
    let mut binds = segs.last().cloned();
    if segs.last().is_some_and(|s| s == "self") {
        segs.pop();
        binds = segs.last().cloned();
    }
    if tokens.get(*pos).is_some_and(|t| t == "as") {
        binds = tokens.get(*pos + 1).cloned();
        *pos += 2;
    }
    if !segs.is_empty() {
        out.push((segs, binds));
    }
}
