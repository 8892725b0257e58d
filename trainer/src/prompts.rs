//! The run's prompt templates: every crate's defaults, with a user's `prompts.dir` layered on
//! top. A file in that folder replaces the default template of the same name; a file whose
//! name is not a known template is an error (a typo would otherwise be ignored silently).

use anyhow::{bail, Context};
use memskill_core::PromptSet;
use std::path::Path;

/// Every built-in template: executor (executor, answers, judges), designer, ALFWorld actor,
/// the reading methods (Chain-of-Notes, ReadAgent) and MemoryBank.
pub fn defaults() -> anyhow::Result<PromptSet> {
    let mut set = PromptSet::default();
    for defaults in [
        memskill_executor::PROMPT_TEMPLATES,
        memskill_designer::PROMPT_TEMPLATES,
        memskill_alfworld::PROMPT_TEMPLATES,
        crate::method_prompts::PROMPT_TEMPLATES,
    ] {
        set.add_defaults(defaults)?;
    }
    Ok(set)
}

/// The defaults with the templates of `dir` (files named `<template>`, e.g.
/// `executor.user.j2`, read through the bounded reader) layered on top, each template
/// rendered once with sample data ([`sample_render`]).
pub fn load(dir: Option<&Path>) -> anyhow::Result<PromptSet> {
    let set = layered(dir)?;
    sample_render(&set).with_context(|| match dir {
        Some(d) => format!(
            "prompts.dir {}: a template fails with sample data",
            d.display()
        ),
        None => "the built-in prompt templates fail with sample data".to_string(),
    })?;
    Ok(set)
}

/// Render every template of every crate once with sample data: a template with an error,
/// an endless loop or a huge output is refused at start-up, before anything is written.
pub fn sample_render(set: &PromptSet) -> anyhow::Result<()> {
    memskill_executor::prompts::sample_render(set, &crate::registry::answer_templates())?;
    memskill_designer::prompts::sample_render(set)?;
    memskill_alfworld::actor::sample_render(set)?;
    crate::method_prompts::sample_render(set)?;
    Ok(())
}

fn layered(dir: Option<&Path>) -> anyhow::Result<PromptSet> {
    let mut set = defaults()?;
    let Some(dir) = dir else { return Ok(set) };
    let entries = std::fs::read_dir(dir)
        .with_context(|| format!("prompts.dir: reading {}", dir.display()))?;
    let mut files: Vec<_> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    files.sort();
    for path in files {
        let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        if !name.ends_with(".j2") {
            continue;
        }
        if !set.contains(name) {
            let known: Vec<&str> = set.names().collect();
            bail!(
                "prompts.dir: {} is not a known template (known: {})",
                path.display(),
                known.join(", ")
            );
        }
        let src = crate::fsutil::read_input_text(
            &path,
            memskill_core::fsio::SMALL_FILE_LIMIT,
            "prompts.dir template",
        )?;
        set.set_override(name, &src)
            .with_context(|| format!("prompts.dir: {}", path.display()))?;
    }
    Ok(set)
}

/// Records a run's prompts in `run_dir`: `prompts.json` (the `prompts.dir` used, the names
/// of the overridden templates, the content hash of the whole set) and a copy of every
/// overriding template under `prompts/`, so the run can be reproduced without the folder.
pub fn record(run_dir: &Path, set: &PromptSet, dir: Option<&Path>) -> anyhow::Result<()> {
    let info = serde_json::json!({
        "dir": dir.map(|d| d.display().to_string()),
        "overridden": set.overridden(),
        "hash": set.content_hash(),
    });
    crate::fsutil::write_atomic(
        &run_dir.join("prompts.json"),
        serde_json::to_string_pretty(&info)?.as_bytes(),
    )?;
    if !set.overridden().is_empty() {
        let out = run_dir.join("prompts");
        std::fs::create_dir_all(&out).with_context(|| format!("creating {}", out.display()))?;
        for name in set.overridden() {
            if let Some(src) = set.source(name) {
                crate::fsutil::write_atomic(&out.join(name), src.as_bytes())?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_overrides_known_templates_and_is_recorded() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("answer.locomo.user.j2"),
            "Q: {{ question }}",
        )
        .unwrap();
        std::fs::write(dir.path().join("README.txt"), "ignored").unwrap();
        let set = load(Some(dir.path())).unwrap();
        assert_eq!(set.overridden(), &["answer.locomo.user.j2".to_string()]);
        assert!(set.contains("executor.user.j2") && set.contains("judge.user.j2"));
        let run = tempfile::tempdir().unwrap();
        record(run.path(), &set, Some(dir.path())).unwrap();
        let info: serde_json::Value =
            serde_json::from_slice(&std::fs::read(run.path().join("prompts.json")).unwrap())
                .unwrap();
        assert_eq!(info["overridden"][0], "answer.locomo.user.j2");
        assert_eq!(
            std::fs::read_to_string(run.path().join("prompts/answer.locomo.user.j2")).unwrap(),
            "Q: {{ question }}"
        );
        // an unknown name is an error naming the file
        std::fs::write(dir.path().join("anser.locomo.user.j2"), "x").unwrap();
        let e = load(Some(dir.path())).unwrap_err().to_string();
        assert!(e.contains("anser.locomo.user.j2"), "{e}");
    }

    #[test]
    fn templates_that_loop_or_fail_are_refused_at_load() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("judge.user.j2");
        for (src, want) in [
            (
                "{% for a in range(10000) %}{% for b in range(10000) %}{% for c in range(10000) %}{% endfor %}{% endfor %}{% endfor %}",
                "steps",
            ),
            ("{% for a in range(100000) %}{{ 'x' * 1000 }}{% endfor %}", "limit"),
            ("{{ no_such_variable }}", "undefined value"),
        ] {
            std::fs::write(&f, src).unwrap();
            let e = format!("{:#}", load(Some(dir.path())).unwrap_err());
            assert!(e.contains("judge.user.j2") && e.contains(want), "{e}");
        }
        std::fs::remove_file(&f).unwrap();
        #[cfg(unix)]
        if std::process::Command::new("mkfifo")
            .arg(&f)
            .status()
            .is_ok_and(|s| s.success())
        {
            let e = format!("{:#}", load(Some(dir.path())).unwrap_err());
            assert!(e.contains("FIFO"), "{e}");
        }
    }
}
