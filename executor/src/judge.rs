//! LLM judges: the general 1 / 0.5 / 0 judge the reference scores every dataset with
//! (`judge.*.j2`), the LongMemEval yes/no judge (an opt-in deviation, `judge.longmemeval.*.j2`),
//! and the parsing of their verdicts.
//!
//! The reference reads a verdict as `float(json.loads(repair_json(reply))["score"])`, and
//! scores a reply it cannot read as 0. [`parse_judge`] reads the same replies the same way
//! (the last JSON object of the reply, repaired for the usual defects: code fences, prose
//! around it, single quotes, bare keys, trailing commas, a truncated end), but returns `None`
//! for a reply it cannot read, which the caller counts as an error instead of a score of 0.

use memskill_core::jsonfix::py_strip;
use memskill_core::{Message, PromptError, PromptSet, Query};
use serde::Serialize;

/// The reference's judge budget (`eval_utils.llm_judge`: `max_new_tokens = 1024`).
pub const JUDGE_MAX_TOKENS: u32 = 1024;
/// The reference judges at temperature 0.
pub const JUDGE_TEMPERATURE: f32 = 0.0;

/// Which judge prompt scores answers.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum JudgeStyle {
    /// The reference's judge for every dataset: a JSON object with `explanation` and a
    /// `score` of 1.0 / 0.5 / 0.0 (`judge.*.j2`).
    #[default]
    General,
    /// LongMemEval's own yes/no judge by question type (`judge.longmemeval.*.j2`), for
    /// LongMemEval only; a deviation from MemSkill, which uses the general judge.
    LongmemevalYesNo,
}

impl std::str::FromStr for JudgeStyle {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "general" => Ok(Self::General),
            "longmemeval-yes-no" => Ok(Self::LongmemevalYesNo),
            other => Err(format!(
                "unknown judge style {other:?}: expected general or longmemeval-yes-no"
            )),
        }
    }
}

/// What the general judge is shown as the gold answer (a benchmark's descriptor picks it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JudgeGold {
    /// Every gold answer, joined with ", " (the reference's `get_ground_truth`).
    AllJoined,
    /// As `AllJoined`, but category-3 questions show only the first answer's part before its
    /// first ';' (LoCoMo's open-domain answers list the reasoning after it).
    FirstClauseInCategory3,
}

/// The context of the judge templates.
#[derive(Debug, Clone, Serialize)]
pub struct JudgeContext<'a> {
    pub question: &'a str,
    /// The gold answer(s) as the reference shows them: several joined with ", "; LoCoMo
    /// category 3 keeps the part before the first ';'.
    pub ground_truth: String,
    pub answers: &'a [String],
    pub prediction: &'a str,
    pub category: &'a str,
    /// LongMemEval abstention question (id ending in `_abs`).
    pub abstention: bool,
}

/// The gold text a judge sees for `q` (the reference's `get_ground_truth`, lists joined
/// with ", ").
pub fn judge_ground_truth(gold: JudgeGold, q: &Query) -> String {
    if gold == JudgeGold::FirstClauseInCategory3 && q.category.trim() == "3" {
        let first = q.answers.first().map(String::as_str).unwrap_or("");
        return py_strip(first.split(';').next().unwrap_or("")).to_string();
    }
    q.answers.join(", ")
}

impl<'a> JudgeContext<'a> {
    pub fn new(gold: JudgeGold, q: &'a Query, prediction: &'a str) -> Self {
        JudgeContext {
            question: &q.question,
            ground_truth: judge_ground_truth(gold, q),
            answers: &q.answers,
            prediction,
            category: &q.category,
            abstention: q.id.ends_with("_abs"),
        }
    }
}

/// The general judge prompt (`judge.*.j2`).
pub fn judge_messages(
    prompts: &PromptSet,
    ctx: &JudgeContext<'_>,
) -> Result<Vec<Message>, PromptError> {
    prompts.render_chat("judge", ctx)
}

/// The LongMemEval yes/no judge prompt (`judge.longmemeval.*.j2`).
pub fn lme_judge_messages(
    prompts: &PromptSet,
    ctx: &JudgeContext<'_>,
) -> Result<Vec<Message>, PromptError> {
    prompts.render_chat("judge.longmemeval", ctx)
}

/// A JSON-ish value as far as the verdict needs it.
#[derive(Debug, Clone, PartialEq)]
enum JVal {
    Num(f64),
    Str(String),
    Bool(bool),
    Null,
    Other,
}

/// A forgiving reader of one JSON object: accepts single-quoted strings, bare keys, trailing
/// commas, `NaN` / `Infinity` / `.5`, and an end cut off in the middle (closed implicitly).
struct Lenient {
    c: Vec<char>,
    i: usize,
}

impl Lenient {
    fn new(s: &str) -> Self {
        Lenient {
            c: s.chars().collect(),
            i: 0,
        }
    }
    fn peek(&self) -> Option<char> {
        self.c.get(self.i).copied()
    }
    fn ws(&mut self) {
        while self.peek().is_some_and(char::is_whitespace) {
            self.i += 1;
        }
    }
    /// `{ ... }` -> its top-level keys and values (a later duplicate key wins).
    fn object(&mut self) -> Option<Vec<(String, JVal)>> {
        if self.peek() != Some('{') {
            return None;
        }
        self.i += 1;
        let mut out: Vec<(String, JVal)> = Vec::new();
        loop {
            self.ws();
            match self.peek() {
                None => return Some(out),
                Some('}') => {
                    self.i += 1;
                    return Some(out);
                }
                Some(',') => {
                    self.i += 1;
                    continue;
                }
                _ => {}
            }
            let key = match self.peek()? {
                q @ ('"' | '\'') => self.string(q),
                _ => {
                    let start = self.i;
                    while self
                        .peek()
                        .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '-')
                    {
                        self.i += 1;
                    }
                    if self.i == start {
                        return None;
                    }
                    self.c[start..self.i].iter().collect()
                }
            };
            self.ws();
            match self.peek() {
                Some(':') => self.i += 1,
                None => return Some(out),
                _ => return None,
            }
            self.ws();
            let v = if self.peek().is_none() {
                JVal::Null
            } else {
                self.value()?
            };
            out.retain(|(k, _)| *k != key);
            out.push((key, v));
            self.ws();
            match self.peek() {
                Some(',') => self.i += 1,
                Some('}') | None => {}
                _ => return None,
            }
        }
    }
    fn string(&mut self, quote: char) -> String {
        self.i += 1;
        let mut s = String::new();
        while let Some(c) = self.peek() {
            self.i += 1;
            if c == quote {
                return s;
            }
            if c == '\\' {
                match self.peek() {
                    Some('n') => s.push('\n'),
                    Some('t') => s.push('\t'),
                    Some(o) => s.push(o),
                    None => break,
                }
                self.i += 1;
                continue;
            }
            s.push(c);
        }
        s
    }
    fn array(&mut self) -> Option<()> {
        self.i += 1;
        loop {
            self.ws();
            match self.peek() {
                None => return Some(()),
                Some(']') => {
                    self.i += 1;
                    return Some(());
                }
                Some(',') => self.i += 1,
                _ => {
                    self.value()?;
                }
            }
        }
    }
    fn value(&mut self) -> Option<JVal> {
        match self.peek()? {
            q @ ('"' | '\'') => Some(JVal::Str(self.string(q))),
            '{' => self.object().map(|_| JVal::Other),
            '[' => self.array().map(|_| JVal::Other),
            _ => {
                let start = self.i;
                while self
                    .peek()
                    .is_some_and(|c| !matches!(c, ',' | '}' | ']') && !c.is_whitespace())
                {
                    self.i += 1;
                }
                let word: String = self.c[start..self.i].iter().collect();
                Some(match word.as_str() {
                    "true" | "True" => JVal::Bool(true),
                    "false" | "False" => JVal::Bool(false),
                    "null" | "None" => JVal::Null,
                    "NaN" => JVal::Num(f64::NAN),
                    "Infinity" => JVal::Num(f64::INFINITY),
                    "-Infinity" => JVal::Num(f64::NEG_INFINITY),
                    w => match json_number(w) {
                        Some(x) => JVal::Num(x),
                        None if w.is_empty() => return None,
                        None => JVal::Str(w.to_string()),
                    },
                })
            }
        }
    }
}

/// A JSON number, also with a missing leading zero (`.5`, `-.5`).
fn json_number(w: &str) -> Option<f64> {
    let ok = w.chars().all(|c| c.is_ascii_digit() || "+-.eE".contains(c))
        && w.chars().any(|c| c.is_ascii_digit());
    ok.then(|| w.parse::<f64>().ok()).flatten()
}

/// Python `float(str)` for the verdicts judges write.
fn py_float(s: &str) -> Option<f64> {
    let t = py_strip(s);
    let lower = t.to_ascii_lowercase();
    let body = lower.trim_start_matches(['+', '-']);
    if matches!(body, "nan" | "inf" | "infinity") {
        return t.parse::<f64>().ok();
    }
    if t.is_empty() || !t.chars().all(|c| c.is_ascii_digit() || "+-.eE".contains(c)) {
        return None;
    }
    t.parse::<f64>().ok()
}

/// Top-level `{...}` spans of `text` (balanced; braces inside single- or double-quoted
/// strings and escaped characters do not count); the last one may be
/// unterminated (it then runs to the end).
fn object_spans(chars: &[char]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        if chars[i] != '{' {
            i += 1;
            continue;
        }
        let start = i;
        let mut depth = 0i32;
        let mut quote: Option<char> = None;
        let mut end = chars.len();
        while i < chars.len() {
            let c = chars[i];
            if c == '\\' {
                i += 2;
                continue;
            }
            if let Some(q) = quote {
                if c == q {
                    quote = None;
                }
            } else {
                match c {
                    '"' | '\'' => quote = Some(c),
                    '{' => depth += 1,
                    '}' => {
                        depth -= 1;
                        if depth == 0 {
                            end = i + 1;
                            break;
                        }
                    }
                    _ => {}
                }
            }
            i += 1;
        }
        out.push((start, end));
        i = end;
    }
    out
}

/// The score of a general-judge reply, read as the reference reads it (the `score` field of
/// the reply's last JSON object, as a float); `None` when the reference could not read it
/// (no object, no `score` key, a score that is not a number): the caller counts an error.
pub fn parse_judge(text: &str) -> Option<f64> {
    let t = py_strip(text);
    if t.starts_with('[') {
        return None;
    }
    let chars: Vec<char> = t.chars().collect();
    let (start, end) = *object_spans(&chars).last()?;
    let obj: String = chars[start..end].iter().collect();
    let fields = Lenient::new(&obj).object()?;
    let (_, v) = fields.into_iter().rev().find(|(k, _)| k == "score")?;
    match v {
        JVal::Num(x) => Some(x),
        JVal::Bool(b) => Some(if b { 1.0 } else { 0.0 }),
        JVal::Str(s) => py_float(&s),
        JVal::Null | JVal::Other => None,
    }
}

/// Parse a yes/no judge reply: `Some(true)` for yes, `Some(false)` for no, `None` when neither
/// (or both) appear as the leading word.
pub fn parse_yes_no(text: &str) -> Option<bool> {
    let t = text
        .trim()
        .trim_start_matches(|c: char| !c.is_alphanumeric())
        .to_lowercase();
    let first: String = t.chars().take_while(|c| c.is_alphanumeric()).collect();
    match first.as_str() {
        "yes" => return Some(true),
        "no" => return Some(false),
        _ => {}
    }
    let words: Vec<String> = t
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(String::from)
        .collect();
    let yes = words.iter().any(|w| w == "yes");
    let no = words.iter().any(|w| w == "no");
    match (yes, no) {
        (true, false) => Some(true),
        (false, true) => Some(false),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(id: &str, cat: &str, answers: &[&str]) -> Query {
        Query {
            id: id.into(),
            question: "Q?".into(),
            answers: answers.iter().map(|s| s.to_string()).collect(),
            category: cat.into(),
            evidence: vec![],
            date: None,
        }
    }

    #[test]
    fn verdicts_are_read_as_the_reference_reads_them() {
        assert_eq!(
            parse_judge("{\"explanation\": \"ok\", \"score\": 1.0}"),
            Some(1.0)
        );
        assert_eq!(
            parse_judge("```json\n{\"score\": 0.5, \"explanation\": \"{partial}\"}\n```"),
            Some(0.5)
        );
        assert_eq!(parse_judge("Here: {'score': 1}"), Some(1.0));
        assert_eq!(parse_judge("{score: 0.5,}"), Some(0.5));
        assert_eq!(parse_judge("{\"score\": \"0.5\"}"), Some(0.5));
        assert_eq!(parse_judge("{\"score\": .5}"), Some(0.5));
        assert_eq!(parse_judge("{\"score\": 0.7}"), Some(0.7));
        assert_eq!(parse_judge("{\"score\": true}"), Some(1.0));
        // the last object counts
        assert_eq!(
            parse_judge("{\"score\": 1.0} and {\"score\": 0.0}"),
            Some(0.0)
        );
        // cut off after the score: still read
        assert_eq!(
            parse_judge("{\"score\": 1.0, \"explanation\": \"the answ"),
            Some(1.0)
        );
    }

    #[test]
    fn unreadable_verdicts_are_errors_not_zero() {
        for bad in [
            "",
            "score: 1",
            "I think it's right",
            "API Request Error",
            "{\"Score\": 1}",
            "{\"explanation\": \"cut off before the sc",
            "{\"score\": null}",
            "{\"score\": \"high\"}",
            "[{\"score\": 1}]",
            "{\"a\": {\"score\": 1}}",
            "The verdict {\"score\": 1}. Thanks {x}",
        ] {
            assert_eq!(parse_judge(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn judge_prompt_keeps_the_explanation_field_and_the_strict_rubric() {
        let set = PromptSet::with_defaults(crate::PROMPT_TEMPLATES).unwrap();
        let query = q("x", "3", &["London; Paris"]);
        let ctx = JudgeContext::new(JudgeGold::FirstClauseInCategory3, &query, "London");
        assert_eq!(ctx.ground_truth, "London");
        assert_eq!(
            judge_ground_truth(JudgeGold::AllJoined, &query),
            "London; Paris"
        );
        let m = judge_messages(&set, &ctx).unwrap();
        assert_eq!(m.len(), 1);
        let u = &m[0].content;
        assert!(u.contains("\"explanation\""), "{u}");
        assert!(u.contains("\"score\""), "{u}");
        assert!(u.contains("[Reference Answers]\nLondon\n"), "{u}");
        assert!(u.contains("[Answer to Grade]\nLondon\n"), "{u}");
        let hp = q("h", "bridge", &["a", "b"]);
        assert_eq!(judge_ground_truth(JudgeGold::AllJoined, &hp), "a, b");
        assert_eq!(JUDGE_MAX_TOKENS, 1024);
    }

    #[test]
    fn longmemeval_yes_no_judge_is_available() {
        let set = PromptSet::with_defaults(crate::PROMPT_TEMPLATES).unwrap();
        let query = q("q1", "temporal-reasoning", &["18 days"]);
        let m = lme_judge_messages(
            &set,
            &JudgeContext::new(JudgeGold::AllJoined, &query, "19 days"),
        )
        .unwrap();
        assert!(m[0].content.contains("off-by-one"));
        assert!(m[0].content.ends_with("Answer yes or no only."));
        let query = q("q1_abs", "multi-session", &["never said"]);
        let m = lme_judge_messages(&set, &JudgeContext::new(JudgeGold::AllJoined, &query, "x"))
            .unwrap();
        assert!(m[0].content.contains("unanswerable"));
        assert_eq!(parse_yes_no("Yes."), Some(true));
        assert_eq!(parse_yes_no("**No**, because"), Some(false));
        assert_eq!(parse_yes_no("maybe"), None);
        assert_eq!(
            "longmemeval-yes-no".parse::<JudgeStyle>(),
            Ok(JudgeStyle::LongmemevalYesNo)
        );
    }
}
