//! Small text helpers shared by the pool, the prompts, the edits and the evolution notes.

/// The first `n` characters of `s` trimmed (with a trailing `...` when cut).
pub(crate) fn clip(s: &str, n: usize) -> String {
    let s = s.trim();
    if s.chars().count() <= n {
        s.to_string()
    } else {
        format!("{}...", s.chars().take(n).collect::<String>())
    }
}

/// The last `n` characters of `s` (with a leading `...` when cut).
pub(crate) fn tail(s: &str, n: usize) -> String {
    let count = s.chars().count();
    if count <= n {
        s.to_string()
    } else {
        format!("...{}", s.chars().skip(count - n).collect::<String>())
    }
}
