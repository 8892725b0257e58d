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

/// Per token: its bytes, and whether it only closes JSON: outside a string, bytes all `}` or
/// `]` (or EOS); inside one, a `"` followed by nothing but `}` and `]`.
struct Closers {
    bytes: Vec<Vec<u8>>,
    outside: Vec<bool>,
    inside: Vec<bool>,
    /// Starts with `"` (in a string: ends it).
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
        let n = words.len().max(tokenizer.get_vocab_size(true));
        words.resize(n, Vec::new());
        Self::from_words(words, eos)
    }

    /// From the bytes of every token (special tokens start with 0xFF) and the EOS token.
    pub fn from_words(mut words: Vec<Vec<u8>>, eos: u32) -> Result<Self, LlmError> {
        let n = words.len().max(eos as usize + 1);
        words.resize(n, Vec::new());
        let structural = |w: &[u8]| w.iter().all(|b| matches!(b, b'}' | b']'));
        let closers = Closers {
            outside: words
                .iter()
                .enumerate()
                .map(|(i, w)| i == eos as usize || (!w.is_empty() && structural(w)))
                .collect(),
            inside: words
                .iter()
                .map(|w| w.first() == Some(&b'"') && structural(&w[1..]))
                .collect(),
            quote: words.iter().map(|w| w.first() == Some(&b'"')).collect(),
            bytes: words.clone(),
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
            in_string: false,
            escaped: false,
        })
    }
}

/// How hard the end of the token budget presses a structured reply to close.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Closing {
    /// Far from the end: the grammar alone.
    No,
    /// Close after a complete action rather than begin another.
    Lossless,
    /// Close whatever is open, a string too (the text is then cut).
    Any,
}

impl Closing {
    /// The pressure with `left` tokens of a `max_new`-token budget left: lossless in the last
    /// half (at most 128 tokens), anything in the last quarter (at most 32).
    pub fn at(left: usize, max_new: usize) -> Closing {
        if left <= (max_new / 4).min(32) {
            Closing::Any
        } else if left <= (max_new / 2).min(128) {
            Closing::Lossless
        } else {
            Closing::No
        }
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
    /// Inside a JSON string (after an unescaped `"`), and just after a backslash in one.
    in_string: bool,
    escaped: bool,
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
    /// (see [`Closers`]), only such tokens stay allowed, so that the document ends before the
    /// budget does. `lossless`: only outside strings (after a complete action no new one is
    /// begun; in a string, a token that ends it may only close what is open, so that a
    /// `"},` cannot step past the end of an action into the next); otherwise a string is
    /// closed too, and one closed this way against the model's choice is a cut text
    /// ([`GuidedReply::cut`]).
    pub fn close(&mut self, logits: &mut [f32], lossless: bool) {
        self.restricted_from = None;
        if lossless && self.in_string {
            let c = &self.closers;
            let banned = |i: usize| c.quote.get(i) == Some(&true) && c.inside.get(i) != Some(&true);
            let kept = logits
                .iter()
                .enumerate()
                .any(|(i, &l)| l > f32::NEG_INFINITY && !banned(i));
            if !self.escaped && kept {
                for (i, l) in logits.iter_mut().enumerate() {
                    if banned(i) {
                        *l = f32::NEG_INFINITY;
                    }
                }
            }
            return;
        }
        let set = if self.in_string {
            &self.closers.inside
        } else {
            &self.closers.outside
        };
        let allowed = |i: usize, l: f32| l > f32::NEG_INFINITY && set.get(i) == Some(&true);
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

    /// The reply so far ends inside a JSON string.
    pub fn in_string(&self) -> bool {
        self.in_string
    }

    /// [`GuidedReply::mask`] (and [`GuidedReply::close`] as `closing` says) on a logits
    /// tensor (`[vocab]`).
    pub fn masked(
        &mut self,
        logits: &candle_core::Tensor,
        closing: Closing,
    ) -> Result<candle_core::Tensor, LlmError> {
        let cerr = |e: candle_core::Error| gerr("logits", e);
        let mut v: Vec<f32> = logits
            .to_dtype(candle_core::DType::F32)
            .and_then(|t| t.flatten_all())
            .and_then(|t| t.to_vec1())
            .map_err(cerr)?;
        self.mask(&mut v)?;
        match closing {
            Closing::No => self.restricted_from = None,
            Closing::Lossless => self.close(&mut v, true),
            Closing::Any => self.close(&mut v, false),
        }
        let n = v.len();
        candle_core::Tensor::from_vec(v, n, logits.device()).map_err(cerr)
    }

    /// Advance over the sampled token.
    pub fn consume(&mut self, token: u32) -> Result<(), LlmError> {
        if let Some(best) = self.restricted_from.take() {
            if best != token && self.in_string {
                self.cut = true;
            }
        }
        // JSON string state over the token's bytes
        for &b in self
            .closers
            .bytes
            .get(token as usize)
            .map_or(&[][..], |w| w)
        {
            if self.escaped {
                self.escaped = false;
            } else if self.in_string && b == b'\\' {
                self.escaped = true;
            } else if b == b'"' {
                self.in_string = !self.in_string;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closing_presses_harder_towards_the_end_of_the_budget() {
        assert_eq!(Closing::at(128, 128), Closing::No);
        assert_eq!(Closing::at(65, 128), Closing::No);
        assert_eq!(Closing::at(64, 128), Closing::Lossless);
        assert_eq!(Closing::at(33, 128), Closing::Lossless);
        assert_eq!(Closing::at(32, 128), Closing::Any);
        assert_eq!(Closing::at(1, 128), Closing::Any);
        // large budgets: the last 128 / 32 tokens
        assert_eq!(Closing::at(129, 2048), Closing::No);
        assert_eq!(Closing::at(128, 2048), Closing::Lossless);
        assert_eq!(Closing::at(32, 2048), Closing::Any);
        // tiny budgets
        assert_eq!(Closing::at(1, 2), Closing::Lossless);
        assert_eq!(Closing::at(0, 2), Closing::Any);
    }
}
