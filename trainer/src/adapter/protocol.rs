//! The messages of the adapter protocol (docs/adapter-protocol.md), pure: building a
//! request line, reading a reply line, splitting the adapter's command line. No process,
//! no I/O: everything here is unit-tested on strings.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What a request asks of the memory system.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Op {
    /// Forget everything: a new sample (conversation) starts.
    Reset { sample_id: String },
    /// One span of the sample, in order.
    Add {
        index: usize,
        span_id: String,
        text: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        date: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        session: Option<usize>,
        speakers: Vec<String>,
    },
    /// Every span of the sample has been added.
    Build,
    /// The memories for one question (at most `k`), or the system's own answer.
    Retrieve {
        query_id: String,
        question: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        date: Option<String>,
        k: usize,
    },
    /// The evaluation is over; the adapter exits after replying.
    Close,
}

/// The kind of a request, for timeouts and error counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum OpKind {
    Reset,
    Add,
    Build,
    Retrieve,
    Close,
}

impl OpKind {
    pub const ALL: [OpKind; 5] = [
        OpKind::Reset,
        OpKind::Add,
        OpKind::Build,
        OpKind::Retrieve,
        OpKind::Close,
    ];

    pub fn name(self) -> &'static str {
        match self {
            OpKind::Reset => "reset",
            OpKind::Add => "add",
            OpKind::Build => "build",
            OpKind::Retrieve => "retrieve",
            OpKind::Close => "close",
        }
    }
}

impl Op {
    pub fn kind(&self) -> OpKind {
        match self {
            Op::Reset { .. } => OpKind::Reset,
            Op::Add { .. } => OpKind::Add,
            Op::Build => OpKind::Build,
            Op::Retrieve { .. } => OpKind::Retrieve,
            Op::Close => OpKind::Close,
        }
    }
}

/// The request line (without its newline) for `op` with id `id`.
pub fn request_line(id: u64, op: &Op) -> String {
    let mut v = serde_json::to_value(op).expect("an Op is always JSON");
    v["id"] = Value::from(id);
    v.to_string()
}

/// What a successful reply carries.
#[derive(Debug, Clone, PartialEq)]
pub enum Payload {
    /// `reset`, `add`, `build`, `close`: nothing.
    Done,
    /// `retrieve`: the memories to answer from, best first.
    Memories(Vec<String>),
    /// `retrieve`: the system answered the question itself.
    Answer(String),
}

/// A reply line read: its id and what it says.
#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    pub id: u64,
    /// `Err(message)` for `{"ok": false, "error": ...}`.
    pub result: Result<Payload, String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawReply {
    id: u64,
    ok: bool,
    #[serde(default)]
    error: Option<String>,
    #[serde(default)]
    memories: Option<Vec<String>>,
    #[serde(default)]
    answer: Option<String>,
}

/// The `id` of a reply line, if it has one (a late reply to an earlier request is skipped
/// by its id before its shape is checked against the current request's kind).
pub fn reply_id(line: &str) -> Option<u64> {
    serde_json::from_str::<Value>(line.trim()).ok()?["id"].as_u64()
}

/// Read one reply line to a request of kind `kind`; `Err` says why it is malformed.
pub fn parse_reply(line: &str, kind: OpKind) -> Result<Reply, String> {
    let head: String = line.chars().take(200).collect();
    let raw: RawReply = serde_json::from_str(line.trim())
        .map_err(|e| format!("malformed reply line ({e}): {head:?}"))?;
    if !raw.ok {
        let msg = raw
            .error
            .unwrap_or_else(|| "ok = false without an error message".into());
        return Ok(Reply {
            id: raw.id,
            result: Err(msg),
        });
    }
    let payload = match (kind, raw.memories, raw.answer) {
        (OpKind::Retrieve, Some(_), Some(_)) => {
            return Err(format!(
                "reply {} has both `memories` and `answer` (give one): {head:?}",
                raw.id
            ))
        }
        (OpKind::Retrieve, Some(m), None) => Payload::Memories(m),
        (OpKind::Retrieve, None, Some(a)) => Payload::Answer(a),
        (OpKind::Retrieve, None, None) => {
            return Err(format!(
                "reply {} to retrieve has neither `memories` nor `answer`: {head:?}",
                raw.id
            ))
        }
        (_, None, None) => Payload::Done,
        (k, _, _) => {
            return Err(format!(
                "reply {} to {} carries `memories` or `answer` (only retrieve does): {head:?}",
                raw.id,
                k.name()
            ))
        }
    };
    Ok(Reply {
        id: raw.id,
        result: Ok(payload),
    })
}

/// How long each kind of request may take before the adapter is declared hung.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Timeouts {
    pub reset: Duration,
    pub add: Duration,
    pub build: Duration,
    pub retrieve: Duration,
    pub close: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Self {
            reset: Duration::from_secs(120),
            add: Duration::from_secs(600),
            build: Duration::from_secs(1800),
            retrieve: Duration::from_secs(600),
            close: Duration::from_secs(10),
        }
    }
}

impl Timeouts {
    pub fn of(&self, kind: OpKind) -> Duration {
        match kind {
            OpKind::Reset => self.reset,
            OpKind::Add => self.add,
            OpKind::Build => self.build,
            OpKind::Retrieve => self.retrieve,
            OpKind::Close => self.close,
        }
    }

    /// Apply `--adapter-timeout KIND=SECONDS` settings (`all=S` sets every kind).
    pub fn with_settings(mut self, settings: &[String]) -> Result<Self, String> {
        for s in settings {
            let (k, v) = s
                .split_once('=')
                .ok_or_else(|| format!("--adapter-timeout {s:?}: expected KIND=SECONDS"))?;
            let secs: f64 = v
                .trim()
                .parse()
                .ok()
                .filter(|x: &f64| x.is_finite() && *x > 0.0 && *x <= 86400.0)
                .ok_or_else(|| {
                    format!("--adapter-timeout {s:?}: SECONDS must be a number in (0, 86400]")
                })?;
            let d = Duration::from_secs_f64(secs);
            let kinds: Vec<OpKind> = match k.trim() {
                "all" => OpKind::ALL.to_vec(),
                name => vec![*OpKind::ALL
                    .iter()
                    .find(|o| o.name() == name)
                    .ok_or_else(|| {
                        format!(
                            "--adapter-timeout {s:?}: KIND is one of all, reset, add, build, retrieve, close"
                        )
                    })?],
            };
            for kind in kinds {
                *self.slot(kind) = d;
            }
        }
        Ok(self)
    }

    fn slot(&mut self, kind: OpKind) -> &mut Duration {
        match kind {
            OpKind::Reset => &mut self.reset,
            OpKind::Add => &mut self.add,
            OpKind::Build => &mut self.build,
            OpKind::Retrieve => &mut self.retrieve,
            OpKind::Close => &mut self.close,
        }
    }
}

/// The adapter's command line split with shell-words rules (quotes, backslashes; no
/// variables, globs or pipes: nothing goes through a shell).
pub fn split_command(cmd: &str) -> Result<Vec<String>, String> {
    let words = shlex::split(cmd)
        .ok_or_else(|| format!("--adapter {cmd:?}: unbalanced quotes or a trailing backslash"))?;
    if words.is_empty() {
        return Err("--adapter is empty: give the command that starts the adapter".into());
    }
    Ok(words)
}

/// The speakers named at the start of a span's lines (`Name: text` or LoCoMo's `Name said,
/// "text"`), in order of first appearance: the metadata an `add` carries besides the date.
pub fn speakers(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for line in text.lines() {
        let Some((name, _)) = line
            .split_once(" said, \"")
            .or_else(|| line.split_once(": "))
        else {
            continue;
        };
        let name = name.trim();
        let plausible = !name.is_empty()
            && name.len() <= 40
            && name != "DATE"
            && name
                .chars()
                .all(|c| c.is_alphanumeric() || c == ' ' || c == '-' || c == '\'' || c == '.');
        if plausible && !out.iter().any(|s| s == name) {
            out.push(name.to_string());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_carry_their_id_and_op() {
        let add = Op::Add {
            index: 2,
            span_id: "s:2".into(),
            text: "Ann: hi".into(),
            date: Some("1 May 2023".into()),
            session: None,
            speakers: vec!["Ann".into()],
        };
        let v: Value = serde_json::from_str(&request_line(7, &add)).unwrap();
        assert_eq!(v["id"], 7);
        assert_eq!(v["op"], "add");
        assert_eq!(v["index"], 2);
        assert_eq!(v["date"], "1 May 2023");
        assert!(v.get("session").is_none());
        let v: Value = serde_json::from_str(&request_line(1, &Op::Build)).unwrap();
        assert_eq!(v, serde_json::json!({"id": 1, "op": "build"}));
        assert!(!request_line(1, &Op::Close).contains('\n'));
        assert_eq!(reply_id("{\"id\": 9, \"ok\": true}\n"), Some(9));
        assert_eq!(reply_id("garbage"), None);
    }

    #[test]
    fn replies_are_read_strictly() {
        let r = parse_reply(r#"{"id": 3, "ok": true}"#, OpKind::Add).unwrap();
        assert_eq!(
            r,
            Reply {
                id: 3,
                result: Ok(Payload::Done)
            }
        );
        let r = parse_reply(
            r#"{"id":4,"ok":true,"memories":["a","b"]}"#,
            OpKind::Retrieve,
        );
        assert_eq!(
            r.unwrap().result,
            Ok(Payload::Memories(vec!["a".into(), "b".into()]))
        );
        let r = parse_reply(r#"{"id":4,"ok":true,"answer":"Paris"}"#, OpKind::Retrieve);
        assert_eq!(r.unwrap().result, Ok(Payload::Answer("Paris".into())));
        let r = parse_reply(r#"{"id":5,"ok":false,"error":"boom"}"#, OpKind::Build).unwrap();
        assert_eq!(r.result, Err("boom".into()));
        for (bad, kind) in [
            ("hello", OpKind::Add),
            ("{\"ok\": true}", OpKind::Add),
            ("{\"id\": 1, \"ok\": true, \"extra\": 1}", OpKind::Add),
            ("{\"id\": 1, \"ok\": true}", OpKind::Retrieve),
            (
                "{\"id\": 1, \"ok\": true, \"memories\": [], \"answer\": \"x\"}",
                OpKind::Retrieve,
            ),
            (
                "{\"id\": 1, \"ok\": true, \"memories\": [1]}",
                OpKind::Retrieve,
            ),
            ("{\"id\": 1, \"ok\": true, \"answer\": \"x\"}", OpKind::Add),
        ] {
            assert!(parse_reply(bad, kind).is_err(), "{bad}");
        }
    }

    #[test]
    fn commands_split_like_a_shell_without_one() {
        assert_eq!(
            split_command("python3 'my dir/a.py' --x \"b c\"").unwrap(),
            vec!["python3", "my dir/a.py", "--x", "b c"]
        );
        assert_eq!(split_command("a $HOME|b").unwrap(), vec!["a", "$HOME|b"]);
        assert!(split_command("python3 'open").is_err());
        assert!(split_command("   ").is_err());
    }

    #[test]
    fn timeouts_are_set_per_kind() {
        let t = Timeouts::default()
            .with_settings(&["all=5".into(), "retrieve=0.5".into()])
            .unwrap();
        assert_eq!(t.of(OpKind::Add), Duration::from_secs(5));
        assert_eq!(t.of(OpKind::Retrieve), Duration::from_millis(500));
        for bad in ["add", "add=0", "add=-1", "add=x", "nope=3", "add=inf"] {
            assert!(
                Timeouts::default().with_settings(&[bad.into()]).is_err(),
                "{bad}"
            );
        }
    }

    #[test]
    fn speakers_are_read_from_dialogue_lines() {
        let text = "DATE: 1 May 2023\nAnn: hi: there\nBob Li: hello\nAnn: bye\nhttp://x";
        assert_eq!(speakers(text), vec!["Ann", "Bob Li"]);
        let locomo = "DATE: 1:47 pm on 18 May, 2023\nCONVERSATION:\nSam said, \"Hey: Evan\"\nEvan said, \"Hi\"";
        assert_eq!(speakers(locomo), vec!["Sam", "Evan"]);
    }
}
