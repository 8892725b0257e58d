//! Issue 46, case 9: a turn far longer than any dialogue turn is refused at load, naming
//! the file, sample and turn, before a run folder exists.

use memskill_datasets::{from_json, DatasetKind, LoadOptions, MAX_TURN_BYTES};

fn locomo(text: &str) -> serde_json::Value {
    serde_json::json!([{
        "sample_id": "s1",
        "conversation": {
            "speaker_a": "A", "speaker_b": "B",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [{"speaker": "A", "dia_id": "D1:1", "text": text}]
        },
        "qa": [{"question": "q?", "answer": "a", "category": 1, "evidence": ["D1:1"]}]
    }])
}

#[test]
fn a_turn_above_the_limit_is_named() {
    let opts = LoadOptions::default();
    assert!(from_json(DatasetKind::Locomo, &locomo("hello"), "l.json", &opts).is_ok());
    let big = "x".repeat(MAX_TURN_BYTES + 1);
    let e = from_json(DatasetKind::Locomo, &locomo(&big), "l.json", &opts)
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("l.json: sample \"s1\", turn \"D1:1\": 10485")
            && e.contains("above the limit of 1048576"),
        "{e}"
    );
}
