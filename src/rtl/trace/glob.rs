//! Hierarchical glob selection of signals to trace.

/// `*` matches any run of characters (dots included), `?` any one character.
pub(crate) fn glob_match(pat: &[u8], s: &[u8]) -> bool {
    let (mut p, mut i) = (0usize, 0usize);
    let (mut star, mut mark) = (None::<usize>, 0usize);
    while i < s.len() {
        if p < pat.len() && (pat[p] == b'?' || pat[p] == s[i]) {
            p += 1;
            i += 1;
        } else if p < pat.len() && pat[p] == b'*' {
            star = Some(p);
            mark = i;
            p += 1;
        } else if let Some(sp) = star {
            p = sp + 1;
            mark += 1;
            i = mark;
        } else {
            return false;
        }
    }
    while p < pat.len() && pat[p] == b'*' {
        p += 1;
    }
    p == pat.len()
}

/// False if `pattern` cannot select a path of these dot-free components (in order): a match
/// ends with a whole component that the pattern's last component matches, so a last component
/// without wildcards must equal one of them.
pub(crate) fn may_select<'p>(pattern: &str, mut components: impl Iterator<Item = &'p str>) -> bool {
    required_component(pattern).is_none_or(|last| components.any(|c| c == last))
}

/// The component every path `pattern` selects holds: its last component, if that has no
/// wildcard (see [`may_select`]); `None` if it may select a path of any components.
pub(crate) fn required_component(pattern: &str) -> Option<&str> {
    let last = pattern.rsplit('.').next().unwrap_or(pattern);
    (!last.contains(['*', '?'])).then_some(last)
}

/// Whether `pattern` selects the signal with dotted `path`: the pattern must match some run of
/// whole, consecutive name components. So `acc` selects every signal (or scope subtree) named
/// `acc`, `mesh.pe_0_*` selects everything under `mesh.pe_0_0`, `mesh.pe_0_1`, ..., and
/// `tensor_core.mesh.pe_1_2.acc` selects exactly that signal.
pub(crate) fn selects(pattern: &str, path: &str) -> bool {
    // A quick rejection of most paths, before the runs are tried.
    if !may_select(pattern, path.split('.')) {
        return false;
    }
    // Each run of whole components is a slice of `path` from a component's start to a
    // component's end: matched in place, nothing joined or collected.
    let (pat, bytes) = (pattern.as_bytes(), path.as_bytes());
    let starts = std::iter::once(0).chain(path.match_indices('.').map(|(i, _)| i + 1));
    starts.into_iter().any(|start| {
        let ends = path[start..].match_indices('.').map(|(i, _)| start + i);
        ends.chain(std::iter::once(path.len()))
            .any(|end| glob_match(pat, &bytes[start..end]))
    })
}
