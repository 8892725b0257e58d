//! `memskill preflight`: every server a config names, asked before a run (reachable, model
//! served, context window, the longest prompt the run sends, structured outputs, embedding
//! dimension, throughput), and the run's LLM calls, tokens and wall time estimated. The pure
//! parts (rendering, counting, estimate, report) are `memskill_trainer::preflight`; this
//! module sends the probes (through `memskill_executor::backends::probe` and the chat and
//! embeddings backends), each within `preflight.timeout_secs`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Result};
use memskill_core::{ActionKind, ChatRequest, Llm, Message, Sample, SkillBank, TextEncoder};
use memskill_executor::backends::probe::{
    first_api_key, models_url, served_models, Probe, ServedModel, TokenizeRoute,
};
use memskill_executor::{OpenAiBackend, OpenAiConfig, TokenCounter};
use memskill_trainer::config::{Config, LlmBackend, RawConfig};
use memskill_trainer::preflight::{self as pf, Check, Measured, Rendered, Role, Throughput};

#[derive(clap::Args)]
pub struct PreflightArgs {
    /// Config file (TOML).
    #[arg(long)]
    pub config: PathBuf,
    /// Override a config key (repeatable; values are TOML).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub sets: Vec<String>,
    /// A checkpoint (or run folder) the evaluation would use: its skill bank is the one the
    /// evaluation's prompts are rendered with, and its controller's embedding size is what
    /// the embeddings server must give.
    #[arg(long)]
    pub checkpoint: Option<PathBuf>,
    /// Print the report as one JSON object.
    #[arg(long)]
    pub json: bool,
    /// Skip the throughput probe (then no wall time is estimated).
    #[arg(long)]
    pub no_throughput: bool,
}

/// What one server (endpoints + model) answered, shared by the roles it serves.
struct Server {
    /// Its context window and where that number came from.
    context: Option<(u64, String)>,
    counter: Counter,
    /// Whether any endpoint answered (the other probes are skipped when none did).
    up: bool,
    throughput: Option<Throughput>,
}

/// How a role's prompts are counted.
enum Counter {
    Server {
        probe: Arc<Probe>,
        route: TokenizeRoute,
        base: String,
        model: String,
    },
    Local(Box<TokenCounter>, String),
    Cl100k,
}

impl Counter {
    fn count(&self, text: &str) -> Result<usize, String> {
        match self {
            Counter::Server {
                probe,
                route,
                base,
                model,
            } => probe.count_tokens(*route, base, model, text),
            Counter::Local(c, _) => c.count(text),
            Counter::Cl100k => Ok(memskill_datasets::count_tokens(text)),
        }
    }

    fn describe(&self) -> String {
        match self {
            Counter::Server { route, .. } => format!("the server's tokenizer ({})", route.name()),
            Counter::Local(_, from) => format!("the model's tokenizer on this machine ({from})"),
            Counter::Cl100k => "cl100k (approximate: no tokenizer of the model was found)".into(),
        }
    }
}

pub fn run(a: PreflightArgs) -> Result<()> {
    let cfg = RawConfig::from_file(&a.config)?
        .with_sets(&a.sets)?
        .resolve()?;
    let mut checks: Vec<Check> = memskill_trainer::inspect::missing_files(&cfg)
        .into_iter()
        .map(|p| Check::fail("config", p))
        .collect();
    let ck = match &a.checkpoint {
        Some(p) => Some(load_checkpoint(p)?),
        None => None,
    };
    let (train, eval) = load_data(&cfg, &mut checks);
    let prompts = memskill_trainer::prompts::load(cfg.prompts.dir.as_deref())?;
    let train_bank = memskill_trainer::runtime::initial_bank(&cfg)?;
    let eval_bank = ck.as_ref().map_or(&train_bank, |c| &c.0);
    let rendered = pf::render(&pf::Inputs {
        cfg: &cfg,
        prompts: &prompts,
        train_bank: &train_bank,
        eval_bank,
        train: &train,
        eval: &eval,
    })?;
    let (measured, throughput) = probe_roles(&cfg, &a, &rendered, &train_bank, &mut checks);
    embeddings(&cfg, ck.as_ref().map(|c| c.1), &mut checks);
    let plan = memskill_trainer::inspect::plan(&cfg, &train);
    let eval_plan = pf::EvalPlan::of(&cfg, &eval);
    let estimate = pf::estimate(&cfg, &plan, &eval_plan, &measured);
    let report = pf::Report::new(
        a.config.display().to_string(),
        checks,
        measured,
        estimate,
        throughput,
    );
    if a.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", report.render());
    }
    if report.failures > 0 {
        bail!(
            "preflight of {}: {} check(s) failed (listed above)",
            a.config.display(),
            report.failures
        );
    }
    Ok(())
}

/// A checkpoint's skill bank and its controller's embedding size.
fn load_checkpoint(p: &Path) -> Result<(SkillBank, usize)> {
    use anyhow::Context;
    let dir = memskill_trainer::checkpoint::resolve(p)?;
    let ck = memskill_trainer::checkpoint::Checkpoint::load(&dir)
        .with_context(|| format!("--checkpoint {}", dir.display()))?;
    let dim = memskill_controller::saved_emb_dim(&ck.controller)
        .with_context(|| format!("--checkpoint {}: controller.bin", dir.display()))?;
    Ok((ck.bank, dim))
}

/// The training samples (as a run loads them) and the evaluation's; a failure is a check.
fn load_data(cfg: &Config, checks: &mut Vec<Check>) -> (Vec<Sample>, Vec<Sample>) {
    let train = match memskill_trainer::benchmark::open(cfg) {
        Ok(b) => b.samples().to_vec(),
        Err(e) => {
            checks.push(Check::fail("data", format!("training data: {e:#}")));
            Vec::new()
        }
    };
    let eval = match memskill_trainer::data::load_samples(
        &cfg.data,
        cfg.eval.split,
        &cfg.eval.span_mode,
        cfg.run.seed,
    ) {
        Ok(s) => s,
        Err(e) => {
            checks.push(Check::fail("data", format!("evaluation data: {e:#}")));
            Vec::new()
        }
    };
    if train.is_empty() && eval.is_empty() {
        checks.push(Check::note(
            "data",
            "no samples: nothing to render (ALFWorld's episodes are games)",
        ));
    }
    (train, eval)
}

/// Every role with prompts: its server asked once (shared with the roles on the same
/// server), its prompts counted and checked against the context window, its structured
/// outputs tried.
fn probe_roles(
    cfg: &Config,
    a: &PreflightArgs,
    rendered: &[Rendered],
    bank: &SkillBank,
    checks: &mut Vec<Check>,
) -> (Vec<Measured>, Vec<(String, Throughput)>) {
    let mut servers: HashMap<String, Server> = HashMap::new();
    let mut measured = Vec::new();
    let mut throughput = Vec::new();
    for role in Role::ALL {
        let mine: Vec<&Rendered> = rendered.iter().filter(|r| r.role == role).collect();
        if mine.is_empty() {
            continue;
        }
        let llm = role.llm(cfg);
        let key = llm.backend_key();
        if !servers.contains_key(&key) {
            let typical = typical_prompt(rendered);
            let s = server(cfg, role, llm, &typical, a.no_throughput, checks);
            servers.insert(key.clone(), s);
        }
        let s = &servers[&key];
        let name = role.name();
        checks.push(Check::ok(
            name,
            format!("prompts counted with {}", s.counter.describe()),
        ));
        for r in mine {
            match pf::measure(r, &mut |t| s.counter.count(t)) {
                Ok(m) => {
                    context_check(&m, s, checks);
                    measured.push(m);
                }
                Err(e) => checks.push(Check::fail(name, format!("counting the prompts: {e}"))),
            }
        }
        if s.up {
            structured(cfg, role, llm, bank, checks);
        }
        if let Some(t) = s.throughput {
            throughput.push((name.to_string(), t));
        }
    }
    (measured, throughput)
}

/// The check of one role's longest prompt against its server's context window.
fn context_check(m: &Measured, s: &Server, checks: &mut Vec<Check>) {
    let name = m.role.name();
    match &s.context {
        _ if m.prompts == 0 => {}
        Some((ctx, _)) => match pf::overflow(m, *ctx) {
            Some(e) => checks.push(Check::fail(name, e)),
            None => checks.push(Check::ok(
                name,
                format!(
                    "{}: the longest prompt ({}, {} tokens) + {} reply tokens fits the context window of {ctx}",
                    m.phase.name(),
                    m.longest_at,
                    m.longest_tokens,
                    m.max_tokens
                ),
            )),
        },
        None => checks.push(Check::note(
            name,
            format!(
                "{}: longest prompt {} tokens + {} reply tokens; the context window is unknown (the server reports none: set preflight.context_tokens)",
                m.phase.name(),
                m.longest_tokens,
                m.max_tokens
            ),
        )),
    }
}

/// A prompt of the executor's mean length (at most 4,000 characters) for the throughput
/// probe: the shortest of its longest prompts, cut.
fn typical_prompt(rendered: &[Rendered]) -> String {
    let Some(r) = rendered
        .iter()
        .find(|r| r.role == Role::Executor && !r.longest.is_empty())
    else {
        return "Summarise the benefits of regular exercise in a few sentences.".repeat(20);
    };
    let n = (r.mean_chars() as usize).clamp(200, 4000);
    let text = &r.longest[r.longest.len() - 1].1;
    text.chars().take(n).collect()
}

/// Ask the server of `llm` (first used by `role`) what it serves, how it counts and how
/// fast it is.
fn server(
    cfg: &Config,
    role: Role,
    llm: &memskill_trainer::config::LlmConfig,
    typical: &str,
    no_throughput: bool,
    checks: &mut Vec<Check>,
) -> Server {
    let name = role.name();
    match &llm.backend {
        LlmBackend::Openai(o) => openai_server(cfg, name, o, typical, no_throughput, checks),
        LlmBackend::Local(l) => {
            let lc = l.backend_config();
            let what = format!("{name}: the local GGUF");
            let counter = match memskill_trainer::backends::local_model_file(&lc, &what)
                .map_err(|e| format!("{e:#}"))
                .and_then(|p| {
                    TokenCounter::from_gguf(&p)
                        .map(|c| Counter::Local(Box::new(c), p.display().to_string()))
                        .map_err(|e| e.to_string())
                }) {
                Ok(c) => c,
                Err(e) => {
                    checks.push(Check::fail(name, e));
                    Counter::Cl100k
                }
            };
            checks.push(Check::note(
                name,
                "local backend (in process): no server to reach; throughput not probed",
            ));
            Server {
                context: Some((
                    lc.max_context as u64,
                    "max_context of the local backend".into(),
                )),
                counter,
                up: false,
                throughput: None,
            }
        }
        LlmBackend::ScriptedSynthetic(_) => {
            checks.push(Check::note(
                name,
                "the built-in scripted oracle: nothing to probe",
            ));
            Server {
                context: None,
                counter: Counter::Cl100k,
                up: false,
                throughput: None,
            }
        }
    }
}

fn openai_server(
    cfg: &Config,
    name: &str,
    o: &OpenAiConfig,
    typical: &str,
    no_throughput: bool,
    checks: &mut Vec<Check>,
) -> Server {
    let timeout = Duration::from_secs(cfg.preflight.timeout_secs.max(1));
    let down = Server {
        context: None,
        counter: Counter::Cl100k,
        up: false,
        throughput: None,
    };
    let urls = match o.endpoint_urls() {
        Ok(u) => u,
        Err(e) => {
            checks.push(Check::fail(name, e));
            return down;
        }
    };
    let probe = match Probe::new(timeout, first_api_key(&o.api_key_envs)) {
        Ok(p) => Arc::new(p),
        Err(e) => {
            checks.push(Check::fail(name, e));
            return down;
        }
    };
    let mut reported: Vec<u64> = Vec::new();
    let mut answered: Vec<&String> = Vec::new();
    for url in &urls {
        if let Some(ctx) = check_models(&probe, name, url, &o.model, checks) {
            answered.push(url);
            reported.extend(ctx);
        }
    }
    let Some(base) = answered.first().map(|u| u.to_string()) else {
        return down;
    };
    let context = context_of(cfg, &reported);
    let counter = counter_for(&probe, &base, &o.model);
    let throughput = if no_throughput {
        None
    } else {
        probe_throughput(cfg, name, o, typical, checks)
    };
    Server {
        context,
        counter,
        up: true,
        throughput,
    }
}

/// The context window: the smallest one the endpoints report, else `preflight.context_tokens`.
fn context_of(cfg: &Config, reported: &[u64]) -> Option<(u64, String)> {
    match reported.iter().min() {
        Some(&c) => Some((c, "reported by the server's /models".into())),
        None if cfg.preflight.context_tokens > 0 => Some((
            cfg.preflight.context_tokens,
            "preflight.context_tokens".into(),
        )),
        None => None,
    }
}

/// `GET <url>/models`: whether the endpoint answers and serves `model`. Returns None when
/// it did not answer, else the context window it reports for `model` (if any).
fn check_models(
    probe: &Probe,
    name: &str,
    url: &str,
    model: &str,
    checks: &mut Vec<Check>,
) -> Option<Option<u64>> {
    let list = models_url(url);
    let v = match probe.get_json(&list) {
        Ok(v) => v,
        Err(e) => {
            checks.push(Check::fail(
                name,
                format!("endpoint {url} is not reachable: {e}"),
            ));
            return None;
        }
    };
    let models: Vec<ServedModel> = match served_models(&v) {
        Ok(m) => m,
        Err(e) => {
            checks.push(Check::fail(name, format!("{list}: {e}")));
            return Some(None);
        }
    };
    let found = models.iter().find(|m| m.id == model);
    match found {
        _ if models.is_empty() => checks.push(Check::note(
            name,
            format!("{url} answers but lists no models: `{model}` not checked"),
        )),
        Some(m) => checks.push(Check::ok(
            name,
            format!(
                "{url} answers and serves `{model}`{}",
                m.context
                    .map_or(String::new(), |c| format!(" (context window {c})"))
            ),
        )),
        None => {
            let ids: Vec<&str> = models.iter().map(|m| m.id.as_str()).collect();
            checks.push(Check::fail(
                name,
                format!(
                    "{url} does not serve `{model}` (it serves: {})",
                    ids.join(", ")
                ),
            ));
        }
    }
    Some(found.and_then(|m| m.context))
}

/// The server's tokenizer route, else the model's `tokenizer.json` in the Hugging Face
/// cache (the model name is a Hub name), else cl100k.
fn counter_for(probe: &Arc<Probe>, base: &str, model: &str) -> Counter {
    if let Some(route) = probe.find_tokenizer(base, model) {
        return Counter::Server {
            probe: probe.clone(),
            route,
            base: base.to_string(),
            model: model.to_string(),
        };
    }
    let hub = memskill_trainer::hub::parse_hub_name(model).and_then(|_| {
        memskill_trainer::hub::resolve_model(
            Path::new(model),
            memskill_trainer::hub::ModelFile::Folder,
            "model",
        )
        .ok()
    });
    if let Some(dir) = hub {
        let file = dir.join("tokenizer.json");
        if let Ok(c) = TokenCounter::from_tokenizer_json(&file) {
            return Counter::Local(Box::new(c), file.display().to_string());
        }
    }
    Counter::Cl100k
}

/// A backend for probes: no retries, `preflight.timeout_secs` per request.
fn probe_backend(cfg: &Config, o: &OpenAiConfig) -> Result<OpenAiBackend, String> {
    OpenAiBackend::new(OpenAiConfig {
        max_retries: 0,
        timeout_secs: cfg.preflight.timeout_secs.max(1),
        ..o.clone()
    })
    .map_err(|e| e.to_string())
}

/// One structured request in the role's schema: the dialect the server took, or the failure.
fn structured(
    cfg: &Config,
    role: Role,
    llm: &memskill_trainer::config::LlmConfig,
    bank: &SkillBank,
    checks: &mut Vec<Check>,
) {
    let LlmBackend::Openai(o) = &llm.backend else {
        return;
    };
    if !llm.structured.is_on() {
        return;
    }
    let tokens = cfg.preflight.probe_tokens;
    let schema = match role {
        Role::Executor => memskill_executor::executor_schema_with(
            &[ActionKind::Insert, ActionKind::Noop],
            0,
            tokens,
            memskill_executor::ReplyForm::default().fields(),
        ),
        Role::Judge => memskill_executor::judge_schema(),
        Role::Designer => memskill_designer::json::refinement_schema(bank, &cfg.designer.cfg),
        Role::Answer => return,
    };
    let name = role.name();
    let backend = match probe_backend(cfg, o) {
        Ok(b) => b,
        Err(e) => return checks.push(Check::fail(name, e)),
    };
    let req = ChatRequest::new(vec![Message::user("Reply with a JSON document.")])
        .with_max_tokens(tokens)
        .with_temperature(0.0)
        .with_response_schema(Some(schema));
    match backend.chat(&req) {
        Ok(_) => {
            let took: Vec<String> = backend
                .structured_dialects()
                .iter()
                .map(|(url, d)| format!("{url}: {d}"))
                .collect();
            checks.push(Check::ok(
                name,
                format!("structured outputs accepted ({})", took.join(", ")),
            ));
        }
        Err(e) => checks.push(Check::fail(
            name,
            format!(
                "structured outputs (structured_dialect = \"{}\"): {e}",
                o.structured_dialect
            ),
        )),
    }
}

/// Tokens per second at the configured concurrency: a batch of `typical` prompts with a
/// 1-token reply (reading), then a batch of short prompts with `preflight.probe_tokens`
/// (writing). Each request starts with its own tag, so that no server reuses a cached prefix.
fn probe_throughput(
    cfg: &Config,
    name: &str,
    o: &OpenAiConfig,
    typical: &str,
    checks: &mut Vec<Check>,
) -> Option<Throughput> {
    let c = o.max_concurrency.clamp(1, 64);
    let run = || -> Result<Throughput, String> {
        let backend = probe_backend(cfg, o)?;
        let read = batch(&backend, c, 1, |i| format!("[read {i}] {typical}"))?;
        let write = batch(&backend, c, cfg.preflight.probe_tokens, |i| {
            format!("[write {i}] Count from 1 to 1000, one number per line.")
        })?;
        if read.0 == 0 || write.1 == 0 {
            return Err("the server reports no token usage".into());
        }
        Ok(Throughput {
            concurrency: c,
            prompt_tokens_per_s: read.0 as f64 / read.2,
            completion_tokens_per_s: write.1 as f64 / write.2,
        })
    };
    match run() {
        Ok(t) => Some(t),
        Err(e) => {
            checks.push(Check::fail(name, format!("throughput probe: {e}")));
            None
        }
    }
}

/// `c` requests at once: prompt tokens, completion tokens, seconds.
fn batch(
    backend: &OpenAiBackend,
    c: usize,
    max_tokens: u32,
    prompt: impl Fn(usize) -> String + Sync,
) -> Result<(u64, u64, f64), String> {
    let start = Instant::now();
    let replies: Vec<Result<memskill_core::ChatResponse, String>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..c)
            .map(|i| {
                let prompt = &prompt;
                s.spawn(move || {
                    let req = ChatRequest::new(vec![Message::user(prompt(i))])
                        .with_max_tokens(max_tokens)
                        .with_temperature(0.0);
                    backend.chat(&req).map_err(|e| e.to_string())
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err("probe thread panicked".into()))
            })
            .collect()
    });
    let secs = start.elapsed().as_secs_f64().max(1e-6);
    let (mut p, mut q) = (0, 0);
    for r in replies {
        let r = r?;
        p += r.usage.prompt_tokens;
        q += r.usage.completion_tokens;
    }
    Ok((p, q, secs))
}

/// Every embeddings server: reachable, its vectors' dimension, and (the state encoder's,
/// with `--checkpoint`) that dimension against the checkpoint's controller.
fn embeddings(cfg: &Config, ck_dim: Option<usize>, checks: &mut Vec<Check>) {
    let name = "embeddings";
    for (field, e) in cfg.embedding_servers() {
        let timeout = Duration::from_secs(cfg.preflight.timeout_secs.max(1));
        if let Ok(probe) = Probe::new(timeout, first_api_key(&e.http.api_key_envs)) {
            for url in e.http.endpoint_urls().unwrap_or_default() {
                check_models(&probe, name, &url, &e.http.model, checks);
            }
        }
        let backend = match probe_backend(cfg, &e.http) {
            Ok(b) => Arc::new(b),
            Err(err) => {
                checks.push(Check::fail(name, format!("{field}: {err}")));
                continue;
            }
        };
        let dim = match memskill_executor::OpenAiEmbedder::connect(backend, 1) {
            Ok(emb) => emb.dim(),
            Err(err) => {
                checks.push(Check::fail(name, format!("{field}: {err}")));
                continue;
            }
        };
        let line = format!(
            "{field}: `{}` gives {dim}-dimensional vectors",
            e.http.model
        );
        match ck_dim {
            Some(want) if field == "encoder.openai" && want != dim => checks.push(Check::fail(
                name,
                format!("{line}, but the checkpoint's controller was trained on {want}"),
            )),
            Some(_) if field == "encoder.openai" => {
                checks.push(Check::ok(name, format!("{line}, as the checkpoint's")))
            }
            _ => checks.push(Check::ok(name, line)),
        }
    }
}
