//! `memskill bench encoder | ppo | llm | all`: our implementation against its baseline,
//! interleaved.
//!
//! The baselines run in one long-lived Python process (`scripts/bench/baseline.py`, venv made by
//! `scripts/bench/setup.sh`): the PyTorch twin of the encoder (sentence-transformers) and of the
//! PPO update, and llama.cpp (llama-cpp-python) on the same GGUF file and the same prompt token
//! ids. Each round runs ours, then the baseline (A B A B ...), so a change of machine load hits
//! both sides alike. Every measurement is written as a JSON line; the summary prints min /
//! median / max of each side and the per-round speed ratio (ours vs baseline, > 1 = ours faster)
//! as median [min, max].
//!
//! The 1-minute load average is checked before the first round: above 0.5 per core the bench
//! refuses to run (`--force` runs anyway and marks every line and the table as loaded).
//! Between the benches of `all`, it waits for the load (which then includes the previous
//! bench's own work) to settle again. The load after the run is reported but not judged.
//! `llm` measures the machine's memory bandwidth and f32 rate first
//! ([`crate::membench`]) and shows them beside the decode figure.

mod encoder_dir;

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::Arc;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::{json, Value};

/// Options shared by every interleaved benchmark.
#[derive(Debug, Clone)]
pub struct PerfOptions {
    /// Rounds of (ours, baseline); at least 5.
    pub rounds: usize,
    /// Run on a busy machine (every result is then marked `"quiet": false`).
    pub force: bool,
    /// JSON-lines file the measurements are appended to.
    pub json: PathBuf,
    /// Python of the baseline venv (default: `<cache>/bench-venv/bin/python`).
    pub python: Option<PathBuf>,
    /// Measure ours only.
    pub no_baseline: bool,
    /// GGUF file for `llm` (default: the SmolLM2-135M Q4_1 asset).
    pub model: Option<PathBuf>,
    /// Model folder for `encoder` (MiniLM / BERT or Qwen3-Embedding): LoCoMo sessions at
    /// batch 1 and 8 against sentence-transformers on the same folder (`perfbench/encoder_dir.rs`).
    /// None: MiniLM on LoCoMo turns.
    pub encoder_model: Option<PathBuf>,
    /// LoCoMo sessions per round for `encoder --model` (8).
    pub sessions: usize,
    /// Prompt tokens for `llm` (680).
    pub prompt_tokens: usize,
    /// Decoded tokens for `llm` (128).
    pub decode_tokens: usize,
}

impl Default for PerfOptions {
    fn default() -> Self {
        Self {
            rounds: 7,
            force: false,
            json: PathBuf::from("bench-results.jsonl"),
            python: None,
            no_baseline: false,
            model: None,
            encoder_model: None,
            sessions: 8,
            prompt_tokens: 680,
            decode_tokens: 128,
        }
    }
}

/// The machine's load: 1-minute average and core count.
#[derive(Debug, Clone, Copy)]
pub struct Load {
    pub load1: f64,
    pub cores: usize,
}

impl Load {
    /// Reads `/proc/loadavg` (None where it does not exist).
    pub fn now() -> Option<Self> {
        let raw = std::fs::read_to_string("/proc/loadavg").ok()?;
        let load1 = raw.split_whitespace().next()?.parse().ok()?;
        let cores = std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1);
        Some(Self { load1, cores })
    }

    /// Quiet: at most 0.5 per core.
    pub fn quiet(&self) -> bool {
        self.load1 <= 0.5 * self.cores as f64
    }
}

/// Which build this binary is: `release` or `dev` (debug assertions on).
pub fn profile() -> &'static str {
    if cfg!(debug_assertions) {
        "dev"
    } else {
        "release"
    }
}

/// The baseline process (`scripts/bench/baseline.py`), one request at a time.
pub struct Baseline {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

/// Where `scripts/bench/setup.sh` puts the baseline venv's python.
pub fn default_bench_python() -> PathBuf {
    memskill_controller::default_assets_dir()
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()
        .join("bench-venv/bin/python")
}

fn repo_root() -> PathBuf {
    // The binary is usually run from the checkout; fall back to the crate's source location.
    let here = PathBuf::from("scripts/bench/baseline.py");
    if here.is_file() {
        return PathBuf::from(".");
    }
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
}

impl Baseline {
    pub fn start(python: Option<&Path>) -> Result<Self> {
        let py = python
            .map(Path::to_path_buf)
            .unwrap_or_else(default_bench_python);
        if !py.exists() {
            bail!(
                "baseline python {} not found: run scripts/bench/setup.sh (or pass --python, or --no-baseline)",
                py.display()
            );
        }
        let script = repo_root().join("scripts/bench/baseline.py");
        let mut child = Command::new(&py)
            .arg(&script)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .with_context(|| format!("starting {} {}", py.display(), script.display()))?;
        let stdin = child.stdin.take().context("baseline stdin")?;
        let stdout = BufReader::new(child.stdout.take().context("baseline stdout")?);
        Ok(Self {
            child,
            stdin,
            stdout,
        })
    }

    /// Sends one request and waits for its answer; an `"error"` answer is an error.
    pub fn call(&mut self, req: &Value) -> Result<Value> {
        writeln!(self.stdin, "{req}").context("writing to the baseline")?;
        self.stdin.flush()?;
        let mut line = String::new();
        if self.stdout.read_line(&mut line)? == 0 {
            bail!("the baseline process exited (request {req})");
        }
        let v: Value =
            serde_json::from_str(&line).with_context(|| format!("baseline answer {line:?}"))?;
        if let Some(e) = v.get("error") {
            bail!("baseline {}: {e}", req["op"]);
        }
        Ok(v)
    }

    fn value(&mut self, req: &Value, key: &str) -> Result<f64> {
        let v = self.call(req)?;
        v.get(key)
            .and_then(Value::as_f64)
            .with_context(|| format!("baseline answer {v} has no number {key}"))
    }
}

impl Drop for Baseline {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One measured quantity, both sides, all rounds.
#[derive(Debug, Clone)]
pub struct Series {
    pub bench: &'static str,
    pub metric: String,
    pub unit: &'static str,
    /// true for throughputs (texts/s, tok/s), false for times (ms).
    pub higher_is_better: bool,
    pub ours: Vec<f64>,
    pub baseline: Vec<f64>,
}

/// min, median, max of `v` (NaN when empty).
pub fn min_med_max(v: &[f64]) -> (f64, f64, f64) {
    if v.is_empty() {
        return (f64::NAN, f64::NAN, f64::NAN);
    }
    let mut s = v.to_vec();
    s.sort_by(|a, b| a.total_cmp(b));
    let n = s.len();
    let med = if n % 2 == 1 {
        s[n / 2]
    } else {
        (s[n / 2 - 1] + s[n / 2]) / 2.0
    };
    (s[0], med, s[n - 1])
}

impl Series {
    fn new(bench: &'static str, metric: &str, unit: &'static str, higher: bool) -> Self {
        Self {
            bench,
            metric: metric.into(),
            unit,
            higher_is_better: higher,
            ours: Vec::new(),
            baseline: Vec::new(),
        }
    }

    /// Per-round speed ratios, ours vs baseline (> 1: ours faster).
    pub fn ratios(&self) -> Vec<f64> {
        self.ours
            .iter()
            .zip(&self.baseline)
            .map(|(&o, &b)| if self.higher_is_better { o / b } else { b / o })
            .collect()
    }

    fn row(&self) -> String {
        let (a, b, c) = min_med_max(&self.ours);
        let mut s = format!(
            "| {:<8} | {:<22} | {:>9.1} / {:>9.1} / {:>9.1} |",
            self.bench, self.metric, a, b, c
        );
        if self.baseline.is_empty() {
            s.push_str("              (no baseline)            |                       |");
        } else {
            let (d, e, f) = min_med_max(&self.baseline);
            let (r0, rm, r1) = min_med_max(&self.ratios());
            s.push_str(&format!(
                " {d:>9.1} / {e:>9.1} / {f:>9.1} | {rm:>5.2}x [{r0:.2}, {r1:.2}] |"
            ));
        }
        s.push_str(&format!(" {}", self.unit));
        s
    }

    fn summary_json(&self) -> Value {
        let (a, b, c) = min_med_max(&self.ours);
        let mut v = json!({
            "bench": self.bench, "metric": self.metric, "unit": self.unit,
            "ours": {"min": a, "median": b, "max": c, "values": self.ours},
        });
        if !self.baseline.is_empty() {
            let (d, e, f) = min_med_max(&self.baseline);
            let (r0, rm, r1) = min_med_max(&self.ratios());
            v["baseline"] = json!({"min": d, "median": e, "max": f, "values": self.baseline});
            v["ratio"] = json!({"min": r0, "median": rm, "max": r1, "per_round": self.ratios()});
        }
        v
    }
}

/// Appends JSON lines (one per measurement, one summary per series) and remembers the context.
struct Recorder {
    file: std::fs::File,
    context: Value,
}

impl Recorder {
    fn open(path: &Path, context: Value) -> Result<Self> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)?;
        }
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .with_context(|| format!("opening {}", path.display()))?;
        Ok(Self { file, context })
    }

    fn line(&mut self, mut v: Value) -> Result<()> {
        if let (Some(obj), Some(ctx)) = (v.as_object_mut(), self.context.as_object()) {
            for (k, x) in ctx {
                obj.entry(k.clone()).or_insert(x.clone());
            }
        }
        writeln!(self.file, "{v}")?;
        Ok(())
    }

    fn measurement(&mut self, s: &Series, side: &str, round: usize, value: f64) -> Result<()> {
        self.line(json!({
            "bench": s.bench, "metric": s.metric, "unit": s.unit, "side": side,
            "round": round, "value": value,
            "load1": Load::now().map(|l| l.load1),
        }))
    }
}

/// The first `n` turn texts of LoCoMo in file order (the PyTorch twin's rule, read by
/// `memskill_datasets::locomo_turn_texts`), else synthetic.
pub fn bench_texts(n: usize) -> (Vec<String>, &'static str) {
    let cache = memskill_controller::default_assets_dir()
        .parent()
        .map(|c| c.join("data/locomo/locomo10.json"));
    let path = std::env::var("LOCOMO_JSON")
        .map(PathBuf::from)
        .ok()
        .or(cache);
    memskill_datasets::bench_turn_texts(path.as_deref(), n)
}

/// The PPO workload of the twin: a controller (d 384, H 256) and 4 episodes x 16 transitions
/// over 30 shared skills, K = 3, 4 epochs, minibatch 32.
pub fn ppo_workload() -> Result<(
    memskill_controller::Controller,
    Vec<Vec<memskill_controller::Transition>>,
)> {
    use memskill_controller::{Controller, PolicyConfig, PpoConfig, SelectMode, Transition};
    let d = 384;
    let ppo = PpoConfig {
        ppo_epochs: 4,
        target_kl: f32::INFINITY,
        ..PpoConfig::default()
    };
    let c = Controller::new(d, &PolicyConfig::default(), &ppo, 0)?;
    let mut rng = ChaCha8Rng::seed_from_u64(0);
    let unit = |n: usize, rng: &mut ChaCha8Rng| -> Vec<f32> {
        let mut v: Vec<f32> = (0..n).map(|_| rng.random_range(-1.0f32..1.0)).collect();
        let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        v.iter_mut().for_each(|x| *x /= norm);
        v
    };
    let skills: Arc<Vec<Vec<f32>>> = Arc::new((0..30).map(|_| unit(d, &mut rng)).collect());
    let mut episodes = Vec::new();
    for _ in 0..4 {
        let mut ep = Vec::new();
        for _ in 0..16 {
            let mut state = unit(d, &mut rng);
            state.extend(unit(d, &mut rng));
            let s = c.select(&state, &skills, 3, None, SelectMode::Sample(&mut rng))?;
            let reward = rng.random_range(0.0f32..1.0);
            ep.push(Transition::from_selection(state, skills.clone(), s, reward));
        }
        episodes.push(ep);
    }
    Ok((c, episodes))
}

/// Runs `what` (`encoder`, `ppo`, `llm` or `all`) and prints the table.
pub fn run(what: &str, opts: &PerfOptions) -> Result<Vec<Series>> {
    if opts.rounds < 5 {
        bail!("--rounds must be at least 5 (got {})", opts.rounds);
    }
    let benches: Vec<&str> = match what {
        "all" => vec!["encoder", "ppo", "llm"],
        "encoder" | "ppo" | "llm" => vec![what],
        other => bail!("unknown benchmark {other:?} (known: encoder, ppo, llm, all)"),
    };
    let (before, quiet) = check_load(opts)?;
    let mut baseline = if opts.no_baseline {
        None
    } else {
        Some(Baseline::start(opts.python.as_deref())?)
    };
    let versions = match baseline.as_mut() {
        Some(b) => b.call(&json!({"op": "info"}))?,
        None => Value::Null,
    };
    let mut rec = Recorder::open(
        &opts.json,
        json!({
            "run": run_id(), "profile": profile(), "quiet": quiet,
            "load1_before": before.map(|l| l.load1), "cores": before.map(|l| l.cores),
        }),
    )?;
    rec.line(
        json!({"event": "start", "benches": benches, "rounds": opts.rounds,
                    "baseline_versions": versions}),
    )?;
    let mut all = Vec::new();
    for (i, b) in benches.into_iter().enumerate() {
        if i > 0 {
            // The previous pair's own work is in the load average: let it decay.
            settle(opts, &mut rec)?;
        }
        let series = match b {
            "encoder" => bench_encoder(opts, baseline.as_mut(), &mut rec)?,
            "ppo" => bench_ppo(opts, baseline.as_mut(), &mut rec)?,
            _ => bench_llm(opts, baseline.as_mut(), &mut rec)?,
        };
        all.extend(series);
    }
    let after = Load::now();
    for s in &all {
        rec.line(s.summary_json())?;
    }
    rec.line(json!({"event": "end", "load1_after": after.map(|l| l.load1)}))?;
    print_table(opts, &all, before, after, quiet);
    println!("JSON lines appended to {}", opts.json.display());
    Ok(all)
}

/// The 1-minute load before the run and whether the machine is quiet (at most 0.5 per core,
/// or unmeasured). A loaded machine is refused unless `--force`, and then warned about.
fn check_load(opts: &PerfOptions) -> Result<(Option<Load>, bool)> {
    let before = Load::now();
    let quiet = before.map(|l| l.quiet()).unwrap_or(true);
    if let Some(l) = before {
        eprintln!(
            "load before: {:.2} (1 min) on {} cores; limit {:.2}",
            l.load1,
            l.cores,
            0.5 * l.cores as f64
        );
    }
    if !quiet {
        let l = before.expect("quiet unless measured");
        if !opts.force {
            bail!(
                "refusing to benchmark: the 1-minute load average is {:.2} on {} cores (above 0.5 per core). \
                 Rerun on a quiet machine, or pass --force to measure anyway (results are then marked loaded).",
                l.load1,
                l.cores
            );
        }
        eprintln!(
            "\n!!!!!!!! WARNING: LOADED MACHINE (load {:.2} on {} cores): these numbers are NOT results !!!!!!!!\n",
            l.load1, l.cores
        );
    }
    Ok((before, quiet))
}

/// Longest wait for the load to settle between the benches of `all`.
const SETTLE_MAX_SECS: u64 = 600;

/// Waits (polling every 5 s, at most [`SETTLE_MAX_SECS`]) until the 1-minute load is quiet
/// again; a machine still loaded then is refused unless `--force`, as at the start.
fn settle(opts: &PerfOptions, rec: &mut Recorder) -> Result<()> {
    let t0 = Instant::now();
    let mut told = false;
    while let Some(l) = Load::now().filter(|l| !l.quiet()) {
        if t0.elapsed().as_secs() >= SETTLE_MAX_SECS {
            rec.line(
                json!({"event": "settle", "waited_s": t0.elapsed().as_secs(), "load1": l.load1}),
            )?;
            if opts.force {
                eprintln!(
                    "load still {:.2} after {SETTLE_MAX_SECS} s; going on (--force)",
                    l.load1
                );
                return Ok(());
            }
            bail!(
                "refusing to go on: the 1-minute load is still {:.2} on {} cores after waiting {SETTLE_MAX_SECS} s \
                 (above 0.5 per core); rerun on a quiet machine or pass --force",
                l.load1,
                l.cores
            );
        }
        if !told {
            eprintln!(
                "waiting for the load ({:.2}) to settle before the next benchmark",
                l.load1
            );
            told = true;
        }
        std::thread::sleep(std::time::Duration::from_secs(5));
    }
    if told {
        let l = Load::now().map(|l| l.load1);
        eprintln!("load settled after {} s", t0.elapsed().as_secs());
        rec.line(json!({"event": "settle", "waited_s": t0.elapsed().as_secs(), "load1": l}))?;
    }
    Ok(())
}

/// This run's id in the JSON lines: `<unix seconds>-<pid>`.
fn run_id() -> String {
    format!(
        "{}-{}",
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0),
        std::process::id()
    )
}

/// Print the results table (with the load before and after, and a warning when loaded).
fn print_table(
    opts: &PerfOptions,
    all: &[Series],
    before: Option<Load>,
    after: Option<Load>,
    quiet: bool,
) {
    println!(
        "\nmemskill bench ({} build, {} rounds interleaved ours/baseline, {} cores)",
        profile(),
        opts.rounds,
        before.map(|l| l.cores).unwrap_or(0)
    );
    println!(
        "| bench    | metric                 | ours min / median / max         | baseline min / median / max     | ratio med [min, max] | unit"
    );
    println!("|---|---|---|---|---|---|");
    for s in all {
        println!("{}", s.row());
    }
    println!(
        "ratio: ours vs baseline per round (> 1 = ours faster). load 1 min: {} before, {} after (after includes the bench itself){}",
        before
            .map(|l| format!("{:.2}", l.load1))
            .unwrap_or("?".into()),
        after
            .map(|l| format!("{:.2}", l.load1))
            .unwrap_or("?".into()),
        if quiet {
            String::new()
        } else {
            "\n!!!!!!!! LOADED MACHINE: NOT RESULTS (--force) !!!!!!!!".to_string()
        }
    );
}

fn bench_encoder(
    opts: &PerfOptions,
    mut base: Option<&mut Baseline>,
    rec: &mut Recorder,
) -> Result<Vec<Series>> {
    use memskill_core::TextEncoder;
    if let Some(dir) = &opts.encoder_model {
        return encoder_dir::bench(dir, opts, base, rec);
    }
    let dir = memskill_controller::default_minilm_dir();
    let mut enc = memskill_controller::BertEncoder::load(&dir)
        .with_context(|| format!("loading MiniLM from {}", dir.display()))?;
    let (texts, source) = bench_texts(512);
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let tokens: usize = enc.token_counts(&refs)?.iter().sum();
    eprintln!(
        "encoder: MiniLM, {} texts from {source}, {tokens} tokens",
        refs.len()
    );
    enc.batch_size = 32;
    enc.embed(&refs[..32])?; // warm-up
    let mut out = vec![
        Series::new("encoder", "b32 (512 texts)", "texts/s", true),
        Series::new("encoder", "b1 (128 texts)", "texts/s", true),
    ];
    for round in 0..opts.rounds {
        for (s, bs) in out.iter_mut().zip([32usize, 1]) {
            enc.batch_size = bs;
            let sub = if bs == 1 { &refs[..128] } else { &refs[..] };
            let t = Instant::now();
            let v = enc.embed(sub)?;
            let tps = v.len() as f64 / t.elapsed().as_secs_f64();
            s.ours.push(tps);
            rec.measurement(s, "ours", round, tps)?;
            if let Some(b) = base.as_deref_mut() {
                let x = b.value(&json!({"op": "encoder", "batch": bs}), "value")?;
                s.baseline.push(x);
                rec.measurement(s, "baseline", round, x)?;
            }
        }
        eprintln!("encoder round {} done", round + 1);
    }
    Ok(out)
}

fn bench_ppo(
    opts: &PerfOptions,
    mut base: Option<&mut Baseline>,
    rec: &mut Recorder,
) -> Result<Vec<Series>> {
    let (mut c, episodes) = ppo_workload()?;
    c.update(&episodes)?; // warm-up
    let mut s = Series::new("ppo", "update (64 tr, 8 mb)", "ms", false);
    for round in 0..opts.rounds {
        let t = Instant::now();
        let st = c.update(&episodes)?;
        let ms = t.elapsed().as_secs_f64() * 1e3;
        debug_assert_eq!(st.minibatches, 8);
        s.ours.push(ms);
        rec.measurement(&s, "ours", round, ms)?;
        if let Some(b) = base.as_deref_mut() {
            let x = b.value(&json!({"op": "ppo"}), "value")?;
            s.baseline.push(x);
            rec.measurement(&s, "baseline", round, x)?;
        }
    }
    Ok(vec![s])
}

/// A chat prompt of at least `n` tokens (LoCoMo turns in a user message), rendered with the
/// model's own template; its token ids.
fn llm_prompt(m: &memskill_executor::LocalGguf, n: usize) -> Result<Vec<u32>> {
    use memskill_core::Message;
    let (texts, _) = bench_texts(512);
    let mut body = String::from("Summarise the facts in this conversation.\n");
    for t in &texts {
        body.push_str(t);
        body.push('\n');
        let prompt = m.chat_template().render(&[Message::user(body.clone())])?;
        let ids = m
            .tokenizer()
            .encode(prompt, false)
            .map_err(|e| anyhow::anyhow!("tokenizing the bench prompt: {e}"))?
            .get_ids()
            .to_vec();
        if ids.len() >= n {
            return Ok(ids);
        }
    }
    bail!("the bench texts give fewer than {n} prompt tokens")
}

fn bench_llm(
    opts: &PerfOptions,
    mut base: Option<&mut Baseline>,
    rec: &mut Recorder,
) -> Result<Vec<Series>> {
    use memskill_executor::LocalConfig;
    let mut cfg = LocalConfig::default();
    if let Some(p) = &opts.model {
        cfg.model_path = p.clone();
    }
    let m = memskill_trainer::backends::load_local(&cfg, "--model")?;
    let ids = llm_prompt(&m, opts.prompt_tokens)?;
    eprintln!(
        "llm: {} ({}), prompt {} tokens, decode {} tokens",
        cfg.model_path.display(),
        m.load_info(),
        ids.len(),
        opts.decode_tokens
    );
    rec.line(
        json!({"event": "llm", "model": cfg.model_path, "load_info": m.load_info(),
                    "prompt_tokens": ids.len(), "decode_tokens": opts.decode_tokens}),
    )?;
    m.bench_generate(&ids, 4)?; // warm-up
                                // Both sides get the threads ours runs with (rayon's pool: RAYON_NUM_THREADS, else
                                // every core), so `RAYON_NUM_THREADS=1` compares one thread with one thread.
    let threads = rayon::current_num_threads();
    // Decode reads every weight once per token: the machine's bandwidth bounds it.
    let machine = crate::membench::measure(threads);
    eprintln!("llm: {}", machine.describe());
    rec.line(json!({"event": "machine", "threads": machine.threads,
                    "copy_gbs": [machine.copy_1, machine.copy_all],
                    "triad_gbs": [machine.triad_1, machine.triad_all],
                    "gflops": [machine.gflops_1, machine.gflops_all]}))?;
    let req = json!({"op": "llm", "model": cfg.model_path, "prompt_ids": ids,
                     "decode": opts.decode_tokens, "threads": threads});
    if let Some(b) = base.as_deref_mut() {
        b.call(
            &json!({"op": "llm", "model": cfg.model_path, "prompt_ids": &ids[..16],
                       "decode": 4, "threads": threads}),
        )?; // load + warm-up
    }
    let mut pre = Series::new("llm", "prefill", "tok/s", true);
    let mut dec = Series::new("llm", "decode", "tok/s", true);
    pre.metric = format!("prefill ({} tok)", ids.len());
    dec.metric = format!(
        "decode ({} tok; copy {:.1}/{:.1} GB/s, triad {:.1}/{:.1} GB/s, {:.0}/{:.0} GFLOP/s at 1/{} threads)",
        opts.decode_tokens,
        machine.copy_1,
        machine.copy_all,
        machine.triad_1,
        machine.triad_all,
        machine.gflops_1,
        machine.gflops_all,
        threads
    );
    for round in 0..opts.rounds {
        let t = m.bench_generate(&ids, opts.decode_tokens)?;
        pre.ours.push(t.prefill_tok_s());
        dec.ours.push(t.decode_tok_s());
        rec.measurement(&pre, "ours", round, t.prefill_tok_s())?;
        rec.measurement(&dec, "ours", round, t.decode_tok_s())?;
        if let Some(b) = base.as_deref_mut() {
            let v = b.call(&req)?;
            let p = v["prefill_tok_s"].as_f64().context("prefill_tok_s")?;
            let d = v["decode_tok_s"].as_f64().context("decode_tok_s")?;
            pre.baseline.push(p);
            dec.baseline.push(d);
            rec.measurement(&pre, "baseline", round, p)?;
            rec.measurement(&dec, "baseline", round, d)?;
        }
        eprintln!("llm round {} done", round + 1);
    }
    Ok(vec![pre, dec])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_statistics_and_ratios() {
        assert_eq!(min_med_max(&[3.0, 1.0, 2.0]), (1.0, 2.0, 3.0));
        assert_eq!(min_med_max(&[4.0, 1.0, 2.0, 3.0]), (1.0, 2.5, 4.0));
        let mut t = Series::new("ppo", "update", "ms", false);
        t.ours = vec![10.0, 20.0];
        t.baseline = vec![30.0, 20.0];
        assert_eq!(t.ratios(), vec![3.0, 1.0]);
        let mut r = Series::new("encoder", "b32", "texts/s", true);
        r.ours = vec![10.0];
        r.baseline = vec![5.0];
        assert_eq!(r.ratios(), vec![2.0]);
        assert!(r.row().contains("2.00x"), "{}", r.row());
    }

    #[test]
    fn rounds_below_five_are_refused() {
        let o = PerfOptions {
            rounds: 3,
            no_baseline: true,
            ..PerfOptions::default()
        };
        let e = run("ppo", &o).unwrap_err().to_string();
        assert!(e.contains("at least 5"), "{e}");
    }
}
