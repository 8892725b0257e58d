//! External memory systems as evaluation methods (`memskill eval --adapter CMD --method
//! NAME`, docs/adapter-protocol.md). The adapter process decides what to store and what to
//! retrieve (or answers itself); everything else is memskill's: the samples and spans, the
//! answer prompt and answerer, the scorer, the judge, the results files, so its row in the
//! report is comparable with every other method's.
//!
//! `protocol` holds the messages (pure), `process` the child process and its transport.
//! One adapter process serves the whole evaluation, one sample at a time.

pub mod process;
pub mod protocol;

use std::path::PathBuf;
use std::sync::Mutex;

use anyhow::{bail, Result};
use memskill_core::{Query, Sample};

use crate::baselines::{baseline_config, run_method, Baseline, BaselineOptions, SampleAnswers};
use crate::config::{Config, EncoderKind, LlmBackend};
use crate::episode::{answer_external, par_map, EpisodeCtx, ExternalRecall};
use crate::eval::{write_results, AdapterRecord, EvalResults};
use process::{AdapterProcess, RequestError};
use protocol::{speakers, split_command, Op, Payload, Timeouts};

/// What to evaluate.
#[derive(Debug, Clone)]
pub struct AdapterOptions {
    /// The adapter's command line (split with shell-words rules, run without a shell).
    pub command: String,
    /// The method's name in results and reports.
    pub method: String,
    pub timeouts: Timeouts,
    /// Split, limit, output folder, judge: as for the baselines.
    pub base: BaselineOptions,
}

/// Evaluate the memory system behind `opts.command` on the config's dataset. Returns the
/// results (written unless the evaluation failed, as for every method) and their folder.
pub fn evaluate_adapter(cfg: &Config, opts: &AdapterOptions) -> Result<(EvalResults, PathBuf)> {
    check_method_name(&opts.method)?;
    let argv = split_command(&opts.command).map_err(anyhow::Error::msg)?;
    let (cfg, skills) = baseline_config(Baseline::NoMemory, cfg)?;
    let process = AdapterProcess::spawn(&opts.command, &argv, &adapter_env(&cfg), opts.timeouts)?;
    let session = Mutex::new(Session {
        process: Some(process),
        record: AdapterRecord {
            command: opts.command.clone(),
            ..Default::default()
        },
    });
    let (mut results, out) = run_method(
        &opts.method,
        &cfg,
        &skills,
        &opts.base,
        0,
        &|ctx, _rt, sample, want_judge| adapter_sample(&session, ctx, sample, want_judge),
    )?;
    let mut session = session.into_inner().unwrap_or_else(|p| p.into_inner());
    if let Some(p) = session.process.take() {
        session.record.requests += 1;
        if let Err(e) = p.close() {
            session.note(&e);
        }
    }
    session.record.answered_by_adapter = results
        .queries
        .iter()
        .filter(|q| q.answered_by.is_some())
        .count();
    results.adapter = Some(session.record);
    write_results(&out, &results)?;
    Ok((results, out))
}

/// A method name that is a folder name and no built-in method's.
fn check_method_name(name: &str) -> Result<()> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if !ok {
        bail!("--method {name:?}: an adapter's method name is 1-64 of A-Z a-z 0-9 - _ . (it names the results folder)");
    }
    if Baseline::parse(name).is_some() {
        bail!("--method {name}: that name is memskill's own baseline; give the adapter's method another name");
    }
    Ok(())
}

/// What the adapter is told about the run's models: the executor's OpenAI-compatible
/// endpoint for its LLM calls, and the embeddings server when the run's encoder is one.
/// Variables already in memskill's environment are passed on unchanged otherwise.
pub fn adapter_env(cfg: &Config) -> Vec<(String, String)> {
    let mut env = Vec::new();
    if let LlmBackend::Openai(o) = &cfg.executor.backend {
        if let Some(url) = o.base_urls.first() {
            env.push(("MEMSKILL_LLM_BASE_URL".into(), url.clone()));
        }
        env.push(("MEMSKILL_LLM_MODEL".into(), o.model.clone()));
        if let Some(key) = o.api_key_envs.first().and_then(|k| std::env::var(k).ok()) {
            env.push(("MEMSKILL_LLM_API_KEY".into(), key));
        }
    }
    if cfg.encoder.kind == EncoderKind::Openai {
        let e = &cfg.encoder.openai.http;
        if let Some(url) = e.base_urls.first() {
            env.push(("MEMSKILL_EMBED_BASE_URL".into(), url.clone()));
        }
        env.push(("MEMSKILL_EMBED_MODEL".into(), e.model.clone()));
    }
    let minilm = memskill_core::cache_root()
        .join("assets")
        .join("all-MiniLM-L6-v2");
    if minilm.is_dir() {
        env.push(("MEMSKILL_MINILM_DIR".into(), minilm.display().to_string()));
    }
    env
}

/// The adapter process (None once closed) and the record of its requests.
struct Session {
    process: Option<AdapterProcess>,
    record: AdapterRecord,
}

impl Session {
    fn note(&mut self, e: &RequestError) {
        self.record.errors += 1;
        if matches!(e, RequestError::Refused(_)) {
            self.record.refused += 1;
        }
        if self.record.first_error.is_none() {
            self.record.first_error = Some(e.to_string());
        }
    }

    fn send(&mut self, op: &Op) -> Result<Payload, RequestError> {
        self.record.requests += 1;
        let r = match self.process.as_mut() {
            Some(p) => p.request(op),
            None => Err(RequestError::Broken("the adapter was closed".into())),
        };
        if let Err(e) = &r {
            self.note(e);
        }
        r
    }

    /// `reset`, one `add` per span and `build` for `sample` (how many were sent and how many
    /// failed), then one `retrieve` per question.
    fn recall_sample(&mut self, sample: &Sample, k: usize) -> (Vec<ExternalRecall>, usize, usize) {
        let mut ops = vec![Op::Reset {
            sample_id: sample.id.clone(),
        }];
        ops.extend(sample.spans.iter().map(|s| Op::Add {
            index: s.index,
            span_id: s.id.clone(),
            text: s.text.clone(),
            date: s.date.clone(),
            session: s.session,
            speakers: speakers(&s.text),
        }));
        ops.push(Op::Build);
        let failed = ops.iter().filter(|op| self.send(op).is_err()).count();
        let recalls = sample.queries.iter().map(|q| self.recall(q, k)).collect();
        (recalls, ops.len(), failed)
    }

    fn recall(&mut self, q: &Query, k: usize) -> ExternalRecall {
        let op = Op::Retrieve {
            query_id: q.id.clone(),
            question: q.question.clone(),
            date: q.date.clone(),
            k,
        };
        match self.send(&op) {
            // the same retrieval budget as every other method: the first k memories
            Ok(Payload::Memories(m)) => ExternalRecall::Memories(m.into_iter().take(k).collect()),
            Ok(Payload::Answer(a)) => ExternalRecall::Answer(a),
            Ok(Payload::Done) => ExternalRecall::Failed("retrieve: empty reply".into()),
            Err(e) => ExternalRecall::Failed(format!("retrieve for {}: {e}", q.id)),
        }
    }
}

/// One sample through the adapter, then its questions answered and scored as for every
/// method (in parallel, the adapter free for the next sample meanwhile).
fn adapter_sample(
    session: &Mutex<Session>,
    ctx: &EpisodeCtx<'_>,
    sample: &Sample,
    want_judge: bool,
) -> Result<SampleAnswers> {
    let (recalls, calls, errors) = session
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .recall_sample(sample, ctx.answer_retrieve);
    let answered = par_map(&sample.queries, ctx.query_workers, |i, q| {
        answer_external(ctx, sample, q, &recalls[i], want_judge)
    });
    let queries = answered.into_iter().collect::<Result<Vec<_>>>()?;
    Ok((queries, calls, errors))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn method_names_are_folder_names_and_not_builtin() {
        for ok in ["mem0", "LangMem-0.0.30", "a_b.c"] {
            check_method_name(ok).unwrap();
        }
        for bad in ["", "raw-rag", "../x", ".hidden", "a b", "a/b"] {
            assert!(check_method_name(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_executor_endpoint_is_passed_to_the_adapter() {
        let cfg = Config::from_toml_str(
            "",
            &[
                "executor.backend=\"openai\"".into(),
                "executor.base_urls=[\"http://127.0.0.1:9/v1\"]".into(),
                "executor.model=\"m\"".into(),
            ],
            "t",
        )
        .unwrap();
        let env = adapter_env(&cfg);
        let get = |k: &str| env.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
        assert_eq!(get("MEMSKILL_LLM_BASE_URL"), Some("http://127.0.0.1:9/v1"));
        assert_eq!(get("MEMSKILL_LLM_MODEL"), Some("m"));
        assert_eq!(get("MEMSKILL_EMBED_BASE_URL"), None);
    }
}
