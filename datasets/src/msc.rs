//! MSC-Self-Instruct (`msc_self_instruct.jsonl`, Hugging Face `MemGPT/MSC-Self-Instruct`): the
//! Deep Memory Retrieval (DMR) task of MemGPT, built on Multi-Session Chat (MSC). Each record
//! is a conversation of several earlier sessions and a current one, plus one question about the
//! earlier sessions and its short answer.
//!
//! Accepted schema: JSON Lines (or one JSON array) of records
//! `{previous_dialogs: [{dialog: [turn], time_back?: string, time_num?: integer,
//! time_unit?: string, personas?: [[string]]}], dialog: [turn],
//! self_instruct: {A: string|number, B: string}, metadata?: .., personas?: ..,
//! init_personas?: .., personas_update1?: .., personas_update2?: .., summary_speaker_1?: ..,
//! summary_speaker_2?: ..}` with turns `{text: string, id?: string}`.
//! `self_instruct.B` is the question, `self_instruct.A` its gold answer. The persona and
//! summary keys are ignored (they restate the conversation; the memory must come from the
//! dialogues), and so is `metadata` (the source record's ids, `initial_data_id`, ...), in
//! whatever shape: nothing reads it, so nothing checks it.
//!
//! One [`Sample`] per record, id `msc-{i}` (`i` the 0-based record index: the file has no id
//! of its own that is unique). Sessions are the previous dialogues in file order (1-based),
//! then the current `dialog`; a previous session's date is its `time_back` text (e.g.
//! `7 days 2 hours ago`). A turn's speaker is its `id`, else `Speaker 1` / `Speaker 2`
//! alternating from the session's first turn; it is rendered `{speaker}: {text}` with id
//! `S{session}:T{turn}` (both 1-based). The query is `{sample_id}:q0`, category `dmr`.

use std::path::Path;

use memskill_core::{Query, Sample, Session, Turn};
use serde_json::Value;

use crate::json::{child_path, index_path, opt_str, req_str, req_text, require, Node};
use crate::DatasetError;

/// The category of every MSC-Self-Instruct question.
pub const MSC_CATEGORY: &str = "dmr";

/// Renders an MSC turn: `{speaker}: {text}`.
pub fn render_msc_turn(speaker: &str, text: &str) -> String {
    format!("{speaker}: {text}")
}

/// Loads `msc_self_instruct.jsonl` into one [`Sample`] per record (spans left empty).
pub fn load_msc(path: &Path) -> Result<Vec<Sample>, DatasetError> {
    let records = crate::json::parse_records(path)?;
    msc_from_records(&records, &path.display().to_string())
}

/// [`load_msc`] of an in-memory document (an array of records).
pub fn msc_from_json(root: &Value, file: &str) -> Result<Vec<Sample>, DatasetError> {
    msc_from_records(&crate::json::records_of(root), file)
}

fn msc_from_records(records: &[(String, Value)], file: &str) -> Result<Vec<Sample>, DatasetError> {
    let file = file.to_string();
    records
        .iter()
        .enumerate()
        .map(|(i, (p, v))| parse_record(Node::new(v, &file, p), i))
        .collect()
}

fn parse_record(node: Node<'_>, index: usize) -> Result<Sample, DatasetError> {
    node.object()?;
    let id = format!("msc-{index}");
    let si_path = child_path(node.path, "self_instruct");
    let si = Node::new(require(&node, "self_instruct")?, node.file, &si_path);
    si.object()?;
    let question = req_str(&si, "B")?;
    let answer = req_text(&si, "A")?;

    let prev_path = child_path(node.path, "previous_dialogs");
    let prev = Node::new(require(&node, "previous_dialogs")?, node.file, &prev_path);
    let mut sessions = Vec::new();
    for (i, d) in prev.array()?.iter().enumerate() {
        let dp = index_path(prev.path, i);
        let dn = Node::new(d, node.file, &dp);
        dn.object()?;
        let date = opt_str(&dn, "time_back")?;
        sessions.push(parse_session(&dn, sessions.len() + 1, date)?);
    }
    sessions.push(parse_session(&node, sessions.len() + 1, None)?);

    Ok(Sample {
        id: id.clone(),
        dataset: "msc".to_string(),
        sessions,
        spans: Vec::new(),
        queries: vec![Query {
            id: format!("{id}:q0"),
            question,
            answers: vec![answer],
            category: MSC_CATEGORY.to_string(),
            evidence: Vec::new(),
            date: None,
        }],
    })
}

/// The `dialog` list of `owner` as session `index`.
fn parse_session(
    owner: &Node<'_>,
    index: usize,
    date: Option<String>,
) -> Result<Session, DatasetError> {
    let lp = child_path(owner.path, "dialog");
    let list = Node::new(require(owner, "dialog")?, owner.file, &lp);
    let mut turns = Vec::new();
    for (j, t) in list.array()?.iter().enumerate() {
        let tp = index_path(list.path, j);
        let tn = Node::new(t, owner.file, &tp);
        tn.object()?;
        let text = req_str(&tn, "text")?;
        let speaker = match opt_str(&tn, "id")? {
            Some(s) => s,
            None => format!("Speaker {}", j % 2 + 1),
        };
        turns.push(Turn {
            id: format!("S{index}:T{}", j + 1),
            text: render_msc_turn(&speaker, &text),
            speaker,
        });
    }
    Ok(Session { index, date, turns })
}
