//! A config looked at before a run: `memskill config show` (every resolved value with the
//! layer it came from), `memskill config check` and `train --dry-run` (the files and model
//! assets it names, checked to exist; no server is contacted), and the plan of a training
//! run (updates, episodes, data, LLM calls per role).

use std::path::PathBuf;

use anyhow::Result;

use crate::config::{Config, Dataset, LlmBackend, RawConfig};

/// Every numeric, string and boolean leaf of the resolved config as `key = value  # origin`
/// lines, grouped by section: `--set`, the file (or the file it extends) that set it, or
/// `default`.
pub fn show(cfg: &Config, raw: &RawConfig) -> Result<String> {
    let table = toml::Table::try_from(cfg)?;
    let mut all = Vec::new();
    crate::config::limits::leaves(&table, "", &mut all);
    let leaves: Vec<(String, String)> = all.into_iter().map(|(k, v)| (k, shown(v))).collect();
    let width = leaves
        .iter()
        .map(|(k, v)| k.len() + v.len() + 3)
        .max()
        .unwrap_or(0);
    let mut out = String::new();
    let mut section = String::new();
    for (key, value) in &leaves {
        let top = key.split('.').next().unwrap_or("").to_string();
        if top != section {
            if !section.is_empty() {
                out.push('\n');
            }
            section = top;
        }
        let line = format!("{key} = {value}");
        out.push_str(&format!("{line:<width$}  # {}\n", raw.origin_of(key)));
    }
    Ok(out)
}

/// A value as TOML, a float in its shortest form (an `f32` key's 0.99, not the f64
/// 0.9900000095367432 it widens to).
fn shown(v: &toml::Value) -> String {
    match v {
        toml::Value::Float(f) if f.is_finite() && (*f as f32) as f64 == *f => {
            let s = format!("{}", *f as f32);
            if s.contains(['.', 'e', 'E']) {
                s
            } else {
                format!("{s}.0")
            }
        }
        other => other.to_string(),
    }
}

/// The files and model assets `cfg` names that are missing or unreadable (one line each,
/// naming the key); nothing is contacted: servers are listed by [`endpoints`].
pub fn missing_files(cfg: &Config) -> Vec<String> {
    let mut out = Vec::new();
    let mut need_dir = |key: &str, dir: Result<PathBuf>, file: &str, hint: &str| match dir {
        Err(e) => out.push(format!("{key}: {e:#}")),
        Ok(d) if !d.join(file).is_file() => {
            out.push(format!("{key}: {} has no {file} ({hint})", d.display()))
        }
        Ok(_) => {}
    };
    let fetch = "scripts/fetch-assets.sh fetches MiniLM and says how to get the others";
    if let Some(d) = crate::backends::encoder_dir(&cfg.encoder) {
        need_dir("encoder.path", d, "config.json", fetch);
    }
    for (key, d) in crate::backends::retriever_dirs(&cfg.memory) {
        need_dir(key, d, "config.json", fetch);
    }
    for (field, l) in cfg.llm_configs() {
        if let LlmBackend::Local(s) = &l.backend {
            let what = format!("{field}.model_path");
            if let Err(e) = crate::backends::local_model_file(&s.backend_config(), &what) {
                out.push(format!("{e:#}"));
            }
        }
    }
    if let Some(b) = &cfg.run.skill_bank {
        if let Err(e) = memskill_designer::load_bank(b) {
            out.push(format!("run.skill_bank: {e}"));
        }
    }
    out
}

/// Where each LLM role and embeddings server would send its requests (`scripted` for the
/// built-in oracle), one line per role.
pub fn endpoints(cfg: &Config) -> Vec<String> {
    let mut out = Vec::new();
    for (field, l) in cfg.llm_configs() {
        let to = match &l.backend {
            LlmBackend::Openai(o) if !o.base_urls.is_empty() => {
                format!("{} (model {})", o.base_urls.join(", "), l.model_name())
            }
            LlmBackend::Openai(o) => format!(
                "the URL in ${} (model {})",
                o.base_url_env.as_deref().unwrap_or("?"),
                l.model_name()
            ),
            LlmBackend::Local(s) => format!(
                "local GGUF {}",
                s.backend_config().model_path.display()
            ),
            LlmBackend::ScriptedSynthetic(_) => {
                "the scripted synthetic oracle (built in; its numbers measure the plumbing, not a model)".to_string()
            }
        };
        out.push(format!("{field}: {to}"));
    }
    for (field, e) in cfg.embedding_servers() {
        out.push(format!(
            "{field}: {} (model {})",
            e.http.base_urls.join(", "),
            e.http.model
        ));
    }

    out
}

/// What a training run of `cfg` will do, from its data (loaded, as the run loads it).
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub updates: u64,
    pub episodes: u64,
    pub samples: usize,
    pub mean_spans: f64,
    pub mean_questions: f64,
    pub executor_calls: f64,
    pub answer_calls: f64,
    pub judge_calls: f64,
    pub designer_stages: u64,
}

/// The plan of a training run over `samples` (the training samples of `cfg`'s benchmark).
pub fn plan(cfg: &Config, samples: &[memskill_core::Sample]) -> Plan {
    let updates = cfg.run.outer_epochs as u64 * cfg.run.inner_epochs as u64;
    let episodes = updates * cfg.run.batch_size as u64;
    let n = samples.len().max(1) as f64;
    let mean_spans = samples.iter().map(|s| s.spans.len()).sum::<usize>() as f64 / n;
    let mean_questions =
        samples.iter().map(|s| s.queries.len()).sum::<usize>() as f64 / n * cfg.data.query_ratio;
    let answer_calls = episodes as f64 * mean_questions;
    let judge = cfg.reward.kind == crate::config::RewardKind::Judge;
    Plan {
        updates,
        episodes,
        samples: samples.len(),
        mean_spans,
        mean_questions,
        executor_calls: episodes as f64 * mean_spans,
        answer_calls,
        judge_calls: if judge { answer_calls } else { 0.0 },
        designer_stages: if cfg.designer.enabled {
            cfg.run.outer_epochs as u64 / cfg.designer.freq.max(1) as u64
        } else {
            0
        },
    }
}

impl Plan {
    /// The plan as lines for the terminal.
    pub fn render(&self, cfg: &Config) -> String {
        let dataset = match cfg.data.dataset {
            Dataset::Alfworld => "alfworld".to_string(),
            ref d => d.name(),
        };
        format!(
            "updates: {} ({} outer x {} inner epochs), {} episodes of {} training samples ({dataset})\n\
             per sample: {:.1} spans, {:.1} questions (data.query_ratio {})\n\
             LLM calls (estimate, before retries and caching): executor {:.0}, answer {:.0}, judge {:.0}; \
             designer stages {}\n",
            self.updates,
            cfg.run.outer_epochs,
            cfg.run.inner_epochs,
            self.episodes,
            self.samples,
            self.mean_spans,
            self.mean_questions,
            cfg.data.query_ratio,
            self.executor_calls,
            self.answer_calls,
            self.judge_calls,
            self.designer_stages,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_check_names_both_folders_of_a_two_model_retriever() {
        for (kind, found) in [("dpr", 2), ("dragon", 2), ("contriever", 1), ("encoder", 0)] {
            let mut sets = vec![
                format!("memory.retriever=\"{kind}\""),
                "memory.retriever_path=\"/nonexistent/ctx\"".into(),
            ];
            if found == 2 {
                sets.push("memory.retriever_query_path=\"/nonexistent/query\"".into());
            }
            let cfg = Config::from_toml_str("", &sets, "t").unwrap();
            let lines: Vec<String> = missing_files(&cfg)
                .into_iter()
                .filter(|l| l.starts_with("memory."))
                .collect();
            assert_eq!(lines.len(), found, "{kind}: {lines:?}");
            if found == 2 {
                assert!(lines[0].starts_with("memory.retriever_path: /nonexistent/ctx"));
                assert!(lines[1].starts_with("memory.retriever_query_path: /nonexistent/query"));
            }
        }
    }
}
