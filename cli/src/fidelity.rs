//! `memskill fidelity check DIR`: runs our implementation on differential fixtures generated
//! from the reference implementation and prints one table (component, cases, agreeing, max abs
//! difference). Exits non-zero when any case disagrees.

use anyhow::bail;
use std::path::PathBuf;

#[derive(clap::Subcommand)]
pub enum FidelityCmd {
    /// Check every fixture (*.json) in a folder against our implementation.
    Check {
        /// Folder of fixtures (scripts/fidelity/diff.sh writes them; the committed ones are in
        /// trainer/tests/fixtures/fidelity).
        dir: PathBuf,
    },
}

pub fn run(c: FidelityCmd) -> anyhow::Result<()> {
    match c {
        FidelityCmd::Check { dir } => {
            let reports = memskill_dev::fidelity::check_dir(&dir)?;
            println!("{}", memskill_dev::fidelity::render_table(&reports));
            let bad: Vec<_> = reports
                .iter()
                .filter(|r| r.agreeing != r.cases)
                .map(|r| r.component.as_str())
                .collect();
            if !bad.is_empty() {
                bail!(
                    "components disagreeing with the reference: {}",
                    bad.join(", ")
                );
            }
            Ok(())
        }
    }
}

/// `memskill import-reference CKPT.pt --out RUN_DIR`.
#[derive(clap::Args)]
pub struct ImportArgs {
    /// A checkpoint the reference's trainer saved (`torch.save`, a zip file).
    pub checkpoint: PathBuf,
    /// The run folder to write (`memskill eval --checkpoint RUN_DIR` evaluates it).
    #[arg(long)]
    pub out: PathBuf,
    /// The memskill config the run uses (encoder, executor, dataset); `policy.hidden` is taken
    /// from the weights. The encoder's embedding size must be the reference's.
    #[arg(long, default_value = "configs/locomo.toml")]
    pub config: PathBuf,
    /// `key=value` overrides on top of the config.
    #[arg(long = "set")]
    pub sets: Vec<String>,
}

pub fn import_reference(a: ImportArgs) -> anyhow::Result<()> {
    let i = memskill_trainer::refimport::import(&a.checkpoint, &a.out, &a.config, &a.sets)?;
    println!(
        "wrote {}: controller for embeddings of size {} (hidden {}), {} skills ({} new)",
        i.dir.display(),
        i.emb_dim,
        i.hidden,
        i.skills,
        i.new_skills
    );
    println!(
        "the config's encoder must give embeddings of size {} ({})",
        i.emb_dim,
        a.config.display()
    );
    println!(
        "evaluate it with: memskill eval --checkpoint {}",
        a.out.display()
    );
    Ok(())
}
