//! Span segmentation: a [`Sample`]'s sessions become the ordered [`Span`]s the controller and
//! executor process one at a time. Spans never cross sessions. Span ids are
//! `{sample_id}:{index}` (0-based, across the whole sample).
//!
//! Span texts follow the reference implementation's layout for each dataset ([`SpanStyle`],
//! chosen by `Sample::dataset`):
//!
//! | style | turn separator | header of `turn` spans | header of other spans |
//! |---|---|---|---|
//! | LoCoMo | `\n` | `DATE: {date}\n` | `DATE: {date}\nCONVERSATION:\n` |
//! | LongMemEval | `\n\n` | `Session Date: {date}\n` | `Session Date: {date}\n\n` |
//! | plain (HotpotQA, others) | `\n` | `DATE: {date}\n` | `DATE: {date}\n` |
//!
//! A session without a date (or with an empty one) gets no header. `fixed-tokens` cuts each
//! session's text (its turns joined by the separator) into cl100k windows exactly as the
//! reference's `_split_fixed_length` does: a text of at most `tokens` tokens stays whole (as
//! is); a longer one becomes windows of `tokens` tokens starting every `tokens - overlap`
//! tokens until a window reaches the end, each decoded on its own (a character cut by a window
//! edge becomes U+FFFD) and stripped of surrounding whitespace (Python's `str.strip`), empty
//! windows dropped; the header is put in front of every window.

use std::fmt;
use std::str::FromStr;

use memskill_core::{Sample, Session, Span};
use serde::{Deserialize, Serialize};

use crate::DatasetError;

/// Default window of `fixed-tokens`.
pub const DEFAULT_WINDOW_TOKENS: usize = 512;
/// Default overlap of `fixed-tokens`.
pub const DEFAULT_WINDOW_OVERLAP: usize = 64;

/// How a sample's sessions are cut into spans.
///
/// Serialised as its string form (`"turn-pair"`, `"fixed-tokens:512:64"`), so configs read
/// `spans = "fixed-tokens:512:64"`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub enum SpanMode {
    /// One span per session.
    FullSession,
    /// Consecutive pairs of turns (the last one alone when the count is odd). The default.
    #[default]
    TurnPair,
    /// One span per turn.
    Turn,
    /// Windows of `tokens` cl100k tokens, consecutive windows sharing `overlap` tokens, inside
    /// each session (the `DATE:` header is added on top of the window).
    FixedTokens { tokens: usize, overlap: usize },
}

impl fmt::Display for SpanMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SpanMode::FullSession => f.write_str("full-session"),
            SpanMode::TurnPair => f.write_str("turn-pair"),
            SpanMode::Turn => f.write_str("turn"),
            SpanMode::FixedTokens { tokens, overlap } => {
                write!(f, "fixed-tokens:{tokens}:{overlap}")
            }
        }
    }
}

impl From<SpanMode> for String {
    fn from(m: SpanMode) -> String {
        m.to_string()
    }
}

impl TryFrom<String> for SpanMode {
    type Error = DatasetError;
    fn try_from(s: String) -> Result<Self, Self::Error> {
        s.parse()
    }
}

impl FromStr for SpanMode {
    type Err = DatasetError;
    /// `full-session`, `turn-pair`, `turn`, `fixed-tokens` (512/64) or
    /// `fixed-tokens:TOKENS:OVERLAP` (TOKENS > 0, OVERLAP < TOKENS).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || DatasetError::SpanMode(s.to_string());
        match s.trim() {
            "full-session" => Ok(SpanMode::FullSession),
            "turn-pair" => Ok(SpanMode::TurnPair),
            "turn" => Ok(SpanMode::Turn),
            "fixed-tokens" => Ok(SpanMode::FixedTokens {
                tokens: DEFAULT_WINDOW_TOKENS,
                overlap: DEFAULT_WINDOW_OVERLAP,
            }),
            other => {
                let rest = other.strip_prefix("fixed-tokens:").ok_or_else(bad)?;
                let (t, o) = rest.split_once(':').ok_or_else(bad)?;
                let tokens: usize = t.parse().map_err(|_| bad())?;
                let overlap: usize = o.parse().map_err(|_| bad())?;
                if tokens == 0 || overlap >= tokens {
                    return Err(bad());
                }
                Ok(SpanMode::FixedTokens { tokens, overlap })
            }
        }
    }
}

/// Number of cl100k tokens in `text`.
pub fn count_tokens(text: &str) -> usize {
    tiktoken_rs::cl100k_base_singleton()
        .encode_ordinary(text)
        .len()
}

/// Python's `str.strip()` with no argument (core's: Unicode whitespace and the separators
/// U+001C..U+001F, which Python counts as whitespace and Rust does not).
pub use memskill_core::jsonfix::py_strip;

/// How span texts are laid out: the reference implementation's per-dataset formats (see the
/// module documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SpanStyle {
    /// LoCoMo: turns joined by `\n`, `DATE: {date}\n` (+ `CONVERSATION:\n` unless one turn).
    Locomo,
    /// LongMemEval: turns joined by a blank line, `Session Date: {date}\n` (+ `\n` unless one
    /// turn).
    LongMemEval,
    /// Everything else (HotpotQA, ALFWorld, synthetic): turns joined by `\n`, `DATE: {date}\n`.
    Plain,
}

impl SpanStyle {
    /// The style of a sample's `dataset` name.
    pub fn for_dataset(dataset: &str) -> SpanStyle {
        match dataset {
            "locomo" => SpanStyle::Locomo,
            "longmemeval" => SpanStyle::LongMemEval,
            _ => SpanStyle::Plain,
        }
    }

    /// What joins the turns of one span.
    pub fn turn_separator(self) -> &'static str {
        match self {
            SpanStyle::LongMemEval => "\n\n",
            SpanStyle::Locomo | SpanStyle::Plain => "\n",
        }
    }

    /// The header in front of a span's text (`single_turn`: the span mode is `turn`).
    pub fn header(self, date: Option<&str>, single_turn: bool) -> String {
        let Some(d) = date.filter(|d| !d.is_empty()) else {
            return String::new();
        };
        match (self, single_turn) {
            (SpanStyle::Locomo, false) => format!("DATE: {d}\nCONVERSATION:\n"),
            (SpanStyle::LongMemEval, true) => format!("Session Date: {d}\n"),
            (SpanStyle::LongMemEval, false) => format!("Session Date: {d}\n\n"),
            (SpanStyle::Locomo, true) | (SpanStyle::Plain, _) => format!("DATE: {d}\n"),
        }
    }
}

/// `[start, end)` token windows over `n` tokens with the given size and overlap: every token is
/// covered, consecutive windows share exactly `overlap` tokens (the last window may be shorter,
/// and no window lies entirely inside the overlap of its predecessor).
pub fn token_windows(n: usize, tokens: usize, overlap: usize) -> Vec<(usize, usize)> {
    let tokens = tokens.max(1);
    let stride = tokens.saturating_sub(overlap).max(1);
    let mut out = Vec::new();
    if n == 0 {
        return out;
    }
    let mut start = 0;
    loop {
        let end = (start + tokens).min(n);
        out.push((start, end));
        if end == n {
            break;
        }
        start += stride;
    }
    out
}

/// One piece of [`fixed_windows`]: its text and the byte range of the input it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Window {
    pub text: String,
    /// Byte range of the input covered by the window's tokens (before stripping).
    pub bytes: std::ops::Range<usize>,
}

/// The reference's fixed-length chunking of one text (see the module documentation): a text of
/// at most `tokens` cl100k tokens is returned whole; a longer one as stripped windows of
/// `tokens` tokens overlapping by `overlap` (clamped below `tokens`), empty ones dropped. An
/// empty text gives no window.
pub fn fixed_windows(text: &str, tokens: usize, overlap: usize) -> Vec<Window> {
    if text.is_empty() {
        return Vec::new();
    }
    let bpe = tiktoken_rs::cl100k_base_singleton();
    let ids = bpe.encode_ordinary(text);
    let tokens = tokens.max(1);
    if ids.len() <= tokens {
        return vec![Window {
            text: text.to_string(),
            bytes: 0..text.len(),
        }];
    }
    // Byte offset of every token in `text` (the tokens' bytes concatenate to the text).
    let mut offsets = Vec::with_capacity(ids.len() + 1);
    let mut at = 0usize;
    offsets.push(0);
    for id in &ids {
        at += bpe.decode_bytes(&[*id]).map(|b| b.len()).unwrap_or(0);
        offsets.push(at.min(text.len()));
    }
    let overlap = overlap.min(tokens - 1);
    let mut out = Vec::new();
    for (start, end) in token_windows(ids.len(), tokens, overlap) {
        let bytes = bpe.decode_bytes(&ids[start..end]).unwrap_or_default();
        let decoded = String::from_utf8_lossy(&bytes);
        let t = py_strip(&decoded);
        if !t.is_empty() {
            out.push(Window {
                text: t.to_string(),
                bytes: offsets[start]..offsets[end],
            });
        }
    }
    out
}

/// Fills `sample.spans` from its sessions according to `mode` (replacing any previous spans),
/// in the layout of the sample's dataset ([`SpanStyle::for_dataset`]).
pub fn segment(sample: &mut Sample, mode: &SpanMode) {
    segment_styled(sample, mode, SpanStyle::for_dataset(&sample.dataset))
}

/// [`segment`] with an explicit layout.
pub fn segment_styled(sample: &mut Sample, mode: &SpanMode, style: SpanStyle) {
    let mut spans: Vec<Span> = Vec::new();
    for session in &sample.sessions {
        match mode {
            SpanMode::FullSession => {
                push_group(&mut spans, session, 0..session.turns.len(), style, false)
            }
            SpanMode::TurnPair => {
                let n = session.turns.len();
                let mut i = 0;
                while i < n {
                    push_group(&mut spans, session, i..(i + 2).min(n), style, false);
                    i += 2;
                }
            }
            SpanMode::Turn => {
                for i in 0..session.turns.len() {
                    push_group(&mut spans, session, i..i + 1, style, true);
                }
            }
            SpanMode::FixedTokens { tokens, overlap } => {
                push_windows(&mut spans, session, *tokens, *overlap, style)
            }
        }
    }
    for (i, s) in spans.iter_mut().enumerate() {
        s.index = i;
        s.id = format!("{}:{}", sample.id, i);
    }
    sample.spans = spans;
}

/// A span of consecutive turns. A full session is one span even when it has no turns (the
/// reference emits its header alone, or an empty text when it has no date); other modes never
/// call this with an empty range.
fn push_group(
    spans: &mut Vec<Span>,
    session: &Session,
    range: std::ops::Range<usize>,
    style: SpanStyle,
    single_turn: bool,
) {
    let turns = &session.turns[range];
    let body: Vec<&str> = turns.iter().map(|t| t.text.as_str()).collect();
    let text = format!(
        "{}{}",
        style.header(session.date.as_deref(), single_turn),
        body.join(style.turn_separator())
    );
    spans.push(Span {
        id: String::new(),
        index: 0,
        session: Some(session.index),
        date: session.date.clone(),
        turn_ids: turns.iter().map(|t| t.id.clone()).collect(),
        text,
    });
}

fn push_windows(
    spans: &mut Vec<Span>,
    session: &Session,
    tokens: usize,
    overlap: usize,
    style: SpanStyle,
) {
    let sep = style.turn_separator();
    // The session text and the byte range of every turn in it.
    let mut text = String::new();
    let mut ranges = Vec::with_capacity(session.turns.len());
    for (i, t) in session.turns.iter().enumerate() {
        if i > 0 {
            text.push_str(sep);
        }
        let s = text.len();
        text.push_str(&t.text);
        ranges.push(s..text.len());
    }
    let header = style.header(session.date.as_deref(), false);
    for w in fixed_windows(&text, tokens, overlap) {
        let turn_ids = session
            .turns
            .iter()
            .zip(&ranges)
            .filter(|(_, r)| r.start < w.bytes.end && w.bytes.start < r.end.max(r.start + 1))
            .map(|(t, _)| t.id.clone())
            .collect();
        spans.push(Span {
            id: String::new(),
            index: 0,
            session: Some(session.index),
            date: session.date.clone(),
            turn_ids,
            text: format!("{header}{}", w.text),
        });
    }
}

/// One chunk of [`pack_texts`]: its text and the indices of the input texts it holds (a
/// windowed text appears in several chunks).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Packed {
    pub text: String,
    pub sources: Vec<usize>,
}

/// Packs whole `texts`, in order, into chunks of at most `max_tokens` cl100k tokens (counted
/// as the sum of each text's tokens plus one separator token): consecutive texts share a chunk,
/// joined by a blank line, while they fit; a text longer than `max_tokens` on its own is cut
/// into token windows with `overlap` (it never shares a chunk). Blank texts are skipped. Used
/// to pack ALFWorld expert trajectories into executor spans (2048 tokens for training, 512
/// for evaluation).
pub fn pack_texts(texts: &[&str], max_tokens: usize, overlap: usize) -> Vec<Packed> {
    const SEP: &str = "\n\n";
    let bpe = tiktoken_rs::cl100k_base_singleton();
    let max_tokens = max_tokens.max(1);
    let sep_len = bpe.encode_ordinary(SEP).len();
    let mut out = Vec::new();
    let mut cur = Packed {
        text: String::new(),
        sources: Vec::new(),
    };
    let mut cur_len = 0usize;
    for (i, text) in texts.iter().enumerate() {
        let text = text.trim();
        if text.is_empty() {
            continue;
        }
        let ids = bpe.encode_ordinary(text);
        if !cur.text.is_empty() && cur_len + sep_len + ids.len() <= max_tokens {
            cur.text.push_str(SEP);
            cur.text.push_str(text);
            cur.sources.push(i);
            cur_len += sep_len + ids.len();
            continue;
        }
        if !cur.text.is_empty() {
            out.push(std::mem::replace(
                &mut cur,
                Packed {
                    text: String::new(),
                    sources: Vec::new(),
                },
            ));
            cur_len = 0;
        }
        if ids.len() <= max_tokens {
            cur.text.push_str(text);
            cur.sources.push(i);
            cur_len = ids.len();
        } else {
            for (start, end) in token_windows(ids.len(), max_tokens, overlap.min(max_tokens - 1)) {
                let bytes = bpe.decode_bytes(&ids[start..end]).unwrap_or_default();
                out.push(Packed {
                    text: String::from_utf8_lossy(&bytes).into_owned(),
                    sources: vec![i],
                });
            }
        }
    }
    if !cur.text.is_empty() {
        out.push(cur);
    }
    out
}

/// What joins two trajectories in one chunk of [`pack_whole`] (the reference's separator).
pub const TRAJECTORY_SEPARATOR: &str = "\n\n=== TRAJECTORY ===\n\n";

/// The reference's `chunk_trajectories_by_tokens`: texts (stripped; blank ones skipped) are
/// packed, in order, into chunks joined by `separator`; a text joins the current chunk while the
/// sum of the chunk's texts' cl100k token counts (separators not counted) stays within
/// `max_tokens`, else it starts a new chunk. A text is never cut, so a text longer than
/// `max_tokens` is a chunk of its own. `max_tokens == 0` puts every text in its own chunk.
pub fn pack_whole(texts: &[&str], max_tokens: usize, separator: &str) -> Vec<Packed> {
    let cleaned: Vec<(usize, &str)> = texts
        .iter()
        .enumerate()
        .map(|(i, t)| (i, py_strip(t)))
        .filter(|(_, t)| !t.is_empty())
        .collect();
    if max_tokens == 0 {
        return cleaned
            .into_iter()
            .map(|(i, t)| Packed {
                text: t.to_string(),
                sources: vec![i],
            })
            .collect();
    }
    let bpe = tiktoken_rs::cl100k_base_singleton();
    let mut out = Vec::new();
    let mut cur: Vec<(usize, &str)> = Vec::new();
    let mut cur_tokens = 0usize;
    let flush = |cur: &mut Vec<(usize, &str)>, out: &mut Vec<Packed>| {
        if !cur.is_empty() {
            out.push(Packed {
                text: cur
                    .iter()
                    .map(|(_, t)| *t)
                    .collect::<Vec<_>>()
                    .join(separator),
                sources: cur.iter().map(|(i, _)| *i).collect(),
            });
            cur.clear();
        }
    };
    for (i, t) in cleaned {
        let n = bpe.encode_ordinary(t).len();
        if !cur.is_empty() && cur_tokens + n > max_tokens {
            flush(&mut cur, &mut out);
            cur_tokens = 0;
        }
        cur.push((i, t));
        cur_tokens += n;
    }
    flush(&mut cur, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use memskill_core::Turn;

    fn sample(turns: &[usize], date: Option<&str>) -> Sample {
        Sample {
            id: "s".into(),
            dataset: "t".into(),
            sessions: turns
                .iter()
                .enumerate()
                .map(|(si, &n)| Session {
                    index: si + 1,
                    date: date.map(str::to_string),
                    turns: (0..n)
                        .map(|j| Turn {
                            id: format!("D{}:{}", si + 1, j + 1),
                            speaker: "A".into(),
                            text: format!("A said, \"turn {j} of session {si}\""),
                        })
                        .collect(),
                })
                .collect(),
            spans: vec![],
            queries: vec![],
        }
    }

    #[test]
    fn parse_and_display_round_trip() {
        for s in ["full-session", "turn-pair", "turn", "fixed-tokens:100:10"] {
            let m: SpanMode = s.parse().unwrap();
            assert_eq!(m.to_string(), s);
        }
        let m = SpanMode::FixedTokens {
            tokens: 100,
            overlap: 10,
        };
        let j = serde_json::to_string(&m).unwrap();
        assert_eq!(j, "\"fixed-tokens:100:10\"");
        assert_eq!(serde_json::from_str::<SpanMode>(&j).unwrap(), m);
        assert!(serde_json::from_str::<SpanMode>("\"fixed-tokens:5:9\"").is_err());
        assert_eq!(
            "fixed-tokens".parse::<SpanMode>().unwrap(),
            SpanMode::FixedTokens {
                tokens: 512,
                overlap: 64
            }
        );
        for bad in [
            "",
            "turns",
            "fixed-tokens:10:10",
            "fixed-tokens:0:0",
            "fixed-tokens:5",
            "fixed-tokens:a:1",
        ] {
            assert!(bad.parse::<SpanMode>().is_err(), "{bad}");
        }
    }

    #[test]
    fn windows_cover_and_overlap() {
        assert_eq!(token_windows(0, 4, 1), vec![]);
        assert_eq!(token_windows(3, 4, 1), vec![(0, 3)]);
        assert_eq!(token_windows(4, 4, 1), vec![(0, 4)]);
        assert_eq!(token_windows(10, 4, 1), vec![(0, 4), (3, 7), (6, 10)]);
        assert_eq!(
            token_windows(11, 4, 1),
            vec![(0, 4), (3, 7), (6, 10), (9, 11)]
        );
        for n in 1..60 {
            for (t, o) in [(5, 0), (5, 2), (7, 6), (1, 0)] {
                let w = token_windows(n, t, o);
                assert_eq!(w[0].0, 0);
                assert_eq!(w.last().unwrap().1, n);
                for pair in w.windows(2) {
                    assert_eq!(pair[0].1 - pair[1].0, o, "n={n} t={t} o={o}");
                    assert_eq!(pair[0].1 - pair[0].0, t);
                }
            }
        }
    }

    #[test]
    fn turn_modes_count_and_headers() {
        let mut s = sample(&[3, 4], Some("1 May 2023"));
        segment(&mut s, &SpanMode::TurnPair);
        assert_eq!(s.spans.len(), 2 + 2);
        assert_eq!(s.spans[1].turn_ids, vec!["D1:3"]);
        assert_eq!(s.spans[2].turn_ids, vec!["D2:1", "D2:2"]);
        assert_eq!(s.spans[3].id, "s:3");
        assert!(s
            .spans
            .iter()
            .all(|sp| sp.text.starts_with("DATE: 1 May 2023\n")));
        segment(&mut s, &SpanMode::Turn);
        assert_eq!(s.spans.len(), 7);
        segment(&mut s, &SpanMode::FullSession);
        assert_eq!(s.spans.len(), 2);
        assert_eq!(s.spans[1].session, Some(2));
        assert_eq!(
            s.spans[0].text,
            "DATE: 1 May 2023\nA said, \"turn 0 of session 0\"\nA said, \"turn 1 of session 0\"\nA said, \"turn 2 of session 0\""
        );
        let mut u = sample(&[2], None);
        segment(&mut u, &SpanMode::FullSession);
        assert!(!u.spans[0].text.starts_with("DATE:"));
    }

    #[test]
    fn fixed_tokens_windows_reconstruct_the_session() {
        let mut s = sample(&[30, 5], Some("d"));
        let (t, o) = (40, 8);
        segment(
            &mut s,
            &SpanMode::FixedTokens {
                tokens: t,
                overlap: o,
            },
        );
        for sess in &s.sessions {
            let full: Vec<String> = sess.turns.iter().map(|t| t.text.clone()).collect();
            let full = full.join("\n");
            let spans: Vec<&Span> = s
                .spans
                .iter()
                .filter(|sp| sp.session == Some(sess.index))
                .collect();
            let bodies: Vec<&str> = spans
                .iter()
                .map(|sp| sp.text.strip_prefix("DATE: d\n").expect("date header"))
                .collect();
            // Each window is a contiguous piece of the session text of about `t` tokens; the
            // first starts it, the last ends it, and consecutive windows share ~`o` tokens.
            let mut pos = 0usize;
            let mut prev_end = 0usize;
            for (k, b) in bodies.iter().enumerate() {
                let at = if k == 0 {
                    0
                } else {
                    pos + full[pos..].find(b).expect("window is a substring")
                };
                if k == 0 {
                    assert!(full.starts_with(b));
                } else {
                    assert!(at < prev_end, "windows {k}-1 and {k} do not overlap");
                    let shared = count_tokens(&full[at..prev_end]);
                    assert!(shared.abs_diff(o) <= 1, "shared {shared} tokens, want {o}");
                }
                let n = count_tokens(b);
                if k + 1 < bodies.len() {
                    assert!(n.abs_diff(t) <= 1, "window has {n} tokens, want {t}");
                } else {
                    assert!(n <= t + 1);
                    assert!(full.ends_with(b));
                }
                pos = at + 1;
                prev_end = at + b.len();
            }
            if count_tokens(&full) > t {
                assert!(bodies.len() >= 2);
            } else {
                assert_eq!(bodies, vec![full.as_str()]);
            }
            assert_eq!(spans[0].turn_ids[0], sess.turns[0].id);
            assert_eq!(
                spans.last().unwrap().turn_ids.last(),
                sess.turns.last().map(|t| &t.id)
            );
        }
        assert!(s.spans.len() >= 3);
    }

    #[test]
    fn reference_layouts_and_windows() {
        // A short text stays whole and unstripped; windows of a long one are stripped.
        let w = fixed_windows("  short text \n", 512, 64);
        assert_eq!(w.len(), 1);
        assert_eq!(w[0].text, "  short text \n");
        let long = "word ".repeat(40);
        let w = fixed_windows(&long, 10, 2);
        assert!(w.len() > 3);
        assert!(w.iter().all(|x| x.text == py_strip(&x.text)));
        assert!(fixed_windows("", 10, 2).is_empty());
        assert_eq!(py_strip("\u{1c} x \u{a0}"), "x");
        // Per-dataset headers and separators.
        let mut s = sample(&[2], Some("D"));
        s.dataset = "locomo".into();
        segment(&mut s, &SpanMode::FullSession);
        assert!(s.spans[0]
            .text
            .starts_with("DATE: D\nCONVERSATION:\nA said"));
        segment(&mut s, &SpanMode::Turn);
        assert!(s.spans[0].text.starts_with("DATE: D\nA said"));
        s.dataset = "longmemeval".into();
        segment(&mut s, &SpanMode::FullSession);
        assert!(s.spans[0].text.starts_with("Session Date: D\n\nA said"));
        assert!(s.spans[0].text.contains("\"\n\nA said"));
        segment(&mut s, &SpanMode::Turn);
        assert!(s.spans[0].text.starts_with("Session Date: D\nA said"));
        // An empty date is no date.
        let mut u = sample(&[1], Some(""));
        u.dataset = "locomo".into();
        segment(&mut u, &SpanMode::FullSession);
        assert!(u.spans[0].text.starts_with("A said"));
    }

    #[test]
    fn pack_whole_never_cuts_a_text() {
        let texts = ["  a b c  ", "", "d e f", &"long ".repeat(50), "g"];
        let p = pack_whole(&texts, 6, TRAJECTORY_SEPARATOR);
        assert_eq!(p[0].text, "a b c\n\n=== TRAJECTORY ===\n\nd e f");
        assert_eq!(p[0].sources, vec![0, 2]);
        assert_eq!(p[1].sources, vec![3]);
        assert_eq!(p[2].text, "g");
        assert_eq!(pack_whole(&texts, 0, "|").len(), 4);
    }

    #[test]
    fn pack_texts_keeps_whole_texts_and_respects_the_limit() {
        let t = |i: usize, words: usize| {
            format!("Trajectory {i}\n")
                + &(0..words)
                    .map(|w| format!("ACTION: go to cabinet {w}"))
                    .collect::<Vec<_>>()
                    .join("\n")
        };
        let texts: Vec<String> = vec![t(0, 6), t(1, 6), t(2, 6), t(3, 200), t(4, 3)];
        let mut refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        refs.insert(2, "   ");
        let limit = 150;
        let chunks = pack_texts(&refs, limit, 16);
        // Whole texts that fit share chunks; the long one is windowed on its own.
        assert_eq!(chunks[0].sources, vec![0, 1]);
        assert!(chunks[0].text.contains("Trajectory 0") && chunks[0].text.contains("Trajectory 1"));
        for c in &chunks {
            assert!(
                count_tokens(&c.text) <= limit + 2,
                "{} tokens",
                count_tokens(&c.text)
            );
        }
        let long: Vec<&Packed> = chunks.iter().filter(|c| c.sources == vec![4]).collect();
        assert!(long.len() >= 2, "the 200-line text is windowed");
        assert!(long.iter().all(|c| !c.text.contains("Trajectory 4")));
        let last = chunks.last().unwrap();
        assert_eq!(last.sources, vec![5]);
        assert!(last.text.starts_with("Trajectory 4"));
        // Every text appears, in order.
        let all: Vec<usize> = chunks.iter().flat_map(|c| c.sources.clone()).collect();
        let mut dedup = all.clone();
        dedup.dedup();
        assert_eq!(dedup, vec![0, 1, 3, 4, 5]);
        // A generous limit puts everything into one chunk; an empty input gives none.
        assert_eq!(pack_texts(&refs, 100_000, 0).len(), 1);
        assert!(pack_texts(&[], 10, 0).is_empty());
        assert!(pack_texts(&["  "], 10, 0).is_empty());
    }
}
