//! Token counters on this machine, for `memskill preflight` where a server has no tokenizer
//! route: a GGUF file's own tokenizer (read from its metadata; no weights are loaded) or a
//! Hugging Face `tokenizer.json`.

use std::path::Path;

use candle_core::quantized::gguf_file;
use memskill_core::LlmError;
use tokenizers::Tokenizer;

/// Counts a text's tokens with one model's tokenizer.
pub struct TokenCounter {
    tok: Tokenizer,
}

impl TokenCounter {
    /// The tokenizer of the GGUF file `path` (its header and metadata only).
    pub fn from_gguf(path: &Path) -> Result<Self, LlmError> {
        let err = |e: String| LlmError::Local(format!("{}: {e}", path.display()));
        let mut f = std::fs::File::open(path).map_err(|e| err(e.to_string()))?;
        let ct = gguf_file::Content::read(&mut f).map_err(|e| err(e.to_string()))?;
        Ok(Self {
            tok: crate::gguf::tokenizer_from_gguf(&ct, path)?,
        })
    }

    /// The tokenizer of a `tokenizer.json` file.
    pub fn from_tokenizer_json(path: &Path) -> Result<Self, LlmError> {
        let tok = Tokenizer::from_file(path)
            .map_err(|e| LlmError::Local(format!("{}: {e}", path.display())))?;
        Ok(Self { tok })
    }

    /// The tokens of `text`, special tokens of the tokenizer's post-processor included.
    pub fn count(&self, text: &str) -> Result<usize, String> {
        self.tok
            .encode(text, true)
            .map(|e| e.len())
            .map_err(|e| format!("tokenizing: {e}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_or_foreign_file_is_an_error_naming_it() {
        let e = TokenCounter::from_gguf(Path::new("/nonexistent/m.gguf"))
            .err()
            .unwrap();
        assert!(e.to_string().contains("/nonexistent/m.gguf"), "{e}");
        let dir = std::env::temp_dir().join(format!("tokcount-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("tokenizer.json");
        std::fs::write(&p, "{not json").unwrap();
        let e = TokenCounter::from_tokenizer_json(&p).err().unwrap();
        assert!(e.to_string().contains("tokenizer.json"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_smollm2_asset_counts_tokens() {
        let path = crate::gguf::default_smollm2_path();
        if !path.is_file() {
            println!(
                "skipped: {} missing (scripts/fetch-assets.sh)",
                path.display()
            );
            return;
        }
        let c = TokenCounter::from_gguf(&path).unwrap();
        let short = c.count("Hello").unwrap();
        let long = c.count(&"Hello world. ".repeat(50)).unwrap();
        assert!(short >= 1 && long > 50 * short, "{short} {long}");
    }
}
