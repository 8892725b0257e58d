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
            let reports = crate::fidelity::check_dir(&dir)?;
            println!("{}", crate::fidelity::render_table(&reports));
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
