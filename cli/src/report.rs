//! `memskill report RUN_OR_EVAL_DIRS... --out DIR`.

use std::path::PathBuf;

use anyhow::Result;

#[derive(clap::Args)]
pub struct ReportArgs {
    /// Run directories, evaluation directories or results.json files (directories are
    /// searched a few levels deep).
    #[arg(required = true)]
    pub inputs: Vec<PathBuf>,
    /// Where report.md, report.html and figure3.png go.
    #[arg(long, default_value = "report")]
    pub out: PathBuf,
}

pub fn run(a: ReportArgs) -> Result<()> {
    let (entries, skills, failed) = memskill_trainer::report::collect(&a.inputs)?;
    let report = memskill_trainer::report::Report::build(&entries, skills);
    for f in report.write(&a.out)? {
        println!("{}", f.display());
    }
    if !failed.is_empty() {
        for f in &failed {
            eprintln!("FAILED {f}");
        }
        anyhow::bail!(
            "{} evaluation(s) failed and are not in the report (listed above)",
            failed.len()
        );
    }
    Ok(())
}
