//! Shell words: how the CLI prints a command a person can paste, and how the job scripts of
//! `memskill launch` quote their arguments.

/// `s` as one POSIX shell word: unchanged when it is plain, else single-quoted (a `'` inside
/// becomes `'\''`).
pub fn shell_word(s: &str) -> String {
    let plain = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:=@+,%".contains(c));
    if plain {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

/// A command line as shell text (each word through [`shell_word`]).
pub fn shell_line<S: AsRef<str>>(words: &[S]) -> String {
    words
        .iter()
        .map(|w| shell_word(w.as_ref()))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_words_survive_quotes_and_spaces() {
        assert_eq!(shell_word("plain-1.toml"), "plain-1.toml");
        assert_eq!(shell_word(""), "''");
        assert_eq!(shell_word("a b"), "'a b'");
        assert_eq!(shell_word("it's"), r"'it'\''s'");
        assert_eq!(shell_word("$HOME"), "'$HOME'");
        assert_eq!(shell_word("x;rm"), "'x;rm'");
    }
}
