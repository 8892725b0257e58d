//! Loader, span and error tests over the hand-written fixtures in `tests/fixtures/`, plus the
//! real LoCoMo file when it is present.

use std::path::{Path, PathBuf};

use memskill_datasets::*;

fn fx(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

fn err_text(e: DatasetError) -> String {
    let s = e.to_string();
    assert!(!s.contains('\n'), "error must be one line: {s}");
    s
}

#[test]
fn locomo_fixture_loads() {
    let s = load_locomo(&fx("locomo_small.json"), &LocomoOptions::default()).unwrap();
    assert_eq!(s.len(), 2);
    assert_eq!(s[0].id, "conv-a");
    assert_eq!(s[0].dataset, "locomo");
    // session_3 has a date but no turns list: not a session
    assert_eq!(s[0].sessions.len(), 2);
    assert_eq!(s[0].sessions[1].index, 2);
    assert_eq!(
        s[0].sessions[1].date.as_deref(),
        Some("7:00 pm on 20 May, 2023")
    );
    assert_eq!(s[0].turn_count(), 7);
    assert_eq!(s[0].sessions[0].turns[0].id, "D1:1");
    assert_eq!(
        s[0].sessions[0].turns[0].text,
        "Caroline said, \"Hey Mel! I went to a support group yesterday.\""
    );
    assert_eq!(
        s[0].sessions[0].turns[1].text,
        "Melanie said, \"That sounds great. Look at my new painting!\" and shared a photo of a painting of a sunrise."
    );
    // category 5 dropped; ids keep the original qa index
    let ids: Vec<&str> = s[0].queries.iter().map(|q| q.id.as_str()).collect();
    assert_eq!(
        ids,
        vec!["conv-a:q0", "conv-a:q1", "conv-a:q2", "conv-a:q4"]
    );
    assert_eq!(s[0].queries[1].answers, vec!["3"]);
    assert_eq!(s[0].queries[1].category, "1");
    assert_eq!(s[0].queries[1].evidence, vec!["D2:3"]);
    assert_eq!(s[1].queries.len(), 1);

    let all = load_locomo(
        &fx("locomo_small.json"),
        &LocomoOptions {
            include_adversarial: true,
        },
    )
    .unwrap();
    assert_eq!(all[0].queries.len(), 5);
    assert_eq!(all[0].queries[3].id, "conv-a:q3");
    assert_eq!(all[0].queries[3].answers, vec!["Yes"]);
    assert_eq!(all[0].queries[3].category, "5");
    // both present: `answer` wins
    assert_eq!(all[1].queries[1].answers, vec!["No"]);
}

#[test]
fn locomo_spans_in_every_mode() {
    let mut s = load_locomo(&fx("locomo_small.json"), &LocomoOptions::default()).unwrap();
    let a = &mut s[0];
    segment(a, &SpanMode::FullSession);
    assert_eq!(a.spans.len(), 2);
    // The reference's layout: date header, `CONVERSATION:` line, one line per turn.
    assert!(a.spans[0]
        .text
        .starts_with("DATE: 1:56 pm on 8 May, 2023\nCONVERSATION:\nCaroline said,"));
    assert_eq!(a.spans[0].turn_ids, vec!["D1:1", "D1:2", "D1:3"]);
    segment(a, &SpanMode::TurnPair);
    assert_eq!(a.spans.len(), 2 + 2);
    assert_eq!(a.spans[1].id, "conv-a:1");
    assert_eq!(
        a.spans[1].text,
        "DATE: 1:56 pm on 8 May, 2023\nCONVERSATION:\nCaroline said, \"Lovely colours.\""
    );
    segment(a, &SpanMode::Turn);
    assert_eq!(a.spans.len(), 7);
    assert_eq!(a.spans[6].id, "conv-a:6");
    assert_eq!(a.spans[6].session, Some(2));
    segment(
        a,
        &SpanMode::FixedTokens {
            tokens: 12,
            overlap: 4,
        },
    );
    assert!(a.spans.len() > 2);
    assert!(a.spans.iter().all(|sp| sp.text.starts_with("DATE: ")));
    for (i, sp) in a.spans.iter().enumerate() {
        assert_eq!(sp.index, i);
        assert_eq!(sp.id, format!("conv-a:{i}"));
    }
}

#[test]
fn longmemeval_fixture_loads_and_splits() {
    let s = load_longmemeval(&fx("longmemeval_small.json"), &LmeOptions::default()).unwrap();
    let ids: Vec<&str> = s.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(ids, vec!["q-001", "q-002"]);
    let q = &s[0];
    assert_eq!(q.sessions.len(), 2);
    assert_eq!(
        q.sessions[0].date.as_deref(),
        Some("2023/05/20 (Sat) 02:21")
    );
    assert_eq!(q.sessions[1].turns[2].id, "S2:T3");
    assert_eq!(
        q.sessions[0].turns[0].text,
        "user: I graduated with a degree in Business Administration."
    );
    assert_eq!(q.queries[0].id, "q-001:q0");
    assert_eq!(q.queries[0].category, "single-session-user");
    assert_eq!(q.queries[0].evidence, vec!["S1:T1"]);
    assert_eq!(q.queries[0].date.as_deref(), Some("2023/05/30 (Tue) 23:40"));
    assert_eq!(s[1].queries[0].answers, vec!["4"]);

    let with_abs = load_longmemeval(
        &fx("longmemeval_small.json"),
        &LmeOptions {
            include_abstention: true,
            only: None,
        },
    )
    .unwrap();
    assert_eq!(with_abs.len(), 3);

    let splits = load_lme_splits(&fx("longmemeval_splits_small.json")).unwrap();
    assert_eq!(splits["test"], vec!["2", "0"]);
    assert!(splits["val"].is_empty());
    // indices 2 (the _abs one, skipped) and 0, in the split's order
    let test = load_longmemeval(
        &fx("longmemeval_small.json"),
        &LmeOptions {
            include_abstention: false,
            only: Some(splits["test"].clone()),
        },
    )
    .unwrap();
    assert_eq!(
        test.iter().map(|s| s.id.as_str()).collect::<Vec<_>>(),
        vec!["q-001"]
    );
    let test = load_longmemeval(
        &fx("longmemeval_small.json"),
        &LmeOptions {
            include_abstention: true,
            only: Some(splits["test"].clone()),
        },
    )
    .unwrap();
    assert_eq!(
        test.iter().map(|s| s.id.as_str()).collect::<Vec<_>>(),
        vec!["q-003_abs", "q-001"]
    );
    // question ids work as selectors too
    let by_id = load_longmemeval(
        &fx("longmemeval_small.json"),
        &LmeOptions {
            include_abstention: false,
            only: Some(vec!["q-002".into()]),
        },
    )
    .unwrap();
    assert_eq!(by_id.len(), 1);
    assert_eq!(by_id[0].id, "q-002");

    let mut q = s[0].clone();
    segment(&mut q, &SpanMode::TurnPair);
    assert_eq!(q.spans.len(), 1 + 2);
    assert!(q.spans[2]
        .text
        .starts_with("Session Date: 2023/05/21 (Sun) 10:00\n\nuser: Thanks."));
}

#[test]
fn real_lme_splits_file_when_present() {
    let p = Path::new("/work/shared/data/longmemeval/longmemeval_s_splits.json");
    let alt = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/data/longmemeval/longmemeval_s_splits.json");
    let p = if p.exists() {
        p.to_path_buf()
    } else if alt.exists() {
        alt
    } else {
        eprintln!("skipped: longmemeval_s_splits.json not present");
        return;
    };
    let s = load_lme_splits(&p).unwrap();
    assert_eq!(
        (s["train"].len(), s["val"].len(), s["test"].len()),
        (297, 98, 105)
    );
}

#[test]
fn hotpotqa_classic_schema() {
    let s = load_hotpotqa(&fx("hotpotqa_distractor_small.json")).unwrap();
    assert_eq!(s.len(), 2);
    let a = &s[0];
    assert_eq!(a.id, "5a8b57f25542995d1e6f1371");
    assert_eq!(a.dataset, "hotpotqa");
    assert_eq!(a.sessions.len(), 3);
    assert_eq!(a.sessions[1].turns[0].id, "D2");
    assert_eq!(
        a.sessions[1].turns[0].text,
        "Scott Derrickson\nScott Derrickson is an American director. He lives in Los Angeles."
    );
    assert!(a.sessions.iter().all(|s| s.date.is_none()));
    assert_eq!(a.queries[0].id, "5a8b57f25542995d1e6f1371:q0");
    assert_eq!(a.queries[0].answers, vec!["yes"]);
    assert_eq!(a.queries[0].category, "comparison");
    assert_eq!(a.queries[0].evidence, vec!["D2", "D3"]);
    let mut b = s[1].clone();
    segment(&mut b, &SpanMode::FullSession);
    assert_eq!(b.spans.len(), 2);
    assert!(
        b.spans[0].text.starts_with("Kiss and Tell (1945 film)\n"),
        "no DATE header without a date"
    );
}

#[test]
fn hotpotqa_long_context_is_one_text_by_default() {
    // The reference's reading: the whole context is one text, windows run over all of it.
    let s = load_hotpotqa(&fx("hotpotqa_longbench_small.jsonl")).unwrap();
    assert_eq!(s.len(), 2);
    assert_eq!(s[0].sessions.len(), 1);
    assert_eq!(s[0].sessions[0].turns.len(), 1);
    assert!(s[0].sessions[0].turns[0]
        .text
        .starts_with("Passage 1:\nBlue Sky (song)\n"));
    assert!(s[0].sessions[0].turns[0]
        .text
        .ends_with("Oslo is the capital of Norway."));
    assert_eq!(s[0].queries[0].answers, vec!["Oslo"]);
    assert_eq!(
        s[1].sessions[0].turns[0].text,
        "The story is set on Kepler-9x.\n\nKepler-9x has 2 moons."
    );
    let mut a = s[0].clone();
    segment(&mut a, &SpanMode::FullSession);
    assert_eq!(a.spans.len(), 1);
    assert_eq!(a.spans[0].text, a.sessions[0].turns[0].text);
    segment(
        &mut a,
        &SpanMode::FixedTokens {
            tokens: 10,
            overlap: 2,
        },
    );
    assert!(a.spans.len() > 3, "windows over the whole context");
    assert!(a.spans[0].text.starts_with("Passage 1:"));
}

#[test]
fn hotpotqa_reference_eval_file_fields() {
    // eval_50/100/200.json records: context, input, answers, num_docs, index.
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("eval_50.json");
    std::fs::write(
        &p,
        r#"[{"context": "Document 1:\nA\nDocument 2:\nB", "input": "Q?", "answers": "B", "num_docs": 2, "index": 7},
            {"context": "Document 1:\nC", "input": "", "answers": ["x"], "num_docs": 1, "index": 8}]"#,
    )
    .unwrap();
    let s = load_hotpotqa(&p).unwrap();
    assert_eq!(s[0].id, "hotpotqa_7");
    assert_eq!(s[0].queries[0].question, "Q?");
    assert_eq!(s[0].queries[0].answers, vec!["B"]);
    assert_eq!(
        s[0].sessions[0].turns[0].text,
        "Document 1:\nA\nDocument 2:\nB"
    );
    // An empty question has no query (the reference skips it).
    assert!(s[1].queries.is_empty());
}

#[test]
fn hotpotqa_longbench_split_documents_option() {
    let s = load_hotpotqa_with(
        &fx("hotpotqa_longbench_small.jsonl"),
        &HotpotOptions {
            split_documents: true,
        },
    )
    .unwrap();
    assert_eq!(s.len(), 2);
    assert_eq!(s[0].id, "lb-1");
    assert_eq!(s[0].sessions.len(), 3);
    assert_eq!(
        s[0].sessions[2].turns[0].text,
        "Oslo\nOslo is the capital of Norway."
    );
    assert_eq!(
        s[0].queries[0].question,
        "Which city is the home of the band that recorded Blue Sky?"
    );
    assert_eq!(s[0].queries[0].answers, vec!["Oslo"]);
    assert_eq!(s[1].sessions.len(), 2);
    assert_eq!(s[1].queries[0].answers, vec!["2", "two"]);
    assert_eq!(
        split_passages("Passage 1:\na\nb\nPassage 2:\nc"),
        vec!["a\nb", "c"]
    );
    assert_eq!(split_passages("just one doc"), vec!["just one doc"]);
}

#[test]
fn dispatch_and_kinds() {
    assert_eq!(
        "LoCoMo".parse::<DatasetKind>().unwrap(),
        DatasetKind::Locomo
    );
    let e = "squad".parse::<DatasetKind>().unwrap_err().to_string();
    for kind in DatasetKind::ALL {
        assert!(e.contains(&kind.to_string()), "{e}");
        assert_eq!(kind.to_string().parse::<DatasetKind>().unwrap(), *kind);
    }
    let s = load(
        DatasetKind::HotpotQa,
        &fx("hotpotqa_distractor_small.json"),
        &LoadOptions::default(),
    )
    .unwrap();
    assert_eq!(s.len(), 2);
}

#[test]
fn error_missing_file() {
    let e = err_text(load_locomo(&fx("nope.json"), &LocomoOptions::default()).unwrap_err());
    assert!(e.contains("nope.json") && e.contains("not found"), "{e}");
}

#[test]
fn error_directory() {
    let dir = tempfile::tempdir().unwrap();
    let e = err_text(load_longmemeval(dir.path(), &LmeOptions::default()).unwrap_err());
    assert!(
        e.contains(&dir.path().display().to_string()) && e.contains("is a directory"),
        "{e}"
    );
}

#[test]
fn error_empty_file() {
    for &kind in DatasetKind::ALL {
        let e = err_text(load(kind, &fx("empty.json"), &LoadOptions::default()).unwrap_err());
        assert!(e.contains("empty.json: empty file"), "{e}");
    }
}

#[test]
fn error_truncated_json_has_line_and_column() {
    let e = load_locomo(&fx("locomo_truncated.json"), &LocomoOptions::default()).unwrap_err();
    assert!(
        matches!(
            e,
            DatasetError::Json {
                truncated: true,
                line: 6,
                ..
            }
        ),
        "{e:?}"
    );
    let e = err_text(e);
    assert!(
        e.contains("locomo_truncated.json: line 6, column") && e.contains("truncated JSON"),
        "{e}"
    );
    let e = err_text(load_hotpotqa(&fx("hotpotqa_truncated.jsonl")).unwrap_err());
    assert!(
        e.contains("hotpotqa_truncated.jsonl: line 2, column") && e.contains("truncated"),
        "{e}"
    );
}

#[test]
fn error_wrong_type_names_the_path() {
    let e = err_text(
        load_locomo(&fx("locomo_wrong_type.json"), &LocomoOptions::default()).unwrap_err(),
    );
    assert!(
        e.ends_with("locomo_wrong_type.json: [1].qa[0].category: expected integer, found string"),
        "{e}"
    );
    let e = err_text(
        load_longmemeval(&fx("longmemeval_wrong_type.json"), &LmeOptions::default()).unwrap_err(),
    );
    assert!(
        e.ends_with("longmemeval_wrong_type.json: [0].haystack_sessions[1][2].content: expected string or number, found array"),
        "{e}"
    );
    let e = err_text(load_hotpotqa(&fx("hotpotqa_wrong_type.json")).unwrap_err());
    assert!(
        e.ends_with("hotpotqa_wrong_type.json: [1].context[0][1]: expected array, found integer"),
        "{e}"
    );
    // the top level itself
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("obj.json");
    std::fs::write(&p, "{\"a\": 1}").unwrap();
    let e = err_text(load_locomo(&p, &LocomoOptions::default()).unwrap_err());
    assert!(
        e.ends_with("obj.json: (top level): expected array, found object"),
        "{e}"
    );
}

#[test]
fn error_missing_field_names_the_path() {
    let e = err_text(
        load_locomo(&fx("locomo_missing_field.json"), &LocomoOptions::default()).unwrap_err(),
    );
    assert!(
        e.ends_with("locomo_missing_field.json: [0].conversation.session_2[1].text: missing field"),
        "{e}"
    );
    let e = err_text(
        load_longmemeval(
            &fx("longmemeval_missing_field.json"),
            &LmeOptions::default(),
        )
        .unwrap_err(),
    );
    assert!(
        e.ends_with("longmemeval_missing_field.json: [1].question: missing field"),
        "{e}"
    );
    let e = err_text(load_hotpotqa(&fx("hotpotqa_missing_field.jsonl")).unwrap_err());
    assert!(
        e.ends_with("hotpotqa_missing_field.jsonl: line 2.answers: missing field"),
        "{e}"
    );
    // a qa item with neither answer nor adversarial_answer
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("noanswer.json");
    std::fs::write(
        &p,
        r#"[{"sample_id":"x","conversation":{},"qa":[{"question":"q","category":1,"evidence":[]}]}]"#,
    )
    .unwrap();
    let e = err_text(load_locomo(&p, &LocomoOptions::default()).unwrap_err());
    assert!(
        e.ends_with("noanswer.json: [0].qa[0].answer: missing field"),
        "{e}"
    );
}

#[test]
fn lme_dates_must_match_sessions() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("lme.json");
    std::fs::write(
        &p,
        r#"[{"question_id":"a","question_type":"t","question":"q","answer":"x","haystack_dates":["d1","d2"],"haystack_sessions":[[]]}]"#,
    )
    .unwrap();
    let e = err_text(load_longmemeval(&p, &LmeOptions::default()).unwrap_err());
    assert!(
        e.contains("[0].haystack_dates: has 2 dates for 1 haystack_sessions"),
        "{e}"
    );
}

fn real_locomo() -> Option<PathBuf> {
    let a = PathBuf::from("/work/shared/data/locomo/locomo10.json");
    let b = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/data/locomo/locomo10.json");
    [a, b].into_iter().find(|p| p.is_file())
}

/// Expected values computed from the file with python (json.load; sessions are the
/// `session_N` list keys, turns their lengths, turn-pair spans ceil(turns/2) per session).
#[test]
fn real_locomo_counts_when_present() {
    let Some(p) = real_locomo() else {
        eprintln!("skipped: locomo10.json not present");
        return;
    };
    let all = load_locomo(
        &p,
        &LocomoOptions {
            include_adversarial: true,
        },
    )
    .unwrap();
    assert_eq!(all.len(), 10);
    let q: usize = all.iter().map(|s| s.queries.len()).sum();
    assert_eq!(q, 1986);
    let sessions: usize = all.iter().map(|s| s.sessions.len()).sum();
    let turns: usize = all.iter().map(|s| s.turn_count()).sum();
    assert_eq!((sessions, turns), (272, 5882));
    let used = load_locomo(&p, &LocomoOptions::default()).unwrap();
    assert_eq!(used.iter().map(|s| s.queries.len()).sum::<usize>(), 1540);
    let mut spans = 0;
    for mut s in used.clone() {
        segment(&mut s, &SpanMode::TurnPair);
        spans += s.spans.len();
    }
    assert_eq!(spans, 3011);
    let test = split_locomo(
        &used,
        memskill_datasets::SplitSpec::Test,
        &LocomoSplits::default(),
    )
    .unwrap();
    assert_eq!(
        test.iter().map(|s| s.id.as_str()).collect::<Vec<_>>(),
        vec!["conv-49", "conv-50"]
    );
}

#[test]
fn error_fifo_and_device_are_refused_before_reading() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("data.json");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    if made.is_ok_and(|s| s.success()) {
        // Reading a FIFO with no writer would block forever.
        for &kind in DatasetKind::ALL {
            let e = err_text(load(kind, &fifo, &LoadOptions::default()).unwrap_err());
            assert!(e.contains("not a regular file"), "{kind}: {e}");
        }
    }
    let e = err_text(load_locomo(Path::new("/dev/zero"), &LocomoOptions::default()).unwrap_err());
    assert!(
        e.contains("/dev/zero") && e.contains("not a regular file"),
        "{e}"
    );
    let big = dir.path().join("big.json");
    std::fs::File::create(&big).unwrap().set_len(1001).unwrap();
    let e = err_text(check_data_file(&big, 1000).unwrap_err());
    assert!(
        e.contains("1001 bytes") && e.contains("data.max_file_mb"),
        "{e}"
    );
    check_data_file(&big, 1001).unwrap();
}

#[test]
fn error_duplicate_sample_ids_name_both_places() {
    let dir = tempfile::tempdir().unwrap();
    // LoCoMo: the same conversation twice.
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(fx("locomo_small.json")).unwrap()).unwrap();
    let first = v[0].clone();
    let doubled = serde_json::Value::Array(vec![first.clone(), v[1].clone(), first]);
    let e = err_text(locomo_from_json(&doubled, "l.json", &LocomoOptions::default()).unwrap_err());
    assert!(
        e.contains("duplicate sample id")
            && e.contains("[2].sample_id")
            && e.contains("[0].sample_id"),
        "{e}"
    );
    // LongMemEval: a repeated question_id.
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(fx("longmemeval_small.json")).unwrap())
            .unwrap();
    let mut arr = v.as_array().unwrap().clone();
    arr.push(arr[0].clone());
    let n = arr.len() - 1;
    let e = err_text(
        longmemeval_from_json(
            &serde_json::Value::Array(arr),
            "m.json",
            &LmeOptions::default(),
        )
        .unwrap_err(),
    );
    assert!(
        e.contains("duplicate sample id")
            && e.contains(&format!("[{n}].question_id"))
            && e.contains("[0].question_id"),
        "{e}"
    );
    // HotpotQA (JSONL): a repeated record.
    let text = std::fs::read_to_string(fx("hotpotqa_longbench_small.jsonl")).unwrap();
    let line = text.lines().next().unwrap();
    let p = dir.path().join("h.jsonl");
    std::fs::write(&p, format!("{text}\n{line}\n")).unwrap();
    let e = err_text(load_hotpotqa(&p).unwrap_err());
    assert!(e.contains("duplicate sample id"), "{e}");
}

#[test]
fn msc_fixture_loads() {
    let s = load_msc(&fx("msc_self_instruct_small.jsonl")).unwrap();
    assert_eq!(s.len(), 3);
    assert_eq!(
        s.iter().map(|x| x.id.as_str()).collect::<Vec<_>>(),
        ["msc-0", "msc-1", "msc-2"]
    );
    let a = &s[0];
    assert_eq!(a.dataset, "msc");
    // two previous sessions, then the current dialog
    assert_eq!(a.sessions.len(), 3);
    assert_eq!(a.sessions[0].date.as_deref(), Some("14 days ago"));
    assert_eq!(a.sessions[1].date.as_deref(), Some("6 days 3 hours ago"));
    assert_eq!(a.sessions[2].date, None);
    assert_eq!(a.sessions[2].index, 3);
    let t = &a.sessions[1].turns[0];
    assert_eq!(t.id, "S2:T1");
    assert_eq!(t.speaker, "Speaker 2");
    assert_eq!(
        t.text,
        "Speaker 2: I signed up for the Millbrook half marathon in October."
    );
    let q = &a.queries[0];
    assert_eq!(q.id, "msc-0:q0");
    assert_eq!(q.question, "Which race did you say you had signed up for?");
    assert_eq!(q.answers, vec!["The Millbrook half marathon"]);
    assert_eq!(q.category, MSC_CATEGORY);
    // turns without an `id` alternate Speaker 1 / Speaker 2 from the session's first turn
    let b = &s[1].sessions[0].turns;
    assert_eq!(
        b.iter().map(|t| t.speaker.as_str()).collect::<Vec<_>>(),
        ["Speaker 1", "Speaker 2", "Speaker 1"]
    );
    assert!(b[2].text.starts_with("Speaker 1: Not yet"));
    // the same through the dispatcher, and from an in-memory document
    let via = load(
        DatasetKind::Msc,
        &fx("msc_self_instruct_small.jsonl"),
        &LoadOptions::default(),
    )
    .unwrap();
    assert_eq!(via, s);
    let doc = serde_json::json!([{"previous_dialogs": [], "dialog": [{"text": "hi"}],
        "self_instruct": {"A": 7, "B": "How many?"}}]);
    let one = from_json(DatasetKind::Msc, &doc, "mem", &LoadOptions::default()).unwrap();
    assert_eq!(one[0].queries[0].answers, vec!["7"]);
    assert_eq!(one[0].sessions.len(), 1);
}

/// Item 5 of the leftovers: `metadata` is not read, so an odd one (a string, a list: the
/// fixture's two copies of the small fixture's second record) does not fail the load; the
/// records load as they do with the usual object.
#[test]
fn msc_metadata_is_ignored_whatever_its_shape() {
    let odd = load_msc(&fx("msc_odd_metadata.jsonl")).unwrap();
    let small = load_msc(&fx("msc_self_instruct_small.jsonl")).unwrap();
    assert_eq!(odd.len(), 2);
    for s in &odd {
        assert_eq!(s.sessions, small[1].sessions);
        assert_eq!(s.queries[0].answers, small[1].queries[0].answers);
    }
}

#[test]
fn msc_errors_name_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let good: Vec<String> = std::fs::read_to_string(fx("msc_self_instruct_small.jsonl"))
        .unwrap()
        .lines()
        .map(String::from)
        .collect();
    let case = |name: &str, edit: &dyn Fn(&mut serde_json::Value)| {
        let mut v: serde_json::Value = serde_json::from_str(&good[1]).unwrap();
        edit(&mut v);
        let p = dir.path().join(name);
        std::fs::write(&p, format!("{}\n{}\n", good[0], v)).unwrap();
        err_text(load_msc(&p).unwrap_err())
    };
    let e = case("no_question.jsonl", &|v| {
        v["self_instruct"].as_object_mut().unwrap().remove("B");
    });
    assert!(
        e.contains("no_question.jsonl") && e.contains("line 2.self_instruct.B: missing field"),
        "{e}"
    );
    let e = case("bad_turn.jsonl", &|v| {
        v["previous_dialogs"][1]["dialog"][0]["text"] = serde_json::json!(3);
    });
    assert!(
        e.contains("line 2.previous_dialogs[1].dialog[0].text: expected string, found integer"),
        "{e}"
    );
    let e = case("no_dialog.jsonl", &|v| {
        v.as_object_mut().unwrap().remove("dialog");
    });
    assert!(e.contains("line 2.dialog: missing field"), "{e}");
    let e = case("bad_date.jsonl", &|v| {
        v["previous_dialogs"][0]["time_back"] = serde_json::json!(["3 days"]);
    });
    assert!(
        e.contains("line 2.previous_dialogs[0].time_back: expected string, found array"),
        "{e}"
    );
}

/// Item 6 of the leftovers: sessions after a null session or a missing session number are
/// read, in order of their numbers, as the loader reads them.
#[test]
fn locomo_turn_texts_read_past_a_null_or_missing_session_as_the_loader_does() {
    let turn =
        |id: &str, text: &str| serde_json::json!({"speaker": "A", "dia_id": id, "text": text});
    let doc = serde_json::json!([{
        "sample_id": "c1",
        "qa": [],
        "conversation": {
            "speaker_a": "A",
            "speaker_b": "B",
            "session_10": [turn("D10:1", "tenth")],
            "session_1": [turn("D1:1", "first"), turn("D1:2", "first again")],
            "session_1_date_time": "1 May 2023",
            "session_2": null,
            "session_4": [turn("D4:1", "fourth")],
            "session_4_date_time": "4 May 2023",
        },
    }, {
        "sample_id": "c2",
        "qa": [],
        "conversation": {"session_3": [turn("D3:1", "other")]},
    }]);
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("gaps.json");
    std::fs::write(&p, doc.to_string()).unwrap();
    let texts = locomo_turn_texts(&p, usize::MAX).unwrap();
    assert_eq!(texts, ["first", "first again", "fourth", "tenth", "other"]);
    // the loader's sessions and turns, in the same order
    let samples = load_locomo(&p, &LocomoOptions::default()).unwrap();
    let loaded: Vec<String> = samples
        .iter()
        .flat_map(|s| &s.sessions)
        .flat_map(|x| &x.turns)
        .map(|t| t.text.clone())
        .collect();
    let want: Vec<String> = texts.iter().map(|t| format!("A said, \"{t}\"")).collect();
    assert_eq!(loaded, want);
    assert_eq!(
        samples[0]
            .sessions
            .iter()
            .map(|s| s.index)
            .collect::<Vec<_>>(),
        [1, 4, 10]
    );
    assert_eq!(locomo_turn_texts(&p, 3).unwrap(), texts[..3]);
}

#[test]
fn locomo_turn_texts_are_the_raw_texts_in_file_order() {
    let all = locomo_turn_texts(&fx("locomo_small.json"), usize::MAX).unwrap();
    let samples = load_locomo(&fx("locomo_small.json"), &LocomoOptions::default()).unwrap();
    // the loader renders `{speaker} said, "{text}"`; the texts are what is inside the quotes
    let rendered: Vec<&str> = samples
        .iter()
        .flat_map(|s| &s.sessions)
        .flat_map(|x| &x.turns)
        .map(|t| t.text.as_str())
        .collect();
    assert_eq!(all.len(), rendered.len());
    for (raw, r) in all.iter().zip(&rendered) {
        assert!(r.contains(&format!("\"{raw}\"")), "{raw:?} vs {r:?}");
    }
    assert_eq!(
        locomo_turn_texts(&fx("locomo_small.json"), 3).unwrap(),
        all[..3]
    );
    let e = err_text(locomo_turn_texts(&fx("locomo_truncated.json"), 10).unwrap_err());
    assert!(e.contains("locomo_truncated.json"), "{e}");
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("bad_turn.json");
    let doc = serde_json::json!([{"conversation": {"session_1": [{"text": "a"}, {"text": 2}]}}]);
    std::fs::write(&p, doc.to_string()).unwrap();
    let e = err_text(locomo_turn_texts(&p, 10).unwrap_err());
    assert!(
        e.contains("[0].conversation.session_1[1].text: expected string"),
        "{e}"
    );
}
