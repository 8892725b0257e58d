//! Property tests: the action parser never panics and never returns an out-of-range index.

use memskill_core::{ActionKind, MemoryAction};
use memskill_executor::{parse_actions, parse_response};
use proptest::prelude::*;

fn check(text: &str, n: usize, allowed: &[ActionKind]) {
    let results = parse_response(text, n);
    assert!(!results.is_empty(), "the reference always returns a result");
    let unfiltered = parse_actions(text, n, None);
    assert_eq!(
        unfiltered.actions.len() + unfiltered.problems.len(),
        results.len()
    );
    let o = parse_actions(text, n, Some(allowed));
    for a in &o.actions {
        assert!(allowed.contains(&a.kind()), "{a:?} not allowed");
        match a {
            MemoryAction::Update { index, .. } | MemoryAction::Delete { index } => {
                assert!(*index < n, "{a:?} >= {n}")
            }
            _ => {}
        }
    }
}

fn fragment() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("ACTION: INSERT\n".to_string()),
        Just("ACTION: UPDATE\n".to_string()),
        Just("action=delete\n".to_string()),
        Just("**ACTION** - NOOP\n".to_string()),
        Just("```json\n".to_string()),
        Just("```\n".to_string()),
        (0usize..40).prop_map(|i| format!("MEMORY_INDEX: {i}\n")),
        (0usize..40, 0usize..40).prop_map(|(i, j)| format!("memory_index = [{i}, {j}]\n")),
        "[a-zA-Z0-9 ,.:;'\"{}\\[\\]]{0,30}".prop_map(|s| format!("MEMORY_ITEM: {s}\n")),
        "[^\n]{0,20}".prop_map(|s| format!("UPDATED_MEMORY: {s}\n")),
        (0i64..50)
            .prop_map(|i| format!("{{\"actions\": [{{\"action\": \"delete\", \"index\": {i}}}]}}")),
        (0i64..50).prop_map(|i| format!(
            "[{{\"action\": \"update\", \"index\": \"{i}\", \"content\": \"x\"}}]"
        )),
        any::<String>(),
    ]
}

fn allowed_sets() -> impl Strategy<Value = Vec<ActionKind>> {
    proptest::sample::subsequence(ActionKind::ALL.to_vec(), 0..=4)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 600, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..400), n in 0usize..20, allowed in allowed_sets()) {
        let text = String::from_utf8_lossy(&bytes);
        check(&text, n, &allowed);
    }

    #[test]
    fn structured_noise_never_panics(parts in proptest::collection::vec(fragment(), 0..12), n in 0usize..20, allowed in allowed_sets()) {
        check(&parts.concat(), n, &allowed);
    }
}
