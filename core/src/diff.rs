//! Line diffs of skill texts (release records, rollbacks): the one diff every crate shows.

/// Line diff (LCS) of two texts: `-` removed, `+` added, two spaces for kept lines.
pub fn line_diff(old: &str, new: &str) -> String {
    let a: Vec<&str> = if old.is_empty() {
        Vec::new()
    } else {
        old.lines().collect()
    };
    let b: Vec<&str> = if new.is_empty() {
        Vec::new()
    } else {
        new.lines().collect()
    };
    let (n, m) = (a.len(), b.len());
    let mut lcs = vec![vec![0u32; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[i][j] = if a[i] == b[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    let (mut i, mut j) = (0, 0);
    let mut out = String::new();
    while i < n || j < m {
        if i < n && j < m && a[i] == b[j] {
            out.push_str(&format!("  {}\n", a[i]));
            i += 1;
            j += 1;
        } else if i < n && (j == m || lcs[i + 1][j] >= lcs[i][j + 1]) {
            out.push_str(&format!("- {}\n", a[i]));
            i += 1;
        } else {
            out.push_str(&format!("+ {}\n", b[j]));
            j += 1;
        }
    }
    out
}

/// Diff of description and instructions with section headers; empty when both are unchanged.
pub fn text_diff(old_desc: &str, old_instr: &str, new_desc: &str, new_instr: &str) -> String {
    let mut out = String::new();
    if old_desc != new_desc {
        out.push_str("@@ description\n");
        out.push_str(&line_diff(old_desc, new_desc));
    }
    if old_instr != new_instr {
        out.push_str("@@ instructions\n");
        out.push_str(&line_diff(old_instr, new_instr));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_diff_marks_changes() {
        assert_eq!(line_diff("a\nb\nc", "a\nx\nc"), "  a\n- b\n+ x\n  c\n");
        assert_eq!(line_diff("", "new"), "+ new\n");
        assert_eq!(line_diff("old", ""), "- old\n");
        assert_eq!(text_diff("d", "i", "d", "i"), "");
        assert!(text_diff("d", "i", "d2", "i").starts_with("@@ description\n- d\n+ d2\n"));
    }
}
