//! Two reading methods of the paper's Table 1, in the evaluation harness of the baselines
//! (same samples, spans, retriever, answer prompt, answerer, scorer and judge as `memskill
//! eval`), written from their papers with prompts in our own words (`trainer/prompts/reader.*`):
//!
//! - **Chain-of-Notes** (Yu et al., 2023): the spans are stored verbatim (as `raw-rag`); for
//!   each question the top `answer.retrieve` spans are retrieved, the answer model writes one
//!   reading note per passage (what it says about the question, or "irrelevant"), and the
//!   question is answered from the relevant notes instead of the passages. One notes call per
//!   question ([`NOTES_MAX_TOKENS`]).
//! - **ReadAgent** (Lee et al., 2024): the conversation's turns are read in order and cut into
//!   pages where the executor model says the story pauses (episode pagination: a page ends at
//!   one of the labelled turn boundaries past [`PAGE_MIN_WORDS`] words, at most
//!   [`PAGE_MAX_WORDS`]); each page is shortened to a gist (gist memory). For each question the
//!   answer model sees every gist and names at most [`LOOKUP_MAX_PAGES`] pages to re-read
//!   (interactive look-up); the question is then answered from the gists with those pages in
//!   full. Calls per sample: one per page break chosen and one gist per page, then one look-up
//!   per question.
//!
//! Failures are counted, never scored: a failed notes or look-up call leaves its question
//! unscored (an error in `results.json`); a failed pagination or gist call is a failed
//! memory-building call (`memory_call_errors`), the page then ending at its largest size or
//! keeping its full text as its gist. A reply that cannot be read (no note lines, no label,
//! no page number) falls back the same way: notes = the whole reply as one note, the break =
//! the last label, no page re-read.

use anyhow::Result;
use memskill_core::{Llm, MemoryBank, MemoryItem, PromptSet, Provenance, Query, Sample};

use crate::episode::{
    answer_from, answer_queries_read, par_map, unanswered, EpisodeCtx, QueryResult, Read,
};
use crate::method_prompts::{ask, render, GistCtx, LookupCtx, NotesCtx, PaginateCtx};

/// Tokens of one Chain-of-Notes reply (notes on every retrieved passage).
pub const NOTES_MAX_TOKENS: u32 = 768;
/// ReadAgent's page size in words: a page may end once it holds this many...
pub const PAGE_MIN_WORDS: usize = 280;
/// ...and ends at the latest here (a single longer turn is a page of its own).
pub const PAGE_MAX_WORDS: usize = 600;
/// Tokens of a pagination reply (a label number) and of a gist.
pub const PAGINATE_MAX_TOKENS: u32 = 16;
pub const GIST_MAX_TOKENS: u32 = 256;
/// Pages one question may re-read in full, and the tokens of that reply.
pub const LOOKUP_MAX_PAGES: usize = 5;
pub const LOOKUP_MAX_TOKENS: u32 = 48;

// ---- Chain-of-Notes ---------------------------------------------------------------------

/// The notes of a reply on `n` passages: per passage its note, None when the reply calls it
/// irrelevant or says nothing of it. None overall when no line of the reply is a note.
pub fn parse_notes(reply: &str, n: usize) -> Option<Vec<Option<String>>> {
    let mut notes: Vec<Option<String>> = vec![None; n];
    let mut any = false;
    for line in reply.lines() {
        let line = line.trim().trim_start_matches(['-', '*', ' ']);
        let Some(rest) = line.strip_prefix('[') else {
            continue;
        };
        let Some((num, after)) = rest.split_once(']') else {
            continue;
        };
        let Ok(i) = num.trim().parse::<usize>() else {
            continue;
        };
        if i == 0 || i > n {
            continue;
        }
        let after = after.trim();
        let text = match after.get(..5) {
            Some(p) if p.eq_ignore_ascii_case("note:") => after[5..].trim(),
            _ => after,
        };
        any = true;
        let irrelevant = text
            .trim_end_matches('.')
            .eq_ignore_ascii_case("irrelevant");
        if !text.is_empty() && !irrelevant {
            notes[i - 1] = Some(text.to_string());
        }
    }
    any.then_some(notes)
}

/// The memories a Chain-of-Notes question is answered from: each relevant passage with its
/// note as the text (provenance kept), the whole reply as one note when no note line can be
/// read, nothing when every passage is irrelevant.
fn noted(mems: &[&MemoryItem], reply: &str) -> Vec<MemoryItem> {
    match parse_notes(reply, mems.len()) {
        Some(notes) => mems
            .iter()
            .zip(notes)
            .filter_map(|(m, note)| {
                note.map(|text| MemoryItem {
                    content: text,
                    ..(*m).clone()
                })
            })
            .collect(),
        None => match mems.first() {
            Some(m) if !reply.trim().is_empty() => vec![MemoryItem {
                content: reply.trim().to_string(),
                ..(*m).clone()
            }],
            _ => Vec::new(),
        },
    }
}

/// Chain-of-Notes on one sample whose spans are stored verbatim in `memory`: the harness's
/// retrieval, a note per retrieved span, the answer from the relevant notes.
pub fn chain_of_notes_answers(
    ctx: &EpisodeCtx<'_>,
    sample: &Sample,
    memory: &MemoryBank,
    queries: &[&Query],
    with_judge: bool,
) -> Result<Vec<QueryResult>> {
    let note = |q: &Query, mems: &[&MemoryItem]| -> Result<Read> {
        let messages = render(
            ctx.prompts,
            "reader.notes",
            NotesCtx {
                question: &q.question,
                passages: mems.iter().map(|m| m.content.as_str()).collect(),
            },
        )?;
        Ok(match ask(ctx.answerer, messages, NOTES_MAX_TOKENS) {
            Err(e) => Read::Failed(format!("notes call for {}: {e}", q.id)),
            Ok(reply) => Read::Replace(noted(mems, &reply)),
        })
    };
    answer_queries_read(ctx, sample, memory, queries, with_judge, Some(&note))
}

// ---- ReadAgent --------------------------------------------------------------------------

/// One turn of the conversation as ReadAgent reads it (a session's first turn carries the
/// session's date line), with its id and its length in words.
#[derive(Debug, Clone, PartialEq)]
pub struct Paragraph {
    pub text: String,
    pub turn_id: String,
    pub words: usize,
}

/// The sample's turns in order, as paragraphs.
pub fn paragraphs(sample: &Sample) -> Vec<Paragraph> {
    let mut out = Vec::new();
    for s in &sample.sessions {
        for (i, t) in s.turns.iter().enumerate() {
            let text = match (&s.date, i) {
                (Some(d), 0) => format!("[session {}, {d}]\n{}", s.index, t.text),
                (None, 0) => format!("[session {}]\n{}", s.index, t.text),
                _ => t.text.clone(),
            };
            let words = text.split_whitespace().count();
            out.push(Paragraph {
                text,
                turn_id: t.id.clone(),
                words,
            });
        }
    }
    out
}

/// Where the page starting at paragraph `start` may end: the paragraph indices (exclusive
/// ends) past [`PAGE_MIN_WORDS`] and within [`PAGE_MAX_WORDS`], and the furthest paragraph
/// shown. An empty list: the page has no choice (the rest of the text fits in one page, or
/// one paragraph alone passes the maximum) and ends at the returned end.
pub fn break_choices(paras: &[Paragraph], start: usize) -> (Vec<usize>, usize) {
    let mut words = 0;
    let mut choices = Vec::new();
    let mut end = start;
    for (i, p) in paras.iter().enumerate().skip(start) {
        if i > start && words + p.words > PAGE_MAX_WORDS {
            break;
        }
        words += p.words;
        end = i + 1;
        if words >= PAGE_MIN_WORDS && end < paras.len() {
            choices.push(end);
        }
    }
    if end == paras.len() {
        // the rest fits in one page
        return (Vec::new(), end);
    }
    if choices.len() <= 1 {
        // one place only (or none: the next paragraph alone passes the maximum)
        return (Vec::new(), choices.first().copied().unwrap_or(end));
    }
    (choices, end)
}

/// The break a pagination reply chose: the first number in it that is one of `labels`.
pub fn parse_label(reply: &str, labels: &[usize]) -> Option<usize> {
    numbers(reply).into_iter().find(|n| labels.contains(n))
}

/// The pages a look-up reply names (1-based in the reply, 0-based here), in the reply's
/// order, without repeats or numbers out of range, at most `max`.
pub fn parse_pages(reply: &str, pages: usize, max: usize) -> Vec<usize> {
    let mut out: Vec<usize> = Vec::new();
    for n in numbers(reply) {
        if (1..=pages).contains(&n) && !out.contains(&(n - 1)) && out.len() < max {
            out.push(n - 1);
        }
    }
    out
}

fn numbers(s: &str) -> Vec<usize> {
    s.split(|c: char| !c.is_ascii_digit())
        .filter(|t| !t.is_empty() && t.len() <= 9)
        .filter_map(|t| t.parse().ok())
        .collect()
}

/// The labelled stretch shown for a break: the paragraphs `start..end` with `<k>` after
/// each paragraph that ends a possible page (k = the label, 1-based in the page).
fn labelled(paras: &[Paragraph], start: usize, end: usize, choices: &[usize]) -> String {
    let mut s = String::new();
    for (i, p) in paras[start..end].iter().enumerate() {
        s.push_str(&p.text);
        s.push('\n');
        if let Some(k) = choices.iter().position(|c| *c == start + i + 1) {
            s.push_str(&format!("<{}>\n", k + 1));
        }
    }
    s
}

/// A sample read as pages: their full texts, their gists and the turns each holds, with the
/// memory-building calls made (breaks and gists) and how many failed.
#[derive(Debug, Clone, Default)]
pub struct Pages {
    pub texts: Vec<String>,
    pub gists: Vec<String>,
    pub turns: Vec<Vec<String>>,
    pub calls: usize,
    pub errors: usize,
}

/// Episode pagination: the page ends the executor model chooses, over the whole sample.
fn paginate(
    llm: &dyn Llm,
    prompts: &PromptSet,
    paras: &[Paragraph],
    pages: &mut Pages,
) -> Result<Vec<(usize, usize)>> {
    let mut spans = Vec::new();
    let mut start = 0;
    while start < paras.len() {
        let (choices, end) = break_choices(paras, start);
        let stop = if choices.is_empty() {
            end
        } else {
            let labels: Vec<usize> = (1..=choices.len()).collect();
            let text = labelled(paras, start, end, &choices);
            let messages = render(
                prompts,
                "reader.paginate",
                PaginateCtx {
                    text: &text,
                    labels: labels.clone(),
                },
            )?;
            pages.calls += 1;
            let reply = ask(llm, messages, PAGINATE_MAX_TOKENS).unwrap_or_else(|_| {
                pages.errors += 1;
                String::new()
            });
            let k = parse_label(&reply, &labels).unwrap_or(choices.len());
            choices[k - 1]
        };
        spans.push((start, stop));
        start = stop;
    }
    Ok(spans)
}

/// ReadAgent's memory of one sample: pagination, then a gist per page (the executor model).
pub fn read_agent_pages(ctx: &EpisodeCtx<'_>, sample: &Sample) -> Result<Pages> {
    let paras = paragraphs(sample);
    let mut pages = Pages::default();
    let bounds = paginate(ctx.executor, ctx.prompts, &paras, &mut pages)?;
    for (n, (a, b)) in bounds.into_iter().enumerate() {
        let text: Vec<&str> = paras[a..b].iter().map(|p| p.text.as_str()).collect();
        let text = text.join("\n");
        let messages = render(
            ctx.prompts,
            "reader.gist",
            GistCtx {
                page: &text,
                number: n + 1,
            },
        )?;
        pages.calls += 1;
        let gist = match ask(ctx.executor, messages, GIST_MAX_TOKENS) {
            Ok(g) if !g.trim().is_empty() => g.trim().to_string(),
            Ok(_) => text.clone(),
            Err(_) => {
                pages.errors += 1;
                text.clone()
            }
        };
        pages
            .turns
            .push(paras[a..b].iter().map(|p| p.turn_id.clone()).collect());
        pages.texts.push(text);
        pages.gists.push(gist);
    }
    Ok(pages)
}

/// The pages as two memory banks in page order (gists, full texts) for the answerer; each
/// page's provenance names its first turn. No vectors: ReadAgent looks pages up by the
/// model's choice, never by similarity, so nothing is embedded.
fn page_banks(sample: &Sample, pages: &Pages) -> Result<(MemoryBank, MemoryBank)> {
    let mut banks = (MemoryBank::new(), MemoryBank::new());
    for (texts, bank) in [(&pages.gists, &mut banks.0), (&pages.texts, &mut banks.1)] {
        for (i, t) in texts.iter().enumerate() {
            let prov = Provenance {
                // the page's first turn, as the other methods name their sources
                span_id: format!(
                    "{}:{}",
                    sample.id,
                    pages.turns[i].first().map_or("", String::as_str)
                ),
                skills: Vec::new(),
                step: 0,
                observed_at: None,
            };
            bank.insert(t.clone(), Vec::new(), prov)?;
        }
    }
    Ok(banks)
}

/// ReadAgent's answers on one sample: look up pages per question, answer from the gists
/// with the looked-up pages in full.
pub fn read_agent_answers(
    ctx: &EpisodeCtx<'_>,
    sample: &Sample,
    pages: &Pages,
    queries: &[&Query],
    with_judge: bool,
) -> Result<Vec<QueryResult>> {
    let (gists, full) = page_banks(sample, pages)?;
    let results = par_map(queries, ctx.query_workers, |_, q| -> Result<QueryResult> {
        let messages = render(
            ctx.prompts,
            "reader.lookup",
            LookupCtx {
                question: &q.question,
                gists: &pages.gists,
                max_pages: LOOKUP_MAX_PAGES,
            },
        )?;
        let reply = match ask(ctx.answerer, messages, LOOKUP_MAX_TOKENS) {
            Ok(r) => r,
            Err(e) => {
                let mut r = unanswered(sample, q, &[]);
                r.error = Some(format!("look-up call for {}: {e}", q.id));
                return Ok(r);
            }
        };
        let chosen = parse_pages(&reply, pages.gists.len(), LOOKUP_MAX_PAGES);
        let mems: Vec<&MemoryItem> = (0..pages.gists.len())
            .filter_map(|i| {
                let bank = if chosen.contains(&i) { &full } else { &gists };
                bank.get(i as memskill_core::MemoryId)
            })
            .collect();
        answer_from(ctx, sample, q, &mems, with_judge)
    });
    results.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use memskill_core::{ChatRequest, ChatResponse, LlmError, Session, Turn, Usage};

    #[test]
    fn notes_are_read_per_passage_and_irrelevant_ones_dropped() {
        let reply = "[1] NOTE: Anna moved to Lyon in May.\n[2] NOTE: irrelevant\n\
                     - [3] note: Ben visited her.\n[9] NOTE: out of range\nsome chatter";
        let notes = parse_notes(reply, 3).unwrap();
        assert_eq!(
            notes,
            [
                Some("Anna moved to Lyon in May.".to_string()),
                None,
                Some("Ben visited her.".to_string())
            ]
        );
        assert_eq!(parse_notes("no notes here", 2), None);
        assert_eq!(parse_notes("[1] Irrelevant.", 1), Some(vec![None]));
    }

    #[test]
    fn labels_and_pages_are_read_from_replies() {
        assert_eq!(parse_label("Label 2.", &[1, 2, 3]), Some(2));
        assert_eq!(parse_label("<7> or 3", &[1, 2, 3]), Some(3));
        assert_eq!(parse_label("none", &[1, 2]), None);
        assert_eq!(parse_pages("3, 1, 3, 12, 0, 2", 5, 2), vec![2, 0]);
        assert_eq!(parse_pages("0", 5, 5), Vec::<usize>::new());
        assert_eq!(
            parse_pages("99999999999999999999 4", 5, 5),
            vec![3],
            "an overlong number is skipped, not a panic"
        );
    }

    fn para(words: usize) -> Paragraph {
        Paragraph {
            text: vec!["w"; words].join(" "),
            turn_id: String::new(),
            words,
        }
    }

    #[test]
    fn a_page_may_end_between_the_minimum_and_the_maximum() {
        let paras: Vec<Paragraph> = (0..10).map(|_| para(100)).collect();
        // 100-word turns: a page may end after 3 to 6 of them (300..600 words)
        let (choices, end) = break_choices(&paras, 0);
        assert_eq!((choices, end), (vec![3, 4, 5, 6], 6));
        // the rest fits in one page: no choice, the page ends at the last turn
        assert_eq!(break_choices(&paras, 5), (Vec::new(), 10));
        // one turn above the maximum is a page of its own
        let big = vec![para(700), para(100), para(100)];
        assert_eq!(break_choices(&big, 0), (Vec::new(), 1));
    }

    struct Replies(std::sync::Mutex<Vec<Result<String, ()>>>);
    impl Llm for Replies {
        fn id(&self) -> String {
            "replies".into()
        }
        fn chat(&self, _: &ChatRequest) -> Result<ChatResponse, LlmError> {
            let next = self.0.lock().unwrap().remove(0);
            next.map(|text| ChatResponse {
                text,
                usage: Usage::default(),
                latency_ms: 0,
                cached: false,
                truncated: false,
            })
            .map_err(|_| LlmError::Http {
                endpoint: "test".into(),
                status: 500,
                body: "down".into(),
            })
        }
    }

    #[test]
    fn pagination_follows_the_model_and_falls_back_on_failures() {
        let prompts = crate::prompts::defaults().unwrap();
        let paras: Vec<Paragraph> = (0..14).map(|_| para(100)).collect();
        // page 1: labels at 3,4,5,6 -> the model picks label 2 (ends after 4 turns);
        // page 2 (from 4): the reply names no label -> the last one (ends after 10);
        // page 3 (from 10): 4 turns left, fits
        let llm = Replies(std::sync::Mutex::new(vec![
            Ok("2".into()),
            Ok("I am not sure".into()),
        ]));
        let mut pages = Pages::default();
        let b = paginate(&llm, &prompts, &paras, &mut pages).unwrap();
        assert_eq!(b, vec![(0, 4), (4, 10), (10, 14)]);
        assert_eq!((pages.calls, pages.errors), (2, 0));
        // a failed call is counted and the page takes its largest size
        let llm = Replies(std::sync::Mutex::new(vec![Err(()), Ok("1".into())]));
        let mut pages = Pages::default();
        let b = paginate(&llm, &prompts, &paras, &mut pages).unwrap();
        assert_eq!(b, vec![(0, 6), (6, 9), (9, 14)]);
        assert_eq!((pages.calls, pages.errors), (2, 1));
    }

    #[test]
    fn paragraphs_carry_the_session_date_once() {
        let sample = Sample {
            id: "s".into(),
            dataset: "locomo".into(),
            sessions: vec![Session {
                index: 2,
                date: Some("1 May 2023".into()),
                turns: vec![
                    Turn {
                        id: "D2:1".into(),
                        speaker: "Anna".into(),
                        text: "Anna said, \"hi\"".into(),
                    },
                    Turn {
                        id: "D2:2".into(),
                        speaker: "Ben".into(),
                        text: "Ben said, \"hello there\"".into(),
                    },
                ],
            }],
            spans: Vec::new(),
            queries: Vec::new(),
        };
        let p = paragraphs(&sample);
        assert_eq!(p[0].text, "[session 2, 1 May 2023]\nAnna said, \"hi\"");
        assert_eq!(
            (p[1].text.as_str(), p[1].words),
            ("Ben said, \"hello there\"", 4)
        );
    }
}
