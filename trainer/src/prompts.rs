//! The run's prompt templates: every crate's defaults, with a user's `prompts.dir` layered on
//! top. A file in that folder replaces the default template of the same name; a file whose
//! name is not a known template is an error (a typo would otherwise be ignored silently).

use anyhow::{bail, Context};
use memskill_core::PromptSet;
use std::path::Path;

/// Every built-in template: executor (executor, answers, judges), designer, ALFWorld actor.
pub fn defaults() -> anyhow::Result<PromptSet> {
    let mut set = PromptSet::default();
    for defaults in [
        memskill_executor::PROMPT_TEMPLATES,
        memskill_designer::PROMPT_TEMPLATES,
        memskill_alfworld::PROMPT_TEMPLATES,
    ] {
        set.add_defaults(defaults)?;
    }
    Ok(set)
}

/// The defaults with the templates of `dir` (files named `<template>`, e.g.
/// `executor.user.j2`) layered on top.
pub fn load(dir: Option<&Path>) -> anyhow::Result<PromptSet> {
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
        let src = std::fs::read_to_string(&path)
            .with_context(|| format!("prompts.dir: reading {}", path.display()))?;
        set.set_override(name, &src)
            .with_context(|| format!("prompts.dir: {}", path.display()))?;
    }
    Ok(set)
}
