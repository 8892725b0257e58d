//! The local backend's token mask for structured outputs: a request's JSON schema compiled by
//! llguidance (the engine behind vLLM's, SGLang's and llama.cpp's structured outputs) over the
//! model's vocabulary; at each sampling step the tokens that cannot continue a reply valid
//! under the schema get a logit of -inf, and the reply ends when the grammar does.
//!
//! Built only with the `llguidance` cargo feature (`memskill-trainer/structured-local`).

use std::sync::Arc;

use llguidance::api::TopLevelGrammar;
use llguidance::toktrie::{ApproximateTokEnv, TokEnv, TokRxInfo, TokTrie};
use llguidance::{JsonCompileOptions, Matcher, ParserFactory};
use memskill_core::{LlmError, ResponseSchema};
use tokenizers::Tokenizer;

fn gerr(what: &str, e: impl std::fmt::Display) -> LlmError {
    LlmError::Local(format!("structured output: {what}: {e}"))
}

/// Per token: whether it only closes JSON (its bytes are all `"`, `}` or `]`; EOS too), and
/// whether it starts by closing a string.
struct Closers {
    closes: Vec<bool>,
    quote: Vec<bool>,
}

/// The vocabulary as llguidance sees it, built once per model.
pub struct Guide {
    factory: ParserFactory,
    vocab: usize,
    closers: Arc<Closers>,
}

impl Guide {
    /// From the model's tokenizer (byte-level BPE or byte-fallback, as in a `tokenizer.json`);
    /// `eos` ends a reply the grammar accepts.
    pub fn new(tokenizer: &Tokenizer, eos: u32) -> Result<Self, LlmError> {
        let json: serde_json::Value = serde_json::from_str(
            &tokenizer
                .to_string(false)
                .map_err(|e| gerr("serialising the tokenizer", e))?,
        )
        .map_err(|e| gerr("reading the tokenizer", e))?;
        let mut words = llguidance::token_bytes_from_tokenizer_json(&json)
            .map_err(|e| gerr("token bytes", e))?;
        let n = words
            .len()
            .max(tokenizer.get_vocab_size(true))
            .max(eos as usize + 1);
        words.resize(n, Vec::new());
        let closers = Closers {
            closes: words
                .iter()
                .enumerate()
                .map(|(i, w)| {
                    i == eos as usize
                        || (!w.is_empty() && w.iter().all(|b| matches!(b, b'"' | b'}' | b']')))
                })
                .collect(),
            quote: words.iter().map(|w| w.first() == Some(&b'"')).collect(),
        };
        let info = TokRxInfo::new(n as u32, eos);
        let trie = TokTrie::from(&info, &words);
        let env: TokEnv = Arc::new(ApproximateTokEnv::new(trie));
        let mut factory = ParserFactory::new_simple(&env).map_err(|e| gerr("parser factory", e))?;
        factory.quiet();
        Ok(Guide {
            factory,
            vocab: n,
            closers: Arc::new(closers),
        })
    }

    /// A fresh matcher for one reply under `rs.schema` (JSON with `, ` and `: ` separators and
    /// no other whitespace, so that a small model cannot spend its budget on blank lines).
    pub fn matcher(&self, rs: &ResponseSchema) -> Result<GuidedReply, LlmError> {
        let mut schema = rs.schema.clone();
        if !schema.is_object() {
            return Err(gerr(&format!("schema {:?}", rs.name), "not a JSON object"));
        }
        if schema.get("x-guidance").is_none() {
            JsonCompileOptions {
                item_separator: ", ".into(),
                key_separator: ": ".into(),
                whitespace_flexible: false,
                ..Default::default()
            }
            .apply_to(&mut schema);
        }
        let parser = self
            .factory
            .create_parser(TopLevelGrammar::from_json_schema(schema))
            .map_err(|e| gerr(&format!("compiling schema {:?}", rs.name), e))?;
        let m = Matcher::new(Ok(parser));
        if let Some(e) = m.get_error() {
            return Err(gerr(&format!("schema {:?}", rs.name), e));
        }
        Ok(GuidedReply {
            m,
            vocab: self.vocab,
            closers: self.closers.clone(),
            restricted_from: None,
            cut: false,
        })
    }
}

/// One constrained reply in progress.
pub struct GuidedReply {
    m: Matcher,
    vocab: usize,
    closers: Arc<Closers>,
    /// The last mask was narrowed to closing tokens; the best token it had before.
    restricted_from: Option<u32>,
    cut: bool,
}

impl GuidedReply {
    /// `logits` with every token the grammar does not allow now set to -inf (tokens beyond the
    /// tokenizer's vocabulary too). An error when no token is allowed.
    pub fn mask(&mut self, logits: &mut [f32]) -> Result<(), LlmError> {
        let mask = self
            .m
            .compute_mask_or_eos()
            .map_err(|e| gerr("computing the token mask", e))?;
        let mut any = false;
        for (i, l) in logits.iter_mut().enumerate() {
            if i >= self.vocab || !mask.is_allowed(i as u32) {
                *l = f32::NEG_INFINITY;
            } else {
                any |= *l > f32::NEG_INFINITY;
            }
        }
        if !any {
            return Err(gerr("token mask", "no token is allowed"));
        }
        Ok(())
    }

    /// Near the end of the token budget: where the grammar allows a token that only closes
    /// (`"`, `}`, `]`, EOS), only such tokens stay allowed, so that the document ends before
    /// the budget does. A string closed this way against the model's choice is a cut text
    /// ([`GuidedReply::cut`]).
    pub fn close(&mut self, logits: &mut [f32]) {
        self.restricted_from = None;
        let closes = &self.closers.closes;
        let allowed = |i: usize, l: f32| l > f32::NEG_INFINITY && closes.get(i) == Some(&true);
        if !logits.iter().enumerate().any(|(i, &l)| allowed(i, l)) {
            return;
        }
        let best = logits
            .iter()
            .enumerate()
            .fold(
                (0, f32::NEG_INFINITY),
                |b, (i, &l)| if l > b.1 { (i, l) } else { b },
            )
            .0;
        for (i, l) in logits.iter_mut().enumerate() {
            if !allowed(i, *l) {
                *l = f32::NEG_INFINITY;
            }
        }
        self.restricted_from = Some(best as u32);
    }

    /// A string value was closed early by [`GuidedReply::close`]: the last text is cut short.
    pub fn cut(&self) -> bool {
        self.cut
    }

    /// [`GuidedReply::mask`] (and, when `closing`, [`GuidedReply::close`]) on a logits
    /// tensor (`[vocab]`).
    pub fn masked(
        &mut self,
        logits: &candle_core::Tensor,
        closing: bool,
    ) -> Result<candle_core::Tensor, LlmError> {
        let cerr = |e: candle_core::Error| gerr("logits", e);
        let mut v: Vec<f32> = logits
            .to_dtype(candle_core::DType::F32)
            .and_then(|t| t.flatten_all())
            .and_then(|t| t.to_vec1())
            .map_err(cerr)?;
        self.mask(&mut v)?;
        if closing {
            self.close(&mut v);
        } else {
            self.restricted_from = None;
        }
        let n = v.len();
        candle_core::Tensor::from_vec(v, n, logits.device()).map_err(cerr)
    }

    /// Advance over the sampled token.
    pub fn consume(&mut self, token: u32) -> Result<(), LlmError> {
        if let Some(best) = self.restricted_from.take() {
            if best != token && self.closers.quote.get(token as usize) == Some(&true) {
                self.cut = true;
            }
        }
        self.m
            .consume_token(token)
            .map_err(|e| gerr("advancing the grammar", e))
    }

    /// The grammar is complete: nothing may follow.
    pub fn is_stopped(&self) -> bool {
        self.m.is_stopped()
    }
}
