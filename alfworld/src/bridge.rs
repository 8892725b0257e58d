//! Pool of supervised Python bridge processes speaking JSON lines (see `scripts/alfworld/bridge.py`).
//!
//! Protocol, one JSON object per line:
//! `{"cmd":"reset","game":PATH}` -> `{"ok":true,"obs","objective","admissible":[...],"inventory"}`;
//! `{"cmd":"step","action":STR}` -> `{"ok":true,"obs","reward","done","won","admissible","inventory"}`;
//! `{"cmd":"close"}`; failures answer `{"ok":false,"error":...}`.

use crate::actor::{Actor, ActorContext, ActorStats, StepRecord};
use crate::error::AlfworldError;
use crate::index::{cache_dir, Game, TaskType};
use serde::{Deserialize, Serialize};
use serde_json::json;
use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// How to start bridge processes.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BridgeConfig {
    /// Python interpreter (default: `<cache>/alfworld-venv/bin/python`).
    pub python: PathBuf,
    /// Bridge script (default: `scripts/alfworld/bridge.py` of this checkout).
    pub script: PathBuf,
    /// Number of bridge processes (= games played in parallel).
    pub workers: usize,
    /// Per-request timeout; a request past it kills and restarts the process.
    pub timeout_secs: u64,
}

impl Default for BridgeConfig {
    fn default() -> Self {
        BridgeConfig {
            python: default_python(),
            script: default_bridge_script(),
            workers: 2,
            timeout_secs: 120,
        }
    }
}

/// `<cache>/alfworld-venv/bin/python` (created by `scripts/alfworld/setup.sh`).
pub fn default_python() -> PathBuf {
    cache_dir().join("alfworld-venv").join("bin").join("python")
}

/// `$MEMSKILL_ALFWORLD_BRIDGE`, else `scripts/alfworld/bridge.py` next to this crate's checkout.
pub fn default_bridge_script() -> PathBuf {
    if let Some(p) = std::env::var_os("MEMSKILL_ALFWORLD_BRIDGE").filter(|p| !p.is_empty()) {
        return PathBuf::from(p);
    }
    scripts_dir().join("bridge.py")
}

/// `scripts/alfworld/` of the checkout this crate was built from.
pub fn scripts_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("scripts")
        .join("alfworld")
}

/// Why one game ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", content = "message", rename_all = "snake_case")]
pub enum GameOutcome {
    /// The environment reported `won`.
    Won,
    /// Done without winning, or out of steps.
    Lost,
    /// The environment failed (crash, timeout, protocol error): not scored.
    EnvError(String),
}

/// The result of playing one game.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct GameResult {
    pub game_id: String,
    pub split: String,
    pub task_type: TaskType,
    pub outcome: GameOutcome,
    /// Number of actions sent.
    pub steps: usize,
    /// Last reward reported by the environment.
    pub reward: f64,
    pub done: bool,
    pub objective: String,
    pub initial_obs: String,
    pub transcript: Vec<StepRecord>,
    /// Tips the actor used (from `Actor::begin`).
    #[serde(default)]
    pub tips: Vec<String>,
    #[serde(default)]
    pub actor_stats: ActorStats,
    pub elapsed_ms: u64,
}

impl GameResult {
    pub fn won(&self) -> bool {
        self.outcome == GameOutcome::Won
    }
    pub fn is_env_error(&self) -> bool {
        matches!(self.outcome, GameOutcome::EnvError(_))
    }
}

/// A bridge reply (fields absent from a reply take defaults).
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Reply {
    pub ok: bool,
    #[serde(default)]
    pub error: Option<String>,
    #[serde(default)]
    pub obs: String,
    #[serde(default)]
    pub objective: String,
    #[serde(default)]
    pub admissible: Vec<String>,
    /// The game's inventory text (`You are carrying: ...`); "" from bridges that do not send it.
    #[serde(default)]
    pub inventory: String,
    #[serde(default)]
    pub reward: f64,
    #[serde(default)]
    pub done: bool,
    #[serde(default)]
    pub won: bool,
}

/// Why a request to one process failed.
#[derive(Debug, Clone, PartialEq)]
pub enum RequestError {
    Timeout(Duration),
    /// The process died or closed its stdout.
    Crashed(String),
    /// The reply was not a protocol message.
    Protocol(String),
    /// `{"ok":false,"error":...}`.
    Remote(String),
}

impl std::fmt::Display for RequestError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RequestError::Timeout(d) => write!(f, "bridge timed out after {:.1}s", d.as_secs_f64()),
            RequestError::Crashed(m) => write!(f, "bridge process died: {m}"),
            RequestError::Protocol(m) => write!(f, "bridge protocol error: {m}"),
            RequestError::Remote(m) => write!(f, "bridge error: {m}"),
        }
    }
}

const STDERR_TAIL: usize = 20;

/// One bridge process with a reader thread feeding its stdout lines into a channel.
struct Worker {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    stderr_tail: Arc<Mutex<VecDeque<String>>>,
    pid: u32,
}

impl Worker {
    fn spawn(cfg: &BridgeConfig) -> Result<Worker, AlfworldError> {
        let mut child = Command::new(&cfg.python)
            .arg("-u")
            .arg(&cfg.script)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| {
                AlfworldError::Bridge(format!(
                    "cannot start {} {}: {e} (run scripts/alfworld/setup.sh)",
                    cfg.python.display(),
                    cfg.script.display()
                ))
            })?;
        let pid = child.id();
        let stdout = child
            .stdout
            .take()
            .ok_or_else(|| AlfworldError::Bridge("no stdout".into()))?;
        let stderr = child
            .stderr
            .take()
            .ok_or_else(|| AlfworldError::Bridge("no stderr".into()))?;
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                match line {
                    Ok(l) => {
                        if tx.send(l).is_err() {
                            break;
                        }
                    }
                    Err(_) => break,
                }
            }
        });
        let tail = Arc::new(Mutex::new(VecDeque::new()));
        let tail2 = Arc::clone(&tail);
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if let Ok(mut t) = tail2.lock() {
                    if t.len() == STDERR_TAIL {
                        t.pop_front();
                    }
                    t.push_back(line);
                }
            }
        });
        Ok(Worker {
            stdin: child.stdin.take(),
            child,
            lines: rx,
            stderr_tail: tail,
            pid,
        })
    }

    fn stderr_summary(&self) -> String {
        let t = self
            .stderr_tail
            .lock()
            .map(|t| t.iter().cloned().collect::<Vec<_>>());
        match t {
            Ok(v) if !v.is_empty() => format!("; stderr: {}", v.join(" | ")),
            _ => String::new(),
        }
    }

    fn request(
        &mut self,
        req: &serde_json::Value,
        timeout: Duration,
    ) -> Result<Reply, RequestError> {
        let deadline = Instant::now() + timeout;
        let stdin = self
            .stdin
            .as_mut()
            .ok_or_else(|| RequestError::Crashed("stdin closed".into()))?;
        let mut line = req.to_string();
        line.push('\n');
        if let Err(e) = stdin.write_all(line.as_bytes()).and_then(|_| stdin.flush()) {
            return Err(RequestError::Crashed(format!(
                "write failed: {e}{}",
                self.exit_note()
            )));
        }
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(l) => {
                    let t = l.trim();
                    if !t.starts_with('{') {
                        continue; // stray library output on stdout: not a protocol line
                    }
                    let reply: Reply = serde_json::from_str(t)
                        .map_err(|e| RequestError::Protocol(format!("{e} in reply `{t}`")))?;
                    if !reply.ok {
                        return Err(RequestError::Remote(
                            reply.error.unwrap_or_else(|| "unspecified".into()),
                        ));
                    }
                    return Ok(reply);
                }
                Err(RecvTimeoutError::Timeout) => return Err(RequestError::Timeout(timeout)),
                Err(RecvTimeoutError::Disconnected) => {
                    return Err(RequestError::Crashed(format!(
                        "stdout closed{}",
                        self.exit_note()
                    )))
                }
            }
        }
    }

    fn exit_note(&mut self) -> String {
        // Give the process a moment to finish dying so the status and stderr are complete.
        for _ in 0..20 {
            if let Ok(Some(st)) = self.child.try_wait() {
                std::thread::sleep(Duration::from_millis(20));
                return format!(" ({st}){}", self.stderr_summary());
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        self.stderr_summary()
    }

    fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    fn close(&mut self) {
        if let Some(mut stdin) = self.stdin.take() {
            let _ = stdin.write_all(b"{\"cmd\":\"close\"}\n");
            let _ = stdin.flush();
        }
        for _ in 0..50 {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        self.kill();
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        self.close();
    }
}

struct Slot {
    worker: Option<Worker>,
}

impl Slot {
    /// `req` to the slot's process (a crash error when it has none).
    fn request(
        &mut self,
        req: &serde_json::Value,
        timeout: Duration,
    ) -> Result<Reply, RequestError> {
        match self.worker.as_mut() {
            Some(wk) => wk.request(req, timeout),
            None => Err(RequestError::Crashed("no process".into())),
        }
    }
}

/// Builds one actor per game (called on the worker thread that plays it).
pub type ActorFactory<'a> = dyn Fn(&Game) -> Result<Box<dyn Actor>, String> + Sync + 'a;

/// N supervised bridge processes playing games in parallel. Each game checks out a free
/// process for its whole length, so several callers (e.g. concurrent training episodes)
/// share the pool without ever waiting while a process is idle.
pub struct BridgePool {
    cfg: BridgeConfig,
    slots: Vec<Mutex<Slot>>,
    /// Indices of the processes not playing a game right now.
    free: Mutex<Vec<usize>>,
    freed: Condvar,
    pids: Mutex<Vec<u32>>,
    restarts: AtomicUsize,
}

/// A checked-out process index, returned to the pool when dropped.
struct Lease<'a> {
    pool: &'a BridgePool,
    w: usize,
}

impl Drop for Lease<'_> {
    fn drop(&mut self) {
        let mut free = match self.pool.free.lock() {
            Ok(f) => f,
            Err(p) => p.into_inner(),
        };
        free.push(self.w);
        self.pool.freed.notify_one();
    }
}

impl BridgePool {
    /// Starts `cfg.workers` processes (at least one) and checks they are alive.
    pub fn start(cfg: BridgeConfig) -> Result<BridgePool, AlfworldError> {
        let n = cfg.workers.max(1);
        if !cfg.script.is_file() {
            return Err(AlfworldError::Bridge(format!(
                "bridge script {} not found",
                cfg.script.display()
            )));
        }
        let mut slots = Vec::with_capacity(n);
        let mut pids = Vec::with_capacity(n);
        for _ in 0..n {
            let w = Worker::spawn(&cfg)?;
            pids.push(w.pid);
            slots.push(Mutex::new(Slot { worker: Some(w) }));
        }
        let pool = BridgePool {
            cfg,
            free: Mutex::new((0..slots.len()).rev().collect()),
            freed: Condvar::new(),
            slots,
            pids: Mutex::new(pids),
            restarts: AtomicUsize::new(0),
        };
        // Fail fast when the interpreter starts but the bridge cannot import its engine.
        std::thread::sleep(Duration::from_millis(50));
        for (i, s) in pool.slots.iter().enumerate() {
            let mut slot = s
                .lock()
                .map_err(|_| AlfworldError::Bridge("poisoned".into()))?;
            if let Some(w) = slot.worker.as_mut() {
                let ping = w.request(
                    &json!({"cmd": "ping"}),
                    Duration::from_secs(pool.cfg.timeout_secs),
                );
                match ping {
                    Ok(_) | Err(RequestError::Remote(_)) => {}
                    Err(e) => {
                        return Err(AlfworldError::Bridge(format!(
                            "worker {i} failed to start: {e}"
                        )))
                    }
                }
            }
        }
        Ok(pool)
    }

    /// Number of bridge processes.
    pub fn workers(&self) -> usize {
        self.slots.len()
    }

    /// Current process ids, one per worker (changes when a process is restarted).
    pub fn pids(&self) -> Vec<u32> {
        self.pids.lock().map(|p| p.clone()).unwrap_or_default()
    }

    /// Waits for a process that is not playing and reserves it.
    fn checkout(&self) -> Lease<'_> {
        let mut free = match self.free.lock() {
            Ok(f) => f,
            Err(p) => p.into_inner(),
        };
        loop {
            if let Some(w) = free.pop() {
                return Lease { pool: self, w };
            }
            free = match self.freed.wait(free) {
                Ok(f) => f,
                Err(p) => p.into_inner(),
            };
        }
    }

    /// How many processes were restarted after a crash or timeout.
    pub fn restarts(&self) -> usize {
        self.restarts.load(Ordering::SeqCst)
    }

    pub fn config(&self) -> &BridgeConfig {
        &self.cfg
    }

    /// Plays every game (in parallel over the workers, a shared work queue) and returns the
    /// results in the order of `games`.
    pub fn play_many(
        &self,
        games: &[Game],
        factory: &ActorFactory<'_>,
        max_steps: usize,
    ) -> Vec<GameResult> {
        self.play_many_with(games, factory, max_steps, &|_| {})
    }

    /// [`Self::play_many`] with a callback after each finished game (progress, logging).
    pub fn play_many_with(
        &self,
        games: &[Game],
        factory: &ActorFactory<'_>,
        max_steps: usize,
        on_done: &(dyn Fn(&GameResult) + Sync),
    ) -> Vec<GameResult> {
        let next = AtomicUsize::new(0);
        let results: Mutex<Vec<Option<GameResult>>> = Mutex::new(vec![None; games.len()]);
        std::thread::scope(|s| {
            for _ in 0..self.slots.len().min(games.len()) {
                let next = &next;
                let results = &results;
                s.spawn(move || loop {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    let Some(game) = games.get(i) else { break };
                    let r = match factory(game) {
                        Ok(mut actor) => {
                            let lease = self.checkout();
                            self.play_on(lease.w, game, actor.as_mut(), max_steps)
                        }
                        Err(e) => env_error(game, format!("cannot build actor: {e}"), 0),
                    };
                    on_done(&r);
                    if let Ok(mut res) = results.lock() {
                        res[i] = Some(r);
                    }
                });
            }
        });
        let res = results.into_inner().unwrap_or_default();
        res.into_iter()
            .zip(games)
            .map(|(r, g)| r.unwrap_or_else(|| env_error(g, "game was not played".into(), 0)))
            .collect()
    }

    /// Plays one game on the next free process.
    pub fn play(&self, game: &Game, actor: &mut dyn Actor, max_steps: usize) -> GameResult {
        let lease = self.checkout();
        self.play_on(lease.w, game, actor, max_steps)
    }

    fn restart(&self, w: usize, slot: &mut Slot) -> Result<(), String> {
        if let Some(mut old) = slot.worker.take() {
            old.kill();
        }
        self.restarts.fetch_add(1, Ordering::SeqCst);
        let nw = Worker::spawn(&self.cfg).map_err(|e| e.to_string())?;
        if let Ok(mut p) = self.pids.lock() {
            if let Some(x) = p.get_mut(w) {
                *x = nw.pid;
            }
        }
        slot.worker = Some(nw);
        Ok(())
    }

    fn play_on(
        &self,
        w: usize,
        game: &Game,
        actor: &mut dyn Actor,
        max_steps: usize,
    ) -> GameResult {
        let start = Instant::now();
        let mut slot = match self.ready_slot(w) {
            Ok(s) => s,
            Err(msg) => return env_error(game, msg, 0),
        };
        let timeout = Duration::from_secs(self.cfg.timeout_secs.max(1));
        let mut result = GameResult::unplayed(game, GameOutcome::Lost, 0);
        let reply = match slot.request(&json!({"cmd": "reset", "game": game.path}), timeout) {
            Ok(r) => r,
            Err(e) => {
                let what = format!("reset {}", game.path.display());
                self.fail(w, &mut slot, &mut result, e, &what);
                result.elapsed_ms = start.elapsed().as_millis() as u64;
                return result;
            }
        };
        result.objective = objective_of(&reply.obs).unwrap_or_else(|| reply.objective.clone());
        result.initial_obs = reply.obs.clone();
        result.tips = actor.begin(&reply.objective, &reply.obs);
        self.play_steps(w, &mut slot, actor, reply, max_steps, &mut result);
        result.actor_stats = actor.stats();
        result.elapsed_ms = start.elapsed().as_millis() as u64;
        result
    }

    /// Process `w`'s slot, locked, with a running process (restarted when there is none);
    /// the error message when it has none and cannot get one.
    fn ready_slot(&self, w: usize) -> Result<std::sync::MutexGuard<'_, Slot>, String> {
        let Some(slot_m) = self.slots.get(w % self.slots.len().max(1)) else {
            return Err("pool has no workers".into());
        };
        let mut slot = match slot_m.lock() {
            Ok(s) => s,
            Err(p) => p.into_inner(),
        };
        if slot.worker.is_none() {
            if let Err(e) = self.restart(w, &mut slot) {
                return Err(format!("worker {w} could not be restarted: {e}"));
            }
        }
        Ok(slot)
    }

    /// Records a failed request as the game's `EnvError`; a process that crashed or timed
    /// out (not a remote error) is restarted.
    fn fail(
        &self,
        w: usize,
        slot: &mut Slot,
        result: &mut GameResult,
        e: RequestError,
        what: &str,
    ) {
        let needs_restart = !matches!(e, RequestError::Remote(_));
        let mut msg = format!("{what}: {e}");
        if needs_restart {
            if let Err(re) = self.restart(w, slot) {
                msg.push_str(&format!("; restart failed: {re}"));
                slot.worker = None;
            }
        }
        result.outcome = GameOutcome::EnvError(msg);
    }

    /// The game after its reset `reply`: the actor acts and the process steps until the game
    /// is done, `max_steps` steps were taken, or a request fails.
    fn play_steps(
        &self,
        w: usize,
        slot: &mut Slot,
        actor: &mut dyn Actor,
        mut reply: Reply,
        max_steps: usize,
        result: &mut GameResult,
    ) {
        let timeout = Duration::from_secs(self.cfg.timeout_secs.max(1));
        let mut obs = reply.obs.clone();
        while result.steps < max_steps && !reply.done {
            let action = {
                let ctx = ActorContext {
                    goal: &result.objective,
                    tips: &result.tips,
                    intro: &result.initial_obs,
                    history: &result.transcript,
                    admissible: &reply.admissible,
                    obs: &obs,
                    inventory: &reply.inventory,
                    step: result.steps,
                };
                actor.act(&ctx)
            };
            let action = single_line(&action);
            let r = slot.request(&json!({"cmd": "step", "action": action}), timeout);
            result.steps += 1;
            match r {
                Ok(r) => {
                    reply = r;
                    obs = reply.obs.clone();
                    result.transcript.push(StepRecord {
                        action,
                        obs: obs.clone(),
                    });
                    result.reward = reply.reward;
                    result.done = reply.done;
                    if reply.won {
                        result.outcome = GameOutcome::Won;
                    }
                }
                Err(e) => {
                    let what = format!("step {} `{action}`", result.steps);
                    self.fail(w, slot, result, e, &what);
                    break;
                }
            }
        }
    }
}

/// The objective as the reference extracts it from the first observation: the first line after
/// `Your task is to:` (any case), stripped, final periods dropped; `None` without that phrase
/// or with nothing after it.
pub fn objective_of(obs: &str) -> Option<String> {
    const KEY: &str = "your task is to:";
    let pos = obs.to_ascii_lowercase().find(KEY)?;
    let rest = crate::actor::py_strip(&obs[pos + KEY.len()..]);
    let line = rest.lines().next().unwrap_or("");
    let line = crate::actor::py_strip(line).trim_end_matches('.');
    (!line.is_empty()).then(|| line.to_string())
}

fn single_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn env_error(game: &Game, msg: String, elapsed_ms: u64) -> GameResult {
    GameResult::unplayed(game, GameOutcome::EnvError(msg), elapsed_ms)
}

impl GameResult {
    /// A result with no steps taken yet: the start of a game, or a game the environment lost.
    fn unplayed(game: &Game, outcome: GameOutcome, elapsed_ms: u64) -> Self {
        GameResult {
            game_id: game.id.clone(),
            split: game.split.clone(),
            task_type: game.task_type,
            outcome,
            steps: 0,
            reward: 0.0,
            done: false,
            objective: String::new(),
            initial_obs: String::new(),
            transcript: Vec::new(),
            tips: Vec::new(),
            actor_stats: ActorStats::default(),
            elapsed_ms,
        }
    }
}
