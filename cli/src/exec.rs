//! `memskill score`, `memskill llm chat` and `memskill parse-actions`.

use std::io::Read;
use std::path::PathBuf;

use anyhow::{anyhow, bail, Context};
use clap::Subcommand;
use memskill_core::{ActionKind, ChatRequest, Llm, Message};
use memskill_executor::{
    parse_actions_from, parse_response, HotpotF1, LocalConfig, OpenAiBackend, OpenAiConfig,
};
use memskill_trainer::fsutil::{refuse_existing, refuse_overwrite_input, write_atomic};

pub use memskill_trainer::score::ScoreDataset;
use memskill_trainer::score::{score_file, ScoreOptions, ScoreReport};

#[derive(clap::Args)]
pub struct ScoreArgs {
    /// Scoring rules: LoCoMo F1 (official task_eval/evaluation.py) or HotpotQA F1.
    #[arg(long, value_enum, default_value = "locomo")]
    pub dataset: ScoreDataset,
    /// JSONL with {"question_id"|"question", "prediction", "answer" (string or number), "category"}.
    #[arg(long)]
    pub predictions: PathBuf,
    /// Print {"overall": {"f1", "count"}, "by_category": {...}} instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Write one {"f1": value} line per input line, in order (atomically; never onto
    /// `--predictions`, and an existing file only with `--force`).
    #[arg(long)]
    pub per_line: Option<PathBuf>,
    /// Replace an existing `--per-line` file.
    #[arg(long)]
    pub force: bool,
    /// Refuse a `--predictions` file larger than this many MiB (read whole into memory).
    #[arg(long, default_value_t = 2048)]
    pub max_file_mb: u64,
    /// Stop with an error naming the line when one LoCoMo category-1 (multi-answer) line
    /// needs more than this many part comparisons (huge answer lists sharing many words);
    /// ordinary lines need about one per word.
    #[arg(long, default_value_t = 20_000_000)]
    pub max_work: u64,
    /// HotpotQA F1: "memskill" (the reference's stemmed eval_utils.f1_score) or "official"
    /// (hotpot_evaluate_v1.py).
    #[arg(long, default_value = "memskill")]
    pub hotpotqa_f1: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum BackendKind {
    Local,
    Openai,
}

#[derive(Subcommand)]
pub enum LlmCmd {
    /// One chat turn: prints the answer, then usage and speed on stderr.
    Chat(ChatArgs),
    /// Serve the scripted synthetic oracle as an OpenAI-compatible endpoint on 127.0.0.1,
    /// optionally injecting faults (a testing and reliability tool, not a model server).
    ServeScripted(ServeScriptedArgs),
}

#[derive(clap::Args)]
pub struct ServeScriptedArgs {
    /// Synthetic samples and spans per sample (as data.synthetic_samples / _spans).
    #[arg(long, default_value_t = 8)]
    pub samples: usize,
    #[arg(long, default_value_t = 3)]
    pub spans: usize,
    /// The run's `run.seed` (the synthetic data depend on it).
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Port on 127.0.0.1 (0 = any free port; see --port-file).
    #[arg(long, default_value_t = 0)]
    pub port: u16,
    /// Write the chosen port here once listening.
    #[arg(long)]
    pub port_file: Option<PathBuf>,
    /// Share of chat requests answered with a fault (HTTP 500 / 429, garbage, dropped
    /// connection, null content, truncated reply, drawn uniformly).
    #[arg(long, default_value_t = 0.0)]
    pub fault_rate: f64,
    #[arg(long, default_value_t = 0)]
    pub fault_seed: u64,
    /// Requests whose body contains this text always get HTTP 500.
    #[arg(long)]
    pub fail_matching: Option<String>,
    /// Keep the request / fault counts in this JSON file (rewritten atomically every 200 ms).
    #[arg(long)]
    pub stats_file: Option<PathBuf>,
    /// Scripted latency per reply, in milliseconds.
    #[arg(long, default_value_t = 0)]
    pub latency_ms: u64,
    /// Answer designer rounds with this file's text (e.g. `{"changes": [...]}`) instead of
    /// "no change".
    #[arg(long)]
    pub designer_reply: Option<PathBuf>,
    /// Answer from this reply script instead of the synthetic oracle: JSON rules, the first
    /// whose `contains` is in the prompt gives the reply (format: the `reply_script` module,
    /// example: `scripts/bench/e2e-replies.json`). Replaces --samples, --spans, --seed and
    /// --designer-reply.
    #[arg(long, conflicts_with = "designer_reply")]
    pub replies: Option<PathBuf>,
    /// Append every chat request body to this new file, one JSON line each
    /// (`{"seq", "body"}`), to compare what two clients send (scripts/fidelity/requests.sh).
    #[arg(long)]
    pub record: Option<PathBuf>,
    /// List this model name in `GET /v1/models` (default: an empty list), as a real server
    /// lists the model it serves (`memskill preflight` checks it).
    #[arg(long)]
    pub served_model: Option<String>,
    /// Report this context window (`max_model_len`, as vLLM does) for --served-model.
    #[arg(long, requires = "served_model")]
    pub context_tokens: Option<u64>,
}

#[derive(clap::Args)]
pub struct ChatArgs {
    #[arg(long, value_enum, default_value = "local")]
    pub backend: BackendKind,
    /// OpenAI model name (openai) ; ignored for local.
    #[arg(long)]
    pub model: Option<String>,
    /// GGUF file for the local backend (default: the SmolLM2 asset).
    #[arg(long)]
    pub model_path: Option<PathBuf>,
    /// `llama` or `qwen2` (local; default from the GGUF metadata).
    #[arg(long)]
    pub arch: Option<memskill_executor::LocalArch>,
    /// Base URL(s) of OpenAI-compatible servers (repeat or comma-separate).
    #[arg(long, value_delimiter = ',')]
    pub base_url: Vec<String>,
    /// Environment variable(s) holding API keys.
    #[arg(long, value_delimiter = ',', default_value = "OPENAI_API_KEY")]
    pub api_key_env: Vec<String>,
    #[arg(long, default_value_t = 256)]
    pub max_tokens: u32,
    #[arg(long, default_value_t = 0.0)]
    pub temperature: f32,
    #[arg(long, default_value_t = 1.0)]
    pub top_p: f32,
    #[arg(long)]
    pub seed: Option<u64>,
    /// Structured output: constrain the reply to the JSON schema in this file (sent as
    /// `response_format`; a token mask on the local backend, which then also prints the
    /// mask's cost per token).
    #[arg(long)]
    pub json_schema: Option<PathBuf>,
    /// Optional system message.
    #[arg(long)]
    pub system: Option<String>,
    /// The user message.
    pub prompt: String,
}

#[derive(clap::Args)]
pub struct ParseActionsArgs {
    /// Number of retrieved memories shown to the executor (indices must be below it).
    #[arg(long)]
    pub retrieved: usize,
    /// Drop actions of other kinds (comma-separated), as `executor.enforce_skill_actions`
    /// does; without it every parsed action is kept, as in the reference.
    #[arg(long, value_delimiter = ',')]
    pub allow: Option<Vec<String>>,
}

pub fn score(a: ScoreArgs) -> anyhow::Result<()> {
    let hotpotqa_f1: HotpotF1 = a
        .hotpotqa_f1
        .parse()
        .map_err(|e| anyhow!("--hotpotqa-f1: {e}"))?;
    if let Some(out) = &a.per_line {
        refuse_overwrite_input(&a.predictions, out, "--per-line")?;
        refuse_existing(out, a.force, "--per-line")?;
    }
    let opts = ScoreOptions {
        dataset: a.dataset,
        hotpotqa_f1,
        max_file_bytes: a.max_file_mb.saturating_mul(1 << 20),
        max_work: a.max_work,
    };
    let report = score_file(&a.predictions, &opts).context("--predictions")?;
    if let Some(out) = &a.per_line {
        let mut buf = String::with_capacity(report.per_line.len() * 16);
        for s in &report.per_line {
            buf.push_str(&serde_json::json!({ "f1": s }).to_string());
            buf.push('\n');
        }
        write_atomic(out, buf.as_bytes())?;
    }
    print_scores(&report, a.json)
}

/// The mean F1 per category and overall, as a table or as one JSON object.
fn print_scores(r: &ScoreReport, json: bool) -> anyhow::Result<()> {
    if json {
        // through a Value: sorted keys, as before the report became a struct
        println!("{}", serde_json::to_value(r)?);
    } else {
        println!("{:<12} {:>8} {:>7}", "category", "F1", "count");
        for (k, g) in &r.by_category {
            println!("{:<12} {:>8.4} {:>7}", k, g.f1, g.count);
        }
        println!(
            "{:<12} {:>8.4} {:>7}",
            "overall", r.overall.f1, r.overall.count
        );
    }
    Ok(())
}

/// The synthetic oracle `serve-scripted` answers from when no reply script is given.
fn oracle(a: &ServeScriptedArgs) -> anyhow::Result<memskill_trainer::synthetic::SyntheticOracle> {
    let samples = memskill_trainer::synthetic::dataset(a.samples, a.spans, a.seed);
    let mut oracle = memskill_trainer::synthetic::SyntheticOracle::new(samples, a.latency_ms);
    if let Some(p) = &a.designer_reply {
        let text = std::fs::read_to_string(p)
            .with_context(|| format!("reading --designer-reply {}", p.display()))?;
        oracle = oracle.with_designer_reply(text);
    }
    Ok(oracle)
}

/// `memskill llm serve-scripted`: runs until killed.
fn serve_scripted(a: ServeScriptedArgs) -> anyhow::Result<()> {
    use memskill_trainer::scripted_server::{FaultPlan, ScriptedServer};
    if !(0.0..=1.0).contains(&a.fault_rate) {
        bail!("--fault-rate must be within 0..=1, got {}", a.fault_rate);
    }
    let llm: std::sync::Arc<dyn Llm> = match &a.replies {
        Some(p) => std::sync::Arc::new(memskill_dev::reply_script::ReplyScript::load(
            p,
            std::time::Duration::from_millis(a.latency_ms),
        )?),
        None => std::sync::Arc::new(oracle(&a)?),
    };
    let listener = std::net::TcpListener::bind(("127.0.0.1", a.port))
        .with_context(|| format!("binding 127.0.0.1:{}", a.port))?;
    let plan = FaultPlan {
        fault_rate: a.fault_rate,
        seed: a.fault_seed,
        fail_matching: a.fail_matching.clone(),
        record: a.record.clone(),
        served_model: a.served_model.clone(),
        context_tokens: a.context_tokens,
        ..Default::default()
    };
    let srv = ScriptedServer::start(listener, llm, plan).context("starting the scripted server")?;
    if let Some(p) = &a.port_file {
        memskill_trainer::fsutil::write_atomic(p, srv.addr.port().to_string().as_bytes())?;
    }
    let what = if a.replies.is_some() {
        "the reply script"
    } else {
        "the scripted oracle"
    };
    eprintln!("serving {what} at {}", srv.base_url());
    loop {
        std::thread::sleep(std::time::Duration::from_millis(200));
        if let Some(p) = &a.stats_file {
            let st = serde_json::to_vec(&srv.stats())?;
            memskill_trainer::fsutil::write_atomic(p, &st)?;
        }
    }
}

pub fn llm(c: LlmCmd) -> anyhow::Result<()> {
    let a = match c {
        LlmCmd::Chat(a) => a,
        LlmCmd::ServeScripted(a) => return serve_scripted(a),
    };
    let req = chat_request(&a)?;
    match a.backend {
        BackendKind::Local => chat_local(&a, &req),
        BackendKind::Openai => chat_openai(&a, &req),
    }
}

/// The request of `llm chat`: system and user message, sampling settings, the optional
/// `--json-schema`.
fn chat_request(a: &ChatArgs) -> anyhow::Result<ChatRequest> {
    let mut messages = Vec::new();
    if let Some(s) = &a.system {
        messages.push(Message::system(s.clone()));
    }
    messages.push(Message::user(a.prompt.clone()));
    let mut req = ChatRequest::new(messages)
        .with_max_tokens(a.max_tokens)
        .with_temperature(a.temperature);
    req.top_p = a.top_p;
    req.seed = a.seed;
    if let Some(p) = &a.json_schema {
        let text =
            std::fs::read_to_string(p).with_context(|| format!("reading {}", p.display()))?;
        let schema: serde_json::Value =
            serde_json::from_str(&text).with_context(|| format!("{}: not JSON", p.display()))?;
        if !schema.is_object() {
            bail!("{}: a JSON schema must be a JSON object", p.display());
        }
        req.response_schema = Some(memskill_core::ResponseSchema {
            name: "reply".into(),
            schema,
        });
    }
    Ok(req)
}

/// `llm chat --backend local`: the reply, then speed (and the token mask's cost) on stderr.
fn chat_local(a: &ChatArgs, req: &ChatRequest) -> anyhow::Result<()> {
    let mut cfg = LocalConfig {
        arch: a.arch,
        ..LocalConfig::default()
    };
    if let Some(p) = &a.model_path {
        cfg.model_path = p.clone();
    }
    let m = memskill_trainer::backends::load_local(&cfg, "--model-path")?;
    let r = m.chat(req).context("local generation")?;
    println!("{}", r.text);
    let t = m.last_timing();
    eprintln!(
        "[{}] prompt {} tok, completion {} tok, prefill {:.1} tok/s, decode {:.1} tok/s, {} ms",
        m.id(),
        r.usage.prompt_tokens,
        r.usage.completion_tokens,
        t.prefill_tok_s(),
        t.decode_tok_s(),
        r.latency_ms
    );
    if t.masked_tokens > 0 {
        let decode = t.decode_secs / t.completion_tokens.saturating_sub(1).max(1) as f64;
        eprintln!(
            "token mask: {:.3} ms per token over {} tokens; decode {:.3} ms per token \
             (mask included): {:.1}% of decode time",
            t.mask_secs_per_token() * 1e3,
            t.masked_tokens,
            decode * 1e3,
            100.0 * t.mask_secs_per_token() / decode.max(1e-12)
        );
    }
    Ok(())
}

/// `llm chat --backend openai`: the reply, then tokens and latency on stderr.
fn chat_openai(a: &ChatArgs, req: &ChatRequest) -> anyhow::Result<()> {
    let mut cfg = OpenAiConfig {
        api_key_envs: a.api_key_env.clone(),
        // this command's own defaults (not the run config's)
        model: "Qwen/Qwen3-8B".into(),
        max_concurrency: 16,
        ..OpenAiConfig::default()
    };
    if !a.base_url.is_empty() {
        cfg.base_urls = a.base_url.clone();
    }
    if let Some(m) = &a.model {
        cfg.model = m.clone();
    }
    let be = OpenAiBackend::new(cfg)?;
    let r = be
        .chat(req)
        .with_context(|| format!("chat with {}", be.id()))?;
    println!("{}", r.text);
    let secs = r.latency_ms.max(1) as f64 / 1000.0;
    eprintln!(
        "[{}] prompt {} tok, completion {} tok, {} ms ({:.1} completion tok/s end-to-end)",
        be.id(),
        r.usage.prompt_tokens,
        r.usage.completion_tokens,
        r.latency_ms,
        r.usage.completion_tokens as f64 / secs
    );
    Ok(())
}

pub fn parse_actions(a: ParseActionsArgs) -> anyhow::Result<()> {
    let allowed: Option<Vec<ActionKind>> = a
        .allow
        .as_ref()
        .map(|kinds| {
            kinds
                .iter()
                .filter(|s| !s.trim().is_empty())
                .map(|s| s.parse::<ActionKind>().map_err(|e| anyhow!("--allow: {e}")))
                .collect::<anyhow::Result<_>>()
        })
        .transpose()?;
    let mut input = Vec::new();
    std::io::stdin()
        .read_to_end(&mut input)
        .context("reading the response from stdin")?;
    let text = String::from_utf8_lossy(&input);
    let results = parse_response(&text, a.retrieved);
    let out = parse_actions_from(&results, allowed.as_deref());
    let json = serde_json::json!({
        "results": results.iter().map(|r| r.to_json()).collect::<Vec<_>>(),
        "actions": out.actions,
        "problems": out.problems,
    });
    println!(
        "{}",
        serde_json::to_string(&json).context("serialising the parse")?
    );
    Ok(())
}
