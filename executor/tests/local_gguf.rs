//! The local SmolLM2 GGUF backend (skipped when the asset is absent).

use memskill_core::{ChatRequest, Llm, Message};
use memskill_executor::{default_smollm2_path, LocalConfig, LocalGguf};

fn model() -> Option<LocalGguf> {
    let p = default_smollm2_path();
    if !p.exists() {
        eprintln!(
            "skipped: {} missing; run scripts/fetch-assets.sh",
            p.display()
        );
        return None;
    }
    Some(
        LocalGguf::load(&LocalConfig {
            model_path: p,
            ..LocalConfig::default()
        })
        .expect("loads"),
    )
}

#[test]
fn smollm2_answers_and_tokenizer_round_trips() {
    let Some(m) = model() else { return };
    let tok = m.tokenizer();
    for text in [
        "Alice moved to Paris in May. Where does Alice live?",
        "  naïve café – 123,456 ✓\n\ttabs",
        "<|im_start|>user\nhi<|im_end|>\n",
    ] {
        let enc = tok.encode(text, false).unwrap();
        assert!(!enc.get_ids().is_empty());
        assert_eq!(tok.decode(enc.get_ids(), false).unwrap(), text);
    }
    // ChatML markers are single special tokens
    let im = tok.encode("<|im_start|>", false).unwrap();
    assert_eq!(im.get_ids().len(), 1);

    let req = ChatRequest::new(vec![Message::user(
        "Alice moved to Paris in May. Where does Alice live?",
    )])
    .with_max_tokens(16);
    let r = m.chat(&req).unwrap();
    eprintln!("answer: {:?}, timing {:?}", r.text, m.last_timing());
    assert!(r.text.contains("Paris"), "{:?}", r.text);
    assert!(r.usage.completion_tokens > 0 && r.usage.completion_tokens <= 16);
    // stop strings cut the text; greedy decoding is deterministic, so it is a prefix of the first answer
    let mut stop = req.clone();
    stop.stop = vec!["Paris".into()];
    let cut = m.chat(&stop).unwrap().text;
    assert!(
        !cut.contains("Paris") && r.text.starts_with(&cut),
        "{cut:?} vs {:?}",
        r.text
    );
    assert_eq!(m.stats().calls, 2);
}
