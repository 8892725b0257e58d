//! An exact port of NLTK's `PorterStemmer()` in its default `NLTK_EXTENSIONS` mode
//! (nltk/stem/porter.py). Words are processed as sequences of Unicode scalar values,
//! like Python strings, so results match NLTK on any input, not only ASCII.

/// Irregular forms NLTK maps directly (checked on the lower-cased word).
const POOL: &[(&str, &str)] = &[
    ("sky", "sky"),
    ("skies", "sky"),
    ("dying", "die"),
    ("lying", "lie"),
    ("tying", "tie"),
    ("news", "news"),
    ("innings", "inning"),
    ("inning", "inning"),
    ("outings", "outing"),
    ("outing", "outing"),
    ("cannings", "canning"),
    ("canning", "canning"),
    ("howe", "howe"),
    ("proceed", "proceed"),
    ("exceed", "exceed"),
    ("succeed", "succeed"),
];

type W = Vec<char>;

fn is_vowel(c: char) -> bool {
    matches!(c, 'a' | 'e' | 'i' | 'o' | 'u')
}

/// Consonant flags for every position (NLTK `_consonant_flags`, equivalent to `_is_consonant`).
fn consonant_flags(w: &[char]) -> Vec<bool> {
    let mut f: Vec<bool> = Vec::with_capacity(w.len());
    for (i, &c) in w.iter().enumerate() {
        let v = if is_vowel(c) {
            false
        } else if c == 'y' {
            i == 0 || !f[i - 1]
        } else {
            true
        };
        f.push(v);
    }
    f
}

fn is_consonant(w: &[char], i: usize) -> bool {
    consonant_flags(&w[..=i])[i]
}

fn measure(w: &[char]) -> usize {
    let f = consonant_flags(w);
    f.windows(2).filter(|p| !p[0] && p[1]).count()
}

fn contains_vowel(w: &[char]) -> bool {
    consonant_flags(w).iter().any(|c| !c)
}

fn ends_double_consonant(w: &[char]) -> bool {
    let n = w.len();
    n >= 2 && w[n - 1] == w[n - 2] && is_consonant(w, n - 1)
}

fn ends_cvc(w: &[char]) -> bool {
    let n = w.len();
    (n >= 3
        && is_consonant(w, n - 3)
        && !is_consonant(w, n - 2)
        && is_consonant(w, n - 1)
        && !matches!(w[n - 1], 'w' | 'x' | 'y'))
        || (n == 2 && !is_consonant(w, 0) && is_consonant(w, 1))
}

fn ends_with(w: &[char], suffix: &str) -> bool {
    let s: Vec<char> = suffix.chars().collect();
    w.len() >= s.len() && w[w.len() - s.len()..] == s[..]
}

fn strip(w: &[char], suffix: &str) -> W {
    w[..w.len() - suffix.chars().count()].to_vec()
}

fn join(stem: &[char], rep: &str) -> W {
    let mut v = stem.to_vec();
    v.extend(rep.chars());
    v
}

/// A rule's applicability condition, evaluated on the stem left after removing the suffix.
type Cond<'a> = Option<&'a dyn Fn(&[char]) -> bool>;

/// NLTK `_apply_rule_list`: the first rule whose suffix matches decides (applied or not).
/// `*d` means "ends in a double consonant" (falling back to the literal suffix, as NLTK does).
fn apply_rules(w: &[char], rules: &[(&str, String, Cond<'_>)]) -> W {
    for (suffix, rep, cond) in rules {
        if *suffix == "*d" && ends_double_consonant(w) {
            let stem = &w[..w.len() - 2];
            return if cond.is_none_or(|c| c(stem)) {
                join(stem, rep)
            } else {
                w.to_vec()
            };
        }
        if ends_with(w, suffix) {
            let stem = strip(w, suffix);
            return if cond.is_none_or(|c| c(&stem)) {
                join(&stem, rep)
            } else {
                w.to_vec()
            };
        }
    }
    w.to_vec()
}

fn pos(w: &[char]) -> bool {
    measure(w) > 0
}

fn step1a(w: &[char]) -> W {
    if ends_with(w, "ies") && w.len() == 4 {
        return join(&strip(w, "ies"), "ie");
    }
    apply_rules(
        w,
        &[
            ("sses", "ss".into(), None),
            ("ies", "i".into(), None),
            ("ss", "ss".into(), None),
            ("s", "".into(), None),
        ],
    )
}

fn step1b(w: &[char]) -> W {
    if ends_with(w, "ied") {
        return if w.len() == 4 {
            join(&strip(w, "ied"), "ie")
        } else {
            join(&strip(w, "ied"), "i")
        };
    }
    if ends_with(w, "eed") {
        let stem = strip(w, "eed");
        return if measure(&stem) > 0 {
            join(&stem, "ee")
        } else {
            w.to_vec()
        };
    }
    let mut inter: Option<W> = None;
    for suffix in ["ed", "ing"] {
        if ends_with(w, suffix) {
            let s = strip(w, suffix);
            if contains_vowel(&s) {
                inter = Some(s);
                break;
            }
        }
    }
    let Some(inter) = inter else {
        return w.to_vec();
    };
    let last = *inter.last().unwrap_or(&'\0');
    let not_lsz = move |_: &[char]| !matches!(last, 'l' | 's' | 'z');
    let cvc_e = |s: &[char]| measure(s) == 1 && ends_cvc(s);
    apply_rules(
        &inter,
        &[
            ("at", "ate".into(), None),
            ("bl", "ble".into(), None),
            ("iz", "ize".into(), None),
            ("*d", last.to_string(), Some(&not_lsz)),
            ("", "e".into(), Some(&cvc_e)),
        ],
    )
}

fn step1c(w: &[char]) -> W {
    let cond = |s: &[char]| s.len() > 1 && is_consonant(s, s.len() - 1);
    apply_rules(w, &[("y", "i".into(), Some(&cond))])
}

fn step2(w: &[char]) -> W {
    if ends_with(w, "alli") && pos(&strip(w, "alli")) {
        return step2(&join(&strip(w, "alli"), "al"));
    }
    let p: &dyn Fn(&[char]) -> bool = &pos;
    let whole = w.to_vec();
    let logi = move |_: &[char]| whole.len() >= 3 && pos(&whole[..whole.len() - 3]);
    let rules: Vec<(&str, String, Cond<'_>)> = vec![
        ("ational", "ate".into(), Some(p)),
        ("tional", "tion".into(), Some(p)),
        ("enci", "ence".into(), Some(p)),
        ("anci", "ance".into(), Some(p)),
        ("izer", "ize".into(), Some(p)),
        ("bli", "ble".into(), Some(p)),
        ("alli", "al".into(), Some(p)),
        ("entli", "ent".into(), Some(p)),
        ("eli", "e".into(), Some(p)),
        ("ousli", "ous".into(), Some(p)),
        ("ization", "ize".into(), Some(p)),
        ("ation", "ate".into(), Some(p)),
        ("ator", "ate".into(), Some(p)),
        ("alism", "al".into(), Some(p)),
        ("iveness", "ive".into(), Some(p)),
        ("fulness", "ful".into(), Some(p)),
        ("ousness", "ous".into(), Some(p)),
        ("aliti", "al".into(), Some(p)),
        ("iviti", "ive".into(), Some(p)),
        ("biliti", "ble".into(), Some(p)),
        ("fulli", "ful".into(), Some(p)),
        ("logi", "log".into(), Some(&logi)),
    ];
    apply_rules(w, &rules)
}

fn step3(w: &[char]) -> W {
    let p: &dyn Fn(&[char]) -> bool = &pos;
    apply_rules(
        w,
        &[
            ("icate", "ic".into(), Some(p)),
            ("ative", "".into(), Some(p)),
            ("alize", "al".into(), Some(p)),
            ("iciti", "ic".into(), Some(p)),
            ("ical", "ic".into(), Some(p)),
            ("ful", "".into(), Some(p)),
            ("ness", "".into(), Some(p)),
        ],
    )
}

fn step4(w: &[char]) -> W {
    let g: &dyn Fn(&[char]) -> bool = &|s: &[char]| measure(s) > 1;
    let ion = |s: &[char]| measure(s) > 1 && matches!(s.last(), Some('s' | 't'));
    let mut rules: Vec<(&str, String, Cond<'_>)> = Vec::new();
    for suf in [
        "al", "ance", "ence", "er", "ic", "able", "ible", "ant", "ement", "ment", "ent",
    ] {
        rules.push((suf, String::new(), Some(g)));
    }
    rules.push(("ion", String::new(), Some(&ion)));
    for suf in ["ou", "ism", "ate", "iti", "ous", "ive", "ize"] {
        rules.push((suf, String::new(), Some(g)));
    }
    apply_rules(w, &rules)
}

fn step5a(w: &[char]) -> W {
    if ends_with(w, "e") {
        let stem = strip(w, "e");
        let m = measure(&stem);
        if m > 1 || (m == 1 && !ends_cvc(&stem)) {
            return stem;
        }
    }
    w.to_vec()
}

fn step5b(w: &[char]) -> W {
    let whole = w.to_vec();
    let cond = move |_: &[char]| !whole.is_empty() && measure(&whole[..whole.len() - 1]) > 1;
    apply_rules(w, &[("ll", "l".into(), Some(&cond))])
}

/// Stem one word exactly as `nltk.stem.PorterStemmer().stem(word)` does.
pub fn stem(word: &str) -> String {
    let lower = word.to_lowercase();
    if let Some((_, s)) = POOL.iter().find(|(k, _)| *k == lower) {
        return (*s).to_string();
    }
    if word.chars().count() <= 2 {
        return lower;
    }
    let mut w: W = lower.chars().collect();
    for step in [step1a, step1b, step1c, step2, step3, step4, step5a, step5b] {
        w = step(&w);
    }
    w.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::stem;

    #[test]
    fn paper_examples_and_nltk_extensions() {
        for (w, s) in [
            ("caresses", "caress"),
            ("ponies", "poni"),
            ("ties", "tie"),
            ("cats", "cat"),
            ("agreed", "agre"),
            ("hopping", "hop"),
            ("happy", "happi"),
            ("enjoy", "enjoy"),
            ("skies", "sky"),
            ("dying", "die"),
            ("relational", "relat"),
            ("generalization", "gener"),
            ("running", "run"),
            ("is", "is"),
            ("Caroline", "carolin"),
        ] {
            assert_eq!(stem(w), s, "stem({w})");
        }
    }
}
