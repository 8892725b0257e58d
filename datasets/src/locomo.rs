//! LoCoMo (`locomo10.json`).
//!
//! Accepted schema: a top-level array of conversations, each
//! `{sample_id: string, conversation: {speaker_a, speaker_b, session_N: [turn], session_N_date_time: string, ...},
//! qa: [{question: string, answer?: string|number, adversarial_answer?: string, category: integer, evidence?: [string]}]}`
//! with turns `{speaker: string, dia_id: string, text: string, blip_caption?: string}`. Other keys
//! (`event_summary`, `observation`, `session_summary`, `img_url`, ...) are ignored. A
//! `session_N_date_time` without a `session_N` list (the real file has some) is ignored.
//!
//! Each qa item needs `answer` or `adversarial_answer`; the gold answer is `answer` when present,
//! else `adversarial_answer` (category 5 items, which are excluded unless
//! [`LocomoOptions::include_adversarial`]). Query ids are `{sample_id}:q{index}` with the index
//! in the original `qa` list, so they stay stable whatever is filtered out.

use std::path::Path;

use memskill_core::{Query, Sample, Session, Turn};

use crate::json::{
    child_path, get, index_path, opt_str, req_str, req_text, require, str_list, Node,
};
use crate::DatasetError;

/// LoCoMo's adversarial (unanswerable) category.
pub const LOCOMO_ADVERSARIAL_CATEGORY: &str = "5";

/// Options of [`load_locomo`].
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct LocomoOptions {
    /// Keep category-5 (adversarial) questions.
    pub include_adversarial: bool,
}

/// Renders one LoCoMo turn as the reference does: `{speaker} said, "{text}"`, plus
/// ` and shared {caption}.` whenever the turn has a `blip_caption` key (even an empty one).
pub fn render_locomo_turn(speaker: &str, text: &str, blip_caption: Option<&str>) -> String {
    match blip_caption {
        Some(c) => format!("{speaker} said, \"{text}\" and shared {c}."),
        None => format!("{speaker} said, \"{text}\""),
    }
}

/// The texts the encoder and controller benchmarks embed: the first `n` turn texts of the
/// LoCoMo file at `path` ([`locomo_turn_texts`]) when it reads and holds `n`, else `n`
/// synthetic sentences; with the source's name (`"locomo10.json"` or `"synthetic"`).
pub fn bench_turn_texts(path: Option<&Path>, n: usize) -> (Vec<String>, &'static str) {
    if let Some(Ok(out)) = path.map(|p| locomo_turn_texts(p, n)) {
        if out.len() == n {
            return (out, "locomo10.json");
        }
    }
    let synth = (0..n)
        .map(|i| {
            format!(
                "Sentence number {i} talks about topic {} and mentions item {} with some extra words.",
                i % 17,
                i * 7 % 31
            )
        })
        .collect();
    (synth, "synthetic")
}

/// The raw `text` of the first `n` turns of `locomo10.json` in file order (conversation by
/// conversation, its sessions as the loader reads them: every `session_N` list by N, null
/// ones skipped, [`session_lists`]): the texts the encoder and controller benchmarks embed,
/// and their PyTorch twins read the same way. Fewer than `n` when the file has fewer.
pub fn locomo_turn_texts(path: &Path, n: usize) -> Result<Vec<String>, DatasetError> {
    let root = crate::json::parse_document(path)?;
    let file = path.display().to_string();
    let mut out = Vec::new();
    for (i, item) in Node::new(&root, &file, "").array()?.iter().enumerate() {
        let p = index_path("", i);
        let conv_path = child_path(&p, "conversation");
        let conv = Node::new(
            require(&Node::new(item, &file, &p), "conversation")?,
            &file,
            &conv_path,
        );
        for (_, sp, v) in session_lists(&conv)? {
            for (j, t) in Node::new(v, &file, &sp).array()?.iter().enumerate() {
                if out.len() == n {
                    return Ok(out);
                }
                let tp = index_path(&sp, j);
                out.push(req_str(&Node::new(t, &file, &tp), "text")?);
            }
        }
    }
    Ok(out)
}

/// Loads `locomo10.json` into one [`Sample`] per conversation (spans left empty).
pub fn load_locomo(path: &Path, opts: &LocomoOptions) -> Result<Vec<Sample>, DatasetError> {
    let root = crate::json::parse_document(path)?;
    locomo_from_json(&root, &path.display().to_string(), opts)
}

/// [`load_locomo`] of an in-memory document (`file` names it in errors).
pub fn locomo_from_json(
    root: &serde_json::Value,
    file: &str,
    opts: &LocomoOptions,
) -> Result<Vec<Sample>, DatasetError> {
    let file = file.to_string();
    let top = Node::new(root, &file, "");
    let items = top.array()?;
    let mut samples = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let p = index_path("", i);
        samples.push(parse_conversation(Node::new(item, &file, &p), opts)?);
    }
    crate::json::check_unique_ids(
        &file,
        samples
            .iter()
            .enumerate()
            .map(|(i, s)| (child_path(&index_path("", i), "sample_id"), s.id.as_str())),
    )?;
    Ok(samples)
}

fn parse_conversation(node: Node<'_>, opts: &LocomoOptions) -> Result<Sample, DatasetError> {
    node.object()?;
    let id = req_text(&node, "sample_id")?;
    let conv_path = child_path(node.path, "conversation");
    let conv = Node::new(require(&node, "conversation")?, node.file, &conv_path);
    let sessions = parse_sessions(&conv)?;

    let qa_path = child_path(node.path, "qa");
    let qa = Node::new(require(&node, "qa")?, node.file, &qa_path);
    let mut queries = Vec::new();
    for (k, q) in qa.array()?.iter().enumerate() {
        let qp = index_path(qa.path, k);
        let qn = Node::new(q, node.file, &qp);
        queries.extend(parse_query(&qn, &id, k, opts)?);
    }

    Ok(Sample {
        id,
        dataset: "locomo".to_string(),
        sessions,
        spans: Vec::new(),
        queries,
    })
}

/// The sessions of a `conversation` object, the one reading of them (the loader's and
/// [`locomo_turn_texts`]'s): every `session_N` key by N (whatever numbers are missing;
/// `session_01` is not one), null sessions skipped; each as (N, its path, its value).
fn session_lists<'a>(
    conv: &Node<'a>,
) -> Result<Vec<(usize, String, &'a serde_json::Value)>, DatasetError> {
    let map = conv.object()?;
    // `session_N` with N as a number is written (not `session_01`, not `session_1_date_time`)
    let mut numbered: Vec<(usize, &String)> = map
        .keys()
        .filter_map(|k| {
            let rest = k.strip_prefix("session_")?;
            let n = rest.parse::<usize>().ok()?;
            (n.to_string() == rest).then_some((n, k))
        })
        .collect();
    numbered.sort_by_key(|(n, _)| *n);
    Ok(numbered
        .into_iter()
        .filter(|(_, k)| !map[*k].is_null())
        .map(|(n, k)| (n, child_path(conv.path, k), &map[k]))
        .collect())
}

/// The sessions of a `conversation` object ([`session_lists`]), each dated by its
/// `session_N_date_time`.
fn parse_sessions(conv: &Node<'_>) -> Result<Vec<Session>, DatasetError> {
    let lists = session_lists(conv)?;
    let mut sessions = Vec::with_capacity(lists.len());
    for (n, sp, v) in lists {
        let sess = Node::new(v, conv.file, &sp);
        let turns_v = sess.array()?;
        let date = opt_str(conv, &format!("session_{n}_date_time"))?;
        let mut turns = Vec::with_capacity(turns_v.len());
        for (j, t) in turns_v.iter().enumerate() {
            let tp = index_path(sess.path, j);
            turns.push(parse_turn(&Node::new(t, conv.file, &tp))?);
        }
        sessions.push(Session {
            index: n,
            date,
            turns,
        });
    }
    Ok(sessions)
}

/// One turn: `speaker`, `dia_id` and `text`, with the `blip_caption` of a shared image.
fn parse_turn(tn: &Node<'_>) -> Result<Turn, DatasetError> {
    tn.object()?;
    let speaker = req_str(tn, "speaker")?;
    let dia_id = req_str(tn, "dia_id")?;
    let text = req_str(tn, "text")?;
    let caption = opt_str(tn, "blip_caption")?;
    Ok(Turn {
        id: dia_id,
        text: render_locomo_turn(&speaker, &text, caption.as_deref()),
        speaker,
    })
}

/// The `k`-th question of conversation `id` (`None`: an adversarial one, left out unless
/// `opts.include_adversarial`). The answer is `answer`, else `adversarial_answer`.
fn parse_query(
    qn: &Node<'_>,
    id: &str,
    k: usize,
    opts: &LocomoOptions,
) -> Result<Option<Query>, DatasetError> {
    qn.object()?;
    let question = req_text(qn, "question")?;
    let cat_path = child_path(qn.path, "category");
    let category = Node::new(require(qn, "category")?, qn.file, &cat_path).int()?;
    let answer = match get(qn, "answer")? {
        Some(_) => req_text(qn, "answer")?,
        None => match get(qn, "adversarial_answer")? {
            Some(_) => req_text(qn, "adversarial_answer")?,
            None => {
                return Err(DatasetError::MissingField {
                    file: qn.file.to_string(),
                    path: child_path(qn.path, "answer"),
                })
            }
        },
    };
    let evidence = match get(qn, "evidence")? {
        None => Vec::new(),
        Some(v) => {
            let ep = child_path(qn.path, "evidence");
            str_list(&Node::new(v, qn.file, &ep))?
        }
    };
    let category = category.to_string();
    if category == LOCOMO_ADVERSARIAL_CATEGORY && !opts.include_adversarial {
        return Ok(None);
    }
    Ok(Some(Query {
        id: format!("{id}:q{k}"),
        question,
        answers: vec![answer],
        category,
        evidence,
        date: None,
    }))
}
