//! Trainer benchmark: one inner epoch against a local OpenAI-compatible server that answers
//! after a fixed latency, compared with the critical-path ideal.
//!
//! Within an episode the spans are sequential (each executor call needs the memory the
//! previous one wrote) and then all queries run at once, so with every episode of the batch
//! in parallel the ideal wall time is `(spans + 1) * latency`.

use std::net::TcpListener;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use memskill_core::{ChatRequest, ChatResponse, Llm, LlmError, Sample};

use memskill_trainer::config::Config;
use memskill_trainer::scripted_server::{FaultPlan, ScriptedServer};
use memskill_trainer::synthetic::SyntheticOracle;
use memskill_trainer::train::{train, TrainOptions};

/// Maps the concatenated message contents of a request to the reply text.
pub type Responder = Arc<dyn Fn(&str) -> String + Send + Sync>;

/// An OpenAI-compatible chat server on 127.0.0.1 backed by a scripted responder (the
/// synthetic oracle by default) that answers after a fixed latency: the
/// [`memskill_trainer::scripted_server::ScriptedServer`] without faults. Tests and benchmarks only.
pub struct OracleServer {
    pub port: u16,
    server: ScriptedServer,
}

/// A responder as an [`Llm`] that answers after `latency`.
struct ResponderLlm {
    respond: Responder,
    latency: Duration,
}

impl Llm for ResponderLlm {
    fn id(&self) -> String {
        "responder".into()
    }
    fn chat(&self, req: &ChatRequest) -> Result<ChatResponse, LlmError> {
        let start = std::time::Instant::now();
        let prompt = memskill_trainer::scripted_server::joined_prompt(req);
        let text = (self.respond)(&prompt);
        std::thread::sleep(self.latency);
        Ok(memskill_trainer::scripted_server::scripted_reply(
            &prompt, text, start,
        ))
    }
}

impl OracleServer {
    /// Start on a free port; every answer is sent after `latency`.
    pub fn start(samples: Vec<Sample>, latency: Duration) -> Result<Self> {
        let oracle = SyntheticOracle::new(samples, 0);
        Self::start_with(Arc::new(move |p: &str| oracle.reply(p)), latency)
    }

    /// Start on a free port with any responder; every answer is sent after `latency`.
    pub fn start_with(respond: Responder, latency: Duration) -> Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0").context("binding 127.0.0.1")?;
        let llm = Arc::new(ResponderLlm { respond, latency });
        let server = ScriptedServer::start(listener, llm, FaultPlan::default())
            .context("starting the oracle server")?;
        Ok(Self {
            port: server.addr.port(),
            server,
        })
    }

    pub fn base_url(&self) -> String {
        self.server.base_url()
    }

    /// Chat requests answered so far.
    pub fn requests(&self) -> u64 {
        self.server.stats().chat_requests
    }
}

/// The benchmark's measurements.
#[derive(Debug, Clone)]
pub struct BenchResult {
    pub latency_ms: u64,
    pub batch: usize,
    pub spans: usize,
    pub requests: u64,
    pub inner_epoch_s: f64,
    pub rollout_s: f64,
    pub update_s: f64,
    pub ideal_s: f64,
}

impl BenchResult {
    pub fn ratio(&self) -> f64 {
        self.inner_epoch_s / self.ideal_s
    }
    pub fn report(&self) -> String {
        format!(
            "trainer inner epoch: batch {} x {} spans (+ {} queries each), server latency {} ms, {} requests\n\
             wall {:.3} s (rollout {:.3} s, PPO update {:.3} s); critical-path ideal ({} sequential calls x {} ms) {:.3} s\n\
             ratio wall/ideal = {:.4} (rollout/ideal = {:.4})",
            self.batch,
            self.spans,
            self.spans,
            self.latency_ms,
            self.requests,
            self.inner_epoch_s,
            self.rollout_s,
            self.update_s,
            self.spans + 1,
            self.latency_ms,
            self.ideal_s,
            self.ratio(),
            self.rollout_s / self.ideal_s
        )
    }
}

/// Run one inner epoch of `batch` synthetic episodes with `spans` spans each against the
/// local server (hashing encoder, small policy); return the timings.
pub fn bench_inner_epoch(latency_ms: u64, batch: usize, spans: usize) -> Result<BenchResult> {
    bench_inner_epoch_with(latency_ms, batch, spans, "hashing")
}

/// As [`bench_inner_epoch`] with the state encoder `encoder`: `"hashing"` (256-d, policy
/// hidden 64) or `"minilm"` (the real all-MiniLM-L6-v2 from the asset cache, default policy).
pub fn bench_inner_epoch_with(
    latency_ms: u64,
    batch: usize,
    spans: usize,
    encoder: &str,
) -> Result<BenchResult> {
    let tmp = std::env::temp_dir().join(format!("memskill-bench-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    let samples = memskill_trainer::synthetic::dataset(batch, spans, 7);
    let server = OracleServer::start(samples, Duration::from_millis(latency_ms))?;
    let sets = [
        "run.name=\"bench\"".to_string(),
        "run.outer_epochs=1".into(),
        "run.inner_epochs=1".into(),
        format!("run.batch_size={batch}"),
        "data.dataset=\"synthetic\"".into(),
        format!("data.synthetic_samples={batch}"),
        format!("data.synthetic_spans={spans}"),
        "controller.top_k=1".into(),
        "designer.enabled=false".into(),
        "executor.backend=\"openai\"".into(),
        format!("executor.base_urls=[\"{}\"]", server.base_url()),
        "executor.model=\"oracle\"".into(),
        "executor.api_key_envs=[]".into(),
        format!("executor.max_concurrency={}", batch * spans.max(1) * 2),
        "executor.max_retries=0".into(),
        format!("concurrency.episodes={batch}"),
        format!("concurrency.queries={spans}"),
    ];
    let mut sets = sets.to_vec();
    match encoder {
        "hashing" => sets.extend([
            "encoder.kind=\"hashing\"".to_string(),
            "encoder.dim=256".into(),
            "policy.hidden=64".into(),
        ]),
        "minilm" => sets.push("encoder.kind=\"minilm\"".into()),
        other => anyhow::bail!("bench encoder {other:?}: expected hashing or minilm"),
    }
    let cfg = Config::from_toml_str("", &sets, "bench")?;
    let opts = TrainOptions {
        runs_dir: tmp.clone(),
        progress: false,
        ..Default::default()
    };
    train(&cfg, &opts)?;
    let timings = std::fs::read_to_string(tmp.join("bench").join("timings.jsonl"))?;
    let first: serde_json::Value =
        serde_json::from_str(timings.lines().next().context("no timing line")?)
            .context("timing line")?;
    let f = |k: &str| first[k].as_f64().unwrap_or(f64::NAN);
    let r = BenchResult {
        latency_ms,
        batch,
        spans,
        requests: server.requests(),
        inner_epoch_s: f("total_s"),
        rollout_s: f("rollout_s"),
        update_s: f("update_s"),
        ideal_s: (spans as f64 + 1.0) * latency_ms as f64 / 1000.0,
    };
    let _ = std::fs::remove_dir_all(PathBuf::from(&tmp));
    Ok(r)
}

/// ALFWorld throughput: the same expert walkthroughs played by 1 bridge process and by `workers`.
#[derive(Debug, Clone)]
pub struct AlfBenchResult {
    pub games: usize,
    pub workers: usize,
    /// (processes, pool start seconds, play seconds, games won)
    pub runs: Vec<(usize, f64, f64, usize)>,
}

impl AlfBenchResult {
    fn per_min(&self, i: usize) -> f64 {
        let (_, _, play, _) = self.runs[i];
        if play > 0.0 {
            60.0 * self.games as f64 / play
        } else {
            0.0
        }
    }

    pub fn report(&self) -> String {
        let mut s = format!(
            "ALFWorld walkthroughs of {} valid_unseen games (max steps = walkthrough + 5; one untimed warm-up game per process)\n",
            self.games
        );
        for (i, (n, start, play, won)) in self.runs.iter().enumerate() {
            s.push_str(&format!(
                "{n} bridge process(es): {:.1} games/min ({play:.1} s playing, {start:.1} s starting the pool), {won}/{} won\n",
                self.per_min(i),
                self.games
            ));
        }
        if self.runs.len() == 2 {
            s.push_str(&format!(
                "speedup {} vs 1 process: {:.2}x (ideal {}x)",
                self.workers,
                self.per_min(1) / self.per_min(0).max(1e-9),
                self.workers
            ));
        }
        s
    }
}

/// Play the walkthroughs of `games` valid_unseen games with 1 and with `workers` bridge
/// processes (the real TextWorld bridge from `cfg`), timing each pool.
pub fn bench_alfworld(
    cfg: &memskill_trainer::config::AlfworldConfig,
    games: usize,
    workers: usize,
) -> Result<AlfBenchResult> {
    use memskill_alfworld::{replay_walkthroughs, BridgePool, GameIndex};
    let root = memskill_trainer::alfworld::games_root(cfg);
    let index = GameIndex::from_dir(&root).with_context(|| {
        format!(
            "ALFWorld games under {} (scripts/alfworld/unpack.sh)",
            root.display()
        )
    })?;
    let list = index.select("valid_unseen", Some(games.max(1)));
    let mut counts = vec![1];
    if workers > 1 {
        counts.push(workers);
    }
    let mut runs = Vec::new();
    for n in counts {
        let t0 = std::time::Instant::now();
        let pool = BridgePool::start(memskill_alfworld::BridgeConfig {
            workers: n,
            ..memskill_trainer::alfworld::bridge_config(cfg)
        })
        .context("starting the ALFWorld bridge (scripts/alfworld/setup.sh)")?;
        let start = t0.elapsed().as_secs_f64();
        // Warm-up (untimed): one game per process loads the engine's lazy parts.
        let _ = replay_walkthroughs(&pool, &list[..n.min(list.len())]);
        let t1 = std::time::Instant::now();
        let rs = replay_walkthroughs(&pool, &list);
        let play = t1.elapsed().as_secs_f64();
        runs.push((n, start, play, rs.iter().filter(|r| r.won()).count()));
    }
    Ok(AlfBenchResult {
        games: list.len(),
        workers,
        runs,
    })
}
