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

/// Whether `pattern` selects the signal with dotted `path`: the pattern must match some run of
/// whole, consecutive name components. So `acc` selects every signal (or scope subtree) named
/// `acc`, `mesh.pe_0_*` selects everything under `mesh.pe_0_0`, `mesh.pe_0_1`, ..., and
/// `tensor_core.mesh.pe_1_2.acc` selects exactly that signal.
pub(crate) fn selects(pattern: &str, path: &str) -> bool {
    let comps: Vec<&str> = path.split('.').collect();
    let pat = pattern.as_bytes();
    for i in 0..comps.len() {
        for j in i..comps.len() {
            let sub = comps[i..=j].join(".");
            if glob_match(pat, sub.as_bytes()) {
                return true;
            }
        }
    }
    false
}
