//! LongMemEval (`longmemeval_s_cleaned.json`, which the reference reads; `longmemeval_s.json` / `_m` / `_oracle` have the same schema).
//!
//! Accepted schema: a JSON array (or JSON Lines) of questions
//! `{question_id: string, question_type: string, question: string, answer: string|number,
//! question_date?: string, haystack_dates: [string], haystack_session_ids?: [string],
//! haystack_sessions: [[{role: string, content: string, has_answer?: bool}]], answer_session_ids?: [..]}`.
//! One [`Sample`] per question (id = `question_id`); session `i` (1-based) gets date
//! `haystack_dates[i-1]`; turn ids are `S{i}:T{j}` (both 1-based); turns with `has_answer: true`
//! become the query's evidence. `_abs` (abstention) questions are skipped unless
//! [`LmeOptions::include_abstention`].
//!
//! Splits: the file `longmemeval_s_splits.json` is `{"train": [..], "val": [..], "test": [..]}`
//! whose entries are 0-based indices into the question list (as in the MemSkill reference code);
//! question-id strings are accepted too. See [`load_lme_splits`] and [`LmeOptions::only`].

use std::collections::HashMap;
use std::path::Path;

use memskill_core::{Query, Sample, Session, Turn};
use serde_json::Value;

use crate::json::{
    child_path, get, index_path, opt_str, req_str, req_text, require, str_list, Node,
};
use crate::DatasetError;

/// Options of [`load_longmemeval`].
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct LmeOptions {
    /// Keep `_abs` (abstention) questions.
    pub include_abstention: bool,
    /// Keep only these questions, in this order: each entry is the decimal 0-based index of
    /// the question in the file (what the splits file holds) or a `question_id`.
    pub only: Option<Vec<String>>,
}

/// Renders a LongMemEval turn as the reference does: `{role}: {content}`.
pub fn render_lme_turn(role: &str, content: &str) -> String {
    format!("{role}: {content}")
}

/// Which questions a split selects, as the reference does: `entries` (a split of the splits
/// file) are 0-based indices into the question list, in the file's order (a decimal entry is
/// always an index, and one past the end is skipped like the reference's `if i < len(data)`;
/// any other entry is taken as a `question_id`); `None` selects every question in file order. Then
/// `_abs` (abstention) questions are dropped unless `include_abstention` (the reference skips
/// them when building memories and answering). Returns positions in `question_ids`.
pub fn select_lme(
    question_ids: &[String],
    entries: Option<&[String]>,
    include_abstention: bool,
) -> Vec<usize> {
    let picked: Vec<usize> = match entries {
        None => (0..question_ids.len()).collect(),
        Some(entries) => {
            let by_id: HashMap<&str, usize> = question_ids
                .iter()
                .enumerate()
                .rev()
                .map(|(i, q)| (q.as_str(), i))
                .collect();
            entries
                .iter()
                .filter_map(|e| match e.parse::<usize>() {
                    Ok(i) => (i < question_ids.len()).then_some(i),
                    Err(_) => by_id.get(e.as_str()).copied(),
                })
                .collect()
        }
    };
    picked
        .into_iter()
        .filter(|&i| include_abstention || !question_ids[i].ends_with("_abs"))
        .collect()
}

/// Loads LongMemEval questions as samples (spans left empty): those selected by
/// [`select_lme`] with `opts.only` and `opts.include_abstention`, in that order.
pub fn load_longmemeval(path: &Path, opts: &LmeOptions) -> Result<Vec<Sample>, DatasetError> {
    let records = crate::json::parse_records(path)?;
    lme_from_records(&records, &path.display().to_string(), opts)
}

/// [`load_longmemeval`] of an in-memory document (an array of questions).
pub fn longmemeval_from_json(
    root: &Value,
    file: &str,
    opts: &LmeOptions,
) -> Result<Vec<Sample>, DatasetError> {
    lme_from_records(&crate::json::records_of(root), file, opts)
}

fn lme_from_records(
    records: &[(String, Value)],
    file: &str,
    opts: &LmeOptions,
) -> Result<Vec<Sample>, DatasetError> {
    let file = file.to_string();
    let mut qids = Vec::with_capacity(records.len());
    for (p, v) in records {
        let node = Node::new(v, &file, p);
        node.object()?;
        qids.push(req_text(&node, "question_id")?);
    }
    crate::json::check_unique_ids(
        &file,
        records
            .iter()
            .zip(&qids)
            .map(|((p, _), id)| (child_path(p, "question_id"), id.as_str())),
    )?;
    let picked = select_lme(&qids, opts.only.as_deref(), opts.include_abstention);
    let mut out = Vec::with_capacity(picked.len());
    for i in picked {
        let (p, v) = &records[i];
        out.push(parse_question(Node::new(v, &file, p), qids[i].clone())?);
    }
    Ok(out)
}

fn parse_question(node: Node<'_>, qid: String) -> Result<Sample, DatasetError> {
    let question = req_text(&node, "question")?;
    let qtype = req_str(&node, "question_type")?;
    let answer = req_text(&node, "answer")?;
    let qdate = opt_str(&node, "question_date")?;

    let sp = child_path(node.path, "haystack_sessions");
    let sessions_n = Node::new(require(&node, "haystack_sessions")?, node.file, &sp);
    let sessions_v = sessions_n.array()?;
    let dates = match get(&node, "haystack_dates")? {
        None => vec![],
        Some(v) => {
            let dp = child_path(node.path, "haystack_dates");
            let d = str_list(&Node::new(v, node.file, &dp))?;
            if d.len() != sessions_v.len() {
                return Err(Node::new(v, node.file, &dp).invalid(format!(
                    "has {} dates for {} haystack_sessions",
                    d.len(),
                    sessions_v.len()
                )));
            }
            d
        }
    };

    let mut sessions = Vec::with_capacity(sessions_v.len());
    let mut evidence = Vec::new();
    for (i, s) in sessions_v.iter().enumerate() {
        let spp = index_path(sessions_n.path, i);
        let sn = Node::new(s, node.file, &spp);
        let mut turns = Vec::new();
        for (j, t) in sn.array()?.iter().enumerate() {
            let tp = index_path(sn.path, j);
            let tn = Node::new(t, node.file, &tp);
            tn.object()?;
            let role = req_str(&tn, "role")?;
            let content = req_text(&tn, "content")?;
            let id = format!("S{}:T{}", i + 1, j + 1);
            if let Some(h) = get(&tn, "has_answer")? {
                let hp = child_path(tn.path, "has_answer");
                let h = h
                    .as_bool()
                    .ok_or_else(|| Node::new(h, node.file, &hp).wrong("boolean"))?;
                if h {
                    evidence.push(id.clone());
                }
            }
            turns.push(Turn {
                id,
                text: render_lme_turn(&role, &content),
                speaker: role,
            });
        }
        sessions.push(Session {
            index: i + 1,
            date: dates.get(i).cloned(),
            turns,
        });
    }

    Ok(Sample {
        id: qid.clone(),
        dataset: "longmemeval".to_string(),
        sessions,
        spans: Vec::new(),
        queries: vec![Query {
            id: format!("{qid}:q0"),
            question,
            answers: vec![answer],
            category: qtype,
            evidence,
            date: qdate,
        }],
    })
}

/// Reads a LongMemEval splits file `{split name: [index or question_id, ...]}`; integer
/// entries are returned as their decimal text (0-based question indices).
pub fn load_lme_splits(path: &Path) -> Result<HashMap<String, Vec<String>>, DatasetError> {
    let root = crate::json::parse_document(path)?;
    lme_splits_from_json(&root, &path.display().to_string())
}

/// [`load_lme_splits`] of an in-memory document.
pub fn lme_splits_from_json(
    root: &Value,
    file: &str,
) -> Result<HashMap<String, Vec<String>>, DatasetError> {
    let file = file.to_string();
    let top = Node::new(root, &file, "");
    let mut out = HashMap::new();
    for (name, v) in top.object()? {
        let p = name.clone();
        let list = Node::new(v, &file, &p);
        let mut ids = Vec::new();
        for (i, e) in list.array()?.iter().enumerate() {
            let ep = index_path(&p, i);
            let en = Node::new(e, &file, &ep);
            match e {
                Value::String(s) => ids.push(s.clone()),
                Value::Number(_) => {
                    let n = en.int()?;
                    if n < 0 {
                        return Err(en.invalid("negative index"));
                    }
                    ids.push(n.to_string());
                }
                _ => return Err(en.wrong("integer index or question id string")),
            }
        }
        out.insert(name.clone(), ids);
    }
    Ok(out)
}
