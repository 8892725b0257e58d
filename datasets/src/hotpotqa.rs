//! HotpotQA, in two schemas (detected per record). The file may be a JSON array, one JSON
//! object, or JSON Lines.
//!
//! 1. **Long-context** (what the reference evaluates: `eval_50.json` / `eval_100.json` /
//!    `eval_200.json` of HotpotQA-Modified, 50 / 100 / 200 documents per question; LongBench's
//!    `hotpotqa.jsonl` has the same fields): `{input: string (the question), answers:
//!    [string|number] | string | number, context: string | [string] | [[title, [sentence]]],
//!    num_docs?: integer, index?: integer|string, _id? | id?: string, ...}` (other keys are
//!    ignored). By default (as the reference) the whole `context` is ONE text: one undated
//!    [`Session`] holding one turn `C1`, so `fixed-tokens` windows run over the whole
//!    concatenated context and `full-session` gives it whole; an array context is joined with
//!    blank lines first. With [`HotpotOptions::split_documents`] (our option, not the
//!    reference's) a string context is instead split into documents at `Passage N:` lines and
//!    every document becomes a session. A record with an empty question has no query (the
//!    reference skips it).
//! 2. **Classic dev-distractor** (`hotpot_dev_distractor_v1.json`, our option): `{_id: string,
//!    question: string, answer: string|number, type?: string, level?: string,
//!    supporting_facts: [[title, integer]], context: [[title, [sentence]]]}`; always one session
//!    per document.
//!
//! A document session holds one turn with id `D{n}` (1-based) and text `{title}\n{body}` (body
//! only when there is no title). The sample id is `hotpotqa_{index}` when the record has an
//! `index` (the reference's id), else `_id`/`id`, else `hotpotqa_{record number}`; the single
//! query is `{sample_id}:q0`, its category the classic `type` (or ""), its evidence the turn
//! ids of the documents named in `supporting_facts`.

use std::path::Path;

use memskill_core::{Query, Sample, Session, Turn};
use serde_json::Value;

use crate::json::{child_path, get, index_path, opt_str, req_text, require, Node};
use crate::DatasetError;

/// Options of [`load_hotpotqa_with`].
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct HotpotOptions {
    /// Long-context records: one session per `Passage N:` document instead of the whole
    /// context as one text (the reference). Not the reference's behaviour.
    pub split_documents: bool,
}

/// Loads a HotpotQA file (either schema) as samples (spans left empty), long-context records
/// as one text each (the reference).
pub fn load_hotpotqa(path: &Path) -> Result<Vec<Sample>, DatasetError> {
    load_hotpotqa_with(path, &HotpotOptions::default())
}

/// [`load_hotpotqa`] with options.
pub fn load_hotpotqa_with(path: &Path, opts: &HotpotOptions) -> Result<Vec<Sample>, DatasetError> {
    let records = crate::json::parse_records(path)?;
    hotpot_from_records(&records, &path.display().to_string(), opts)
}

/// [`load_hotpotqa_with`] of an in-memory document (an array of records, or one record).
pub fn hotpotqa_from_json(
    root: &Value,
    file: &str,
    opts: &HotpotOptions,
) -> Result<Vec<Sample>, DatasetError> {
    hotpot_from_records(&crate::json::records_of(root), file, opts)
}

fn hotpot_from_records(
    records: &[(String, Value)],
    file: &str,
    opts: &HotpotOptions,
) -> Result<Vec<Sample>, DatasetError> {
    let file = file.to_string();
    let mut out = Vec::with_capacity(records.len());
    for (idx, (p, v)) in records.iter().enumerate() {
        let node = Node::new(v, &file, p);
        node.object()?;
        let sample = if get(&node, "input")?.is_some() {
            parse_longbench(node, idx, opts)?
        } else {
            parse_classic(node, idx)?
        };
        out.push(sample);
    }
    crate::json::check_unique_ids(
        &file,
        records.iter().zip(&out).map(|((p, _), s)| {
            (
                if p.is_empty() {
                    "(record)".to_string()
                } else {
                    p.clone()
                },
                s.id.as_str(),
            )
        }),
    )?;
    Ok(out)
}

fn sample_id(node: &Node<'_>, idx: usize) -> Result<String, DatasetError> {
    if get(node, "index")?.is_some() {
        return Ok(format!("hotpotqa_{}", req_text(node, "index")?));
    }
    for key in ["_id", "id"] {
        if get(node, key)?.is_some() {
            return req_text(node, key);
        }
    }
    Ok(format!("hotpotqa_{idx}"))
}

/// Splits a LongBench context string into documents at `Passage N:` lines.
pub fn split_passages(context: &str) -> Vec<String> {
    let mut docs: Vec<String> = Vec::new();
    let mut cur: Option<String> = None;
    let mut preamble = String::new();
    for line in context.lines() {
        let t = line.trim();
        let is_marker = t
            .strip_prefix("Passage ")
            .and_then(|r| r.strip_suffix(':'))
            .is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()));
        if is_marker {
            if let Some(d) = cur.take() {
                docs.push(d);
            }
            cur = Some(String::new());
        } else {
            let buf = cur.as_mut().unwrap_or(&mut preamble);
            if !buf.is_empty() {
                buf.push('\n');
            }
            buf.push_str(line);
        }
    }
    if let Some(d) = cur {
        docs.push(d);
    }
    let mut docs: Vec<String> = docs.into_iter().map(|d| d.trim().to_string()).collect();
    if !preamble.trim().is_empty() {
        docs.insert(0, preamble.trim().to_string());
    }
    docs.retain(|d| !d.is_empty());
    docs
}

fn doc_sessions(docs: Vec<(Option<String>, String)>) -> Vec<Session> {
    docs.into_iter()
        .enumerate()
        .map(|(i, (title, body))| Session {
            index: i + 1,
            date: None,
            turns: vec![Turn {
                id: format!("D{}", i + 1),
                speaker: String::new(),
                text: match title {
                    Some(t) => format!("{t}\n{body}"),
                    None => body,
                },
            }],
        })
        .collect()
}

/// Parses a `[title, [sentence, ...]]` (or `[title, text]`) document.
fn titled_doc(n: Node<'_>) -> Result<(String, String), DatasetError> {
    let pair = n.array()?;
    if pair.len() != 2 {
        return Err(n.invalid(format!(
            "expected [title, sentences], found an array of {}",
            pair.len()
        )));
    }
    let tp = index_path(n.path, 0);
    let title = Node::new(&pair[0], n.file, &tp).text()?;
    let bp = index_path(n.path, 1);
    let bn = Node::new(&pair[1], n.file, &bp);
    let body = match &pair[1] {
        Value::String(s) => s.clone(),
        _ => {
            let mut body = String::new();
            for (k, s) in bn.array()?.iter().enumerate() {
                let sp = index_path(bn.path, k);
                body.push_str(Node::new(s, n.file, &sp).str()?);
            }
            body
        }
    };
    Ok((title, body.trim().to_string()))
}

fn parse_longbench(
    node: Node<'_>,
    idx: usize,
    opts: &HotpotOptions,
) -> Result<Sample, DatasetError> {
    let id = sample_id(&node, idx)?;
    let question = req_text(&node, "input")?;
    let ap = child_path(node.path, "answers");
    let an = Node::new(require(&node, "answers")?, node.file, &ap);
    let answers = match an.v {
        Value::Array(items) => {
            let mut a = Vec::with_capacity(items.len());
            for (k, v) in items.iter().enumerate() {
                let p = index_path(an.path, k);
                a.push(Node::new(v, node.file, &p).text()?);
            }
            a
        }
        _ => vec![an.text().map_err(|_| an.wrong("array of strings"))?],
    };
    if let Some(v) = get(&node, "num_docs")? {
        let p = child_path(node.path, "num_docs");
        Node::new(v, node.file, &p).int()?;
    }
    let cp = child_path(node.path, "context");
    let cn = Node::new(require(&node, "context")?, node.file, &cp);
    let docs: Vec<(Option<String>, String)> = match cn.v {
        Value::String(s) if !opts.split_documents => {
            return Ok(whole_context(id, s.clone(), question, answers));
        }
        Value::String(s) => split_passages(s).into_iter().map(|d| (None, d)).collect(),
        Value::Array(items) => {
            let mut d = Vec::with_capacity(items.len());
            for (k, v) in items.iter().enumerate() {
                let p = index_path(cn.path, k);
                let n = Node::new(v, node.file, &p);
                match v {
                    Value::String(s) => d.push((None, s.trim().to_string())),
                    Value::Array(_) => {
                        let (t, b) = titled_doc(n)?;
                        d.push((Some(t), b));
                    }
                    _ => return Err(n.wrong("string or [title, sentences]")),
                }
            }
            d
        }
        _ => return Err(cn.wrong("string or array")),
    };
    if !opts.split_documents {
        let text = docs
            .into_iter()
            .map(|(t, b)| match t {
                Some(t) => format!("{t}\n{b}"),
                None => b,
            })
            .collect::<Vec<_>>()
            .join("\n\n");
        return Ok(whole_context(id, text, question, answers));
    }
    Ok(one_question(
        id,
        docs,
        question,
        answers,
        String::new(),
        Vec::new(),
    ))
}

fn parse_classic(node: Node<'_>, idx: usize) -> Result<Sample, DatasetError> {
    let id = sample_id(&node, idx)?;
    let question = req_text(&node, "question")?;
    let answer = req_text(&node, "answer")?;
    let qtype = opt_str(&node, "type")?.unwrap_or_default();
    opt_str(&node, "level")?;
    let cp = child_path(node.path, "context");
    let cn = Node::new(require(&node, "context")?, node.file, &cp);
    let mut docs = Vec::new();
    for (k, v) in cn.array()?.iter().enumerate() {
        let p = index_path(cn.path, k);
        let (t, b) = titled_doc(Node::new(v, node.file, &p))?;
        docs.push((Some(t), b));
    }
    let mut evidence: Vec<String> = Vec::new();
    if let Some(sf) = get(&node, "supporting_facts")? {
        let sp = child_path(node.path, "supporting_facts");
        let sn = Node::new(sf, node.file, &sp);
        for (k, f) in sn.array()?.iter().enumerate() {
            let fp = index_path(sn.path, k);
            let fnode = Node::new(f, node.file, &fp);
            let pair = fnode.array()?;
            if pair.len() != 2 {
                return Err(fnode.invalid("expected [title, sentence index]"));
            }
            let tp = index_path(fnode.path, 0);
            let title = Node::new(&pair[0], node.file, &tp).str()?;
            let ip = index_path(fnode.path, 1);
            Node::new(&pair[1], node.file, &ip).int()?;
            if let Some(d) = docs.iter().position(|(t, _)| t.as_deref() == Some(title)) {
                let tid = format!("D{}", d + 1);
                if !evidence.contains(&tid) {
                    evidence.push(tid);
                }
            }
        }
    }
    Ok(one_question(
        id,
        docs,
        question,
        vec![answer],
        qtype,
        evidence,
    ))
}

/// A long-context sample as the reference reads it: the whole context as one session with one
/// turn (`C1`; none when the context is empty), and its one question (none when empty).
fn whole_context(id: String, context: String, question: String, answers: Vec<String>) -> Sample {
    let sessions = if context.is_empty() {
        Vec::new()
    } else {
        vec![Session {
            index: 1,
            date: None,
            turns: vec![Turn {
                id: "C1".to_string(),
                speaker: String::new(),
                text: context,
            }],
        }]
    };
    let mut s = one_question(id, Vec::new(), question, answers, String::new(), Vec::new());
    s.sessions = sessions;
    if s.queries[0].question.is_empty() {
        s.queries.clear();
    }
    s
}

/// A HotpotQA sample: its documents as sessions and its one question (`{id}:q0`).
fn one_question(
    id: String,
    docs: Vec<(Option<String>, String)>,
    question: String,
    answers: Vec<String>,
    category: String,
    evidence: Vec<String>,
) -> Sample {
    Sample {
        id: id.clone(),
        dataset: "hotpotqa".to_string(),
        sessions: doc_sessions(docs),
        spans: Vec::new(),
        queries: vec![Query {
            id: format!("{id}:q0"),
            question,
            answers,
            category,
            evidence,
            date: None,
        }],
    }
}
