//! Activation cases (`memskill skills eval --cases FILE`, `memskill data cases`): JSON Lines,
//! one span per line with the skill that should be selected on it, or `null` for a negative
//! case (no skill should fire):
//!
//! ```text
//! {"sample": "ctx-0", "span": 2, "expected": "track-places"}
//! {"text": "Sam said, \"Sounds good.\"", "expected": null}
//! ```
//!
//! A case names a span of the evaluated slice (`sample` + `span`, its position in the
//! sample) or gives a span's `text`, which is replayed as a one-span sample of its own.
//! Parsing and writing are pure; the command reads and writes the file.

use anyhow::{bail, Result};
use memskill_core::{Sample, Span};
use serde_json::{Map, Value};

use crate::gate::ExpectedTriggers;

/// Where a case's span is.
#[derive(Debug, Clone, PartialEq)]
pub enum CaseSpan {
    /// A span of a sample of the slice.
    Sample { sample: String, span: usize },
    /// A span text of its own.
    Text(String),
}

/// One activation case.
#[derive(Debug, Clone, PartialEq)]
pub struct Case {
    /// 1-based line in its file.
    pub line: usize,
    pub span: CaseSpan,
    /// The skill that should be selected (`None`: a negative case).
    pub expected: Option<String>,
}

/// Parse a cases file's text (`origin` names it in errors).
pub fn parse(text: &str, origin: &str) -> Result<Vec<Case>> {
    let mut out = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        if raw.trim().is_empty() {
            continue;
        }
        let at = |field: &str| format!("{origin}:{line}: `{field}`");
        let v: Value = serde_json::from_str(raw)
            .map_err(|e| anyhow::anyhow!("{origin}:{line}: not a JSON object: {e}"))?;
        let Value::Object(o) = v else {
            bail!("{origin}:{line}: not a JSON object");
        };
        for k in o.keys() {
            if !["sample", "span", "text", "expected"].contains(&k.as_str()) {
                bail!(
                    "{origin}:{line}: unknown field `{k}` (expected sample + span or text, and expected)"
                );
            }
        }
        let expected = match o.get("expected") {
            None => bail!(
                "{}: missing (a skill name, or null for a negative case)",
                at("expected")
            ),
            Some(Value::Null) => None,
            Some(Value::String(s)) if !s.trim().is_empty() => Some(s.clone()),
            Some(_) => bail!("{}: must be a skill name or null", at("expected")),
        };
        let span = span_of(&o, &at)?;
        out.push(Case {
            line,
            span,
            expected,
        });
    }
    if out.is_empty() {
        bail!("{origin}: no cases");
    }
    Ok(out)
}

fn span_of(o: &Map<String, Value>, at: &dyn Fn(&str) -> String) -> Result<CaseSpan> {
    match (o.get("sample"), o.get("span"), o.get("text")) {
        (Some(Value::String(s)), Some(n), None) => {
            let Some(span) = n.as_u64() else {
                bail!("{}: must be a span index (0, 1, ...)", at("span"));
            };
            Ok(CaseSpan::Sample {
                sample: s.clone(),
                span: span as usize,
            })
        }
        (None, None, Some(Value::String(t))) if !t.trim().is_empty() => {
            Ok(CaseSpan::Text(t.clone()))
        }
        (Some(_), Some(_), None) => bail!("{}: must be a sample id (string)", at("sample")),
        (None, None, Some(_)) => bail!("{}: must be a non-empty string", at("text")),
        _ => bail!(
            "{}: a case has either `sample` and `span`, or `text`",
            at("sample")
        ),
    }
}

/// The expected triggers of `cases` over `samples`, plus one-span samples for the text
/// cases (ids `case-<line>`). A case naming a sample or span not in `samples` is an error.
pub fn resolve(
    cases: &[Case],
    samples: &[Sample],
    origin: &str,
) -> Result<(ExpectedTriggers, Vec<Sample>)> {
    let mut expected = ExpectedTriggers::new();
    let mut extra = Vec::new();
    for c in cases {
        match &c.span {
            CaseSpan::Sample { sample, span } => {
                let Some(s) = samples.iter().find(|s| &s.id == sample) else {
                    bail!(
                        "{origin}:{}: `sample`: `{sample}` is not in the evaluated slice",
                        c.line
                    );
                };
                if *span >= s.spans.len() {
                    bail!(
                        "{origin}:{}: `span`: sample `{sample}` has {} spans, no span {span}",
                        c.line,
                        s.spans.len()
                    );
                }
                if expected
                    .insert((sample.clone(), *span), c.expected.clone())
                    .is_some()
                {
                    bail!(
                        "{origin}:{}: span {span} of sample `{sample}` already has a case",
                        c.line
                    );
                }
            }
            CaseSpan::Text(text) => {
                let id = format!("case-{}", c.line);
                extra.push(Sample {
                    id: id.clone(),
                    dataset: "cases".into(),
                    sessions: Vec::new(),
                    spans: vec![Span {
                        id: format!("{id}:0"),
                        index: 0,
                        session: None,
                        date: None,
                        turn_ids: Vec::new(),
                        text: text.clone(),
                    }],
                    queries: Vec::new(),
                });
                expected.insert((id, 0), c.expected.clone());
            }
        }
    }
    Ok((expected, extra))
}

/// A cases file: every span of `expected` (in order), then `negatives` as text cases with
/// no expected skill.
pub fn render(expected: &ExpectedTriggers, samples: &[Sample], negatives: &[String]) -> String {
    let mut out = String::new();
    for s in samples {
        for j in 0..s.spans.len() {
            if let Some(want) = expected.get(&(s.id.clone(), j)) {
                let v = serde_json::json!({"sample": s.id, "span": j, "expected": want});
                out.push_str(&v.to_string());
                out.push('\n');
            }
        }
    }
    for t in negatives {
        let v = serde_json::json!({"text": t, "expected": Value::Null});
        out.push_str(&v.to_string());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cases_round_trip_and_resolve_against_the_slice() {
        let samples = crate::synthetic::contextual::dataset(2, 3, 1);
        let expected = crate::synthetic::expected_triggers(&samples);
        let text = render(&expected, &samples, &["Sam said, \"Oh, nice.\"".into()]);
        assert_eq!(text.lines().count(), 7);
        let cases = parse(&text, "c.jsonl").unwrap();
        let (back, extra) = resolve(&cases, &samples, "c.jsonl").unwrap();
        assert_eq!(extra.len(), 1);
        assert_eq!(extra[0].spans[0].text, "Sam said, \"Oh, nice.\"");
        assert_eq!(back.get(&("case-7".to_string(), 0)), Some(&None));
        for (k, v) in &expected {
            assert_eq!(back.get(k), Some(v));
        }
    }

    #[test]
    fn bad_cases_name_the_file_line_and_field() {
        let samples = crate::synthetic::contextual::dataset(1, 2, 1);
        let err = |t: &str| match parse(t, "c.jsonl") {
            Err(e) => e.to_string(),
            Ok(c) => resolve(&c, &samples, "c.jsonl").unwrap_err().to_string(),
        };
        assert!(
            err("{\"sample\": \"ctx-0\", \"span\": 0}").contains("c.jsonl:1: `expected`: missing")
        );
        assert!(err("\n{\"text\": \"hi\", \"expected\": 3}").contains("c.jsonl:2: `expected`"));
        assert!(
            err("{\"sample\": \"ctx-0\", \"span\": -1, \"expected\": null}").contains("`span`")
        );
        assert!(
            err("{\"text\": \"hi\", \"sample\": \"x\", \"expected\": null}").contains("either")
        );
        assert!(err("{\"txt\": \"hi\", \"expected\": null}").contains("unknown field `txt`"));
        assert!(err("[1]").contains("not a JSON object"));
        assert!(err("").contains("no cases"));
        assert!(
            err("{\"sample\": \"ctx-9\", \"span\": 0, \"expected\": null}")
                .contains("`ctx-9` is not in the evaluated slice")
        );
        assert!(
            err("{\"sample\": \"ctx-0\", \"span\": 5, \"expected\": null}")
                .contains("has 2 spans, no span 5")
        );
        let twice = "{\"sample\": \"ctx-0\", \"span\": 1, \"expected\": null}\n\
                     {\"sample\": \"ctx-0\", \"span\": 1, \"expected\": \"track-dates\"}";
        assert!(err(twice).contains("c.jsonl:2: span 1 of sample `ctx-0` already has a case"));
    }
}
