//! The local backend's structured outputs (`--features llguidance`) under the executor's
//! action schema: the token mask of `memskill_local::guided` on a toy vocabulary, and the
//! SmolLM2 model's replies (skipped when the asset is absent).
#![cfg(feature = "llguidance")]

use memskill_core::{ChatRequest, Llm};
use memskill_local::guided::{Guide, GuidedReply};
use memskill_local::{default_smollm2_path, LocalConfig, LocalGguf};

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

/// Single bytes, a few JSON pieces, and EOS (the last token).
fn guide() -> (Guide, Vec<Vec<u8>>) {
    let mut words: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
    for w in [
        "\"},",
        "\"}",
        "\"}]}",
        "}]}",
        "]}",
        "\": \"",
        "action",
        "memory_item",
    ] {
        words.push(w.as_bytes().to_vec());
    }
    words.push(b"\xFF<eos>".to_vec());
    let eos = words.len() as u32 - 1;
    (Guide::from_words(words.clone(), eos).unwrap(), words)
}

fn id(words: &[Vec<u8>], w: &str) -> u32 {
    words.iter().position(|x| x == w.as_bytes()).unwrap() as u32
}

fn feed(g: &mut GuidedReply, words: &[Vec<u8>], text: &str) {
    for b in text.bytes() {
        g.consume(id(words, &(b as char).to_string())).unwrap();
    }
}

fn allowed(v: &[f32]) -> Vec<usize> {
    (0..v.len()).filter(|&i| v[i] > f32::NEG_INFINITY).collect()
}

#[test]
fn the_mask_follows_the_schema_and_closes_at_the_end_of_the_budget() {
    let (guide, words) = guide();
    let schema = memskill_executor::executor_schema(&[memskill_core::ActionKind::Insert], 0, 128);
    let mut g = guide.matcher(&schema).unwrap();
    feed(
        &mut g,
        &words,
        r#"{"actions": [{"action": "INSERT", "memory_item": "ab"#,
    );
    assert!(g.in_string());
    let n = words.len();
    // free: string content and the tokens that end the string
    let mut v = vec![0.0f32; n];
    g.mask(&mut v).unwrap();
    let free = allowed(&v);
    for w in ["c", "\"", "\"},", "\"}]}"] {
        assert!(free.contains(&(id(&words, w) as usize)), "{w}");
    }
    // lossless: the string may go on or end, but not step into a new action
    let mut v = vec![0.0f32; n];
    g.mask(&mut v).unwrap();
    g.close(&mut v, true);
    let lossless = allowed(&v);
    assert!(lossless.contains(&(id(&words, "c") as usize)));
    assert!(lossless.contains(&(id(&words, "\"}]}") as usize)));
    assert!(!lossless.contains(&(id(&words, "\"},") as usize)));
    assert!(!g.cut());
    // any: only closing; the model wanted more text ("c"), so the text is cut
    let mut v = vec![0.0f32; n];
    v[id(&words, "c") as usize] = 5.0;
    g.mask(&mut v).unwrap();
    g.close(&mut v, false);
    let any = allowed(&v);
    assert!(!any.contains(&(id(&words, "c") as usize)));
    assert!(any.iter().all(|&i| words[i][0] == b'"'), "{any:?}");
    g.consume(id(&words, "\"}]}")).unwrap();
    assert!(g.cut());
    // outside strings, after a complete action: closing brackets only
    let mut g = guide.matcher(&schema).unwrap();
    feed(&mut g, &words, r#"{"actions": [{"action": "NOOP"}"#);
    let mut v = vec![0.0f32; n];
    g.mask(&mut v).unwrap();
    assert!(allowed(&v).contains(&(id(&words, ",") as usize)));
    g.close(&mut v, true);
    let closing = allowed(&v);
    assert!(
        !closing.contains(&(id(&words, ",") as usize)),
        "{closing:?}"
    );
    assert!(closing.contains(&(id(&words, "]}") as usize)));
    g.consume(id(&words, "]}")).unwrap();
    assert!(!g.cut());
}

/// Structured outputs on the local backend (`--features llguidance`): every reply under the
/// executor's schema is a JSON document of allowed actions with in-range indices, at greedy
/// and sampled temperatures; prints the token mask's cost per token against the decode time
/// per token (not asserted: no timed tests).
#[test]
fn structured_replies_follow_the_schema() {
    use memskill_core::{ActionKind, PromptSet, Span};
    use memskill_executor::{executor_messages_with, executor_schema, parse_structured};
    let Some(m) = model() else { return };
    let prompts = PromptSet::with_defaults(memskill_executor::PROMPT_TEMPLATES).unwrap();
    let bank = memskill_core::SkillBank::seed();
    let skills: Vec<&memskill_core::Skill> = bank.skills().iter().collect();
    let span = Span {
        id: "s:0".into(),
        index: 0,
        session: None,
        date: Some("8 May 2023".into()),
        turn_ids: vec![],
        text: "Caroline: I went to a LGBTQ support group yesterday and it was so powerful.\n\
               Melanie: That's great! I painted a sunrise over the lake last week."
            .into(),
    };
    let mems = [
        "Caroline is a counselor.",
        "Melanie paints landscapes.",
        "Melanie has two kids.",
    ];
    let messages = executor_messages_with(
        &prompts,
        memskill_executor::MemoryDomain::Conversation,
        &span,
        &mems,
        &skills,
        memskill_executor::ReplyForm {
            structured: true,
            ..Default::default()
        },
        &[],
    )
    .unwrap();
    let allowed = [ActionKind::Insert, ActionKind::Delete];
    let schema = executor_schema(&allowed, mems.len(), 256);
    let (mut mask, mut decode, mut masked, mut decoded) = (0.0, 0.0, 0usize, 0usize);
    for (temperature, seed) in [(0.0, 1), (0.7, 1), (0.7, 2), (1.0, 3)] {
        let mut req = ChatRequest::new(messages.clone())
            .with_max_tokens(256)
            .with_temperature(temperature)
            .with_response_schema(Some(schema.clone()));
        req.seed = Some(seed);
        let r = m.chat(&req).unwrap();
        let t = m.last_timing();
        eprintln!("T={temperature} seed={seed}: {:?} ({t:?})", r.text);
        assert!(t.masked_tokens > 0 && t.masked_tokens >= r.usage.completion_tokens as usize);
        (mask, decode) = (mask + t.mask_secs, decode + t.decode_secs);
        (masked, decoded) = (
            masked + t.masked_tokens,
            decoded + t.completion_tokens.saturating_sub(1),
        );
        if r.truncated {
            continue; // cut at max_tokens: a prefix of a valid document
        }
        let parsed = parse_structured(&r.text, mems.len()).expect("a reply in the schema's shape");
        assert!(!parsed.is_empty());
        for p in parsed {
            assert!(p.success, "{p:?} in {:?}", r.text);
            assert!(
                p.kind == ActionKind::Noop || allowed.contains(&p.kind),
                "{p:?}"
            );
        }
    }
    let per_mask = mask / masked.max(1) as f64;
    let per_decode = decode / decoded.max(1) as f64;
    eprintln!(
        "mask cost: {:.3} ms per token over {masked} tokens; decode {:.3} ms per token \
         (mask included) over {decoded} tokens: {:.1}% of decode time",
        per_mask * 1e3,
        per_decode * 1e3,
        100.0 * per_mask / per_decode.max(1e-12)
    );
    // the free request is unchanged by the feature: no mask
    let r = m
        .chat(&ChatRequest::new(messages).with_max_tokens(8))
        .unwrap();
    assert!(r.usage.completion_tokens > 0);
    assert_eq!(m.last_timing().masked_tokens, 0);
}
