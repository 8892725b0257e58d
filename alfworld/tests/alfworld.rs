//! Integration tests: game index (fixtures + real tarballs when present), bridge pool
//! supervision against the fake bridge (a test double), and the real ALFWorld bridge
//! (skipped when the venv from scripts/alfworld/setup.sh is absent).

use memskill_alfworld::*;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/games")
}

fn shared_tarball(name: &str) -> Option<PathBuf> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/data/alfworld")
        .join(name);
    p.is_file().then_some(p)
}

fn have_python3() -> bool {
    std::process::Command::new("python3")
        .arg("-c")
        .arg("pass")
        .status()
        .is_ok_and(|s| s.success())
}

fn fake_cfg(workers: usize, timeout_secs: u64) -> BridgeConfig {
    BridgeConfig {
        python: PathBuf::from("python3"),
        script: scripts_dir().join("fake_bridge.py"),
        workers,
        timeout_secs,
    }
}

fn walkthrough_factory(g: &Game) -> Result<Box<dyn Actor>, String> {
    Ok(Box::new(WalkthroughActor::new(
        g.walkthrough().map_err(|e| e.to_string())?,
    )))
}

/// A walkthrough actor that sleeps before each command (to be killed mid-game).
struct SlowWalkthrough(WalkthroughActor, Duration);
impl Actor for SlowWalkthrough {
    fn act(&mut self, ctx: &ActorContext<'_>) -> String {
        std::thread::sleep(self.1);
        self.0.act(ctx)
    }
}

#[test]
fn index_fixture_dir() {
    let idx = GameIndex::from_dir(&fixtures()).unwrap();
    assert_eq!(idx.games.len(), 3, "{:?}", idx.games);
    assert_eq!(
        idx.splits(),
        vec!["valid_seen".to_string(), "valid_unseen".to_string()]
    );
    let seen = idx.split("valid_seen");
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].task_type, TaskType::PickAndPlace);
    assert_eq!(
        seen[0].id,
        "valid_seen/pick_and_place_simple-Pencil-None-Dresser-330/trial_T20190909_071128_012892"
    );
    assert!(seen[0].path.is_absolute() && seen[0].path.ends_with(GAME_FILE));
    assert_eq!(
        seen[0].walkthrough().unwrap(),
        vec![
            "go to sidetable 1",
            "take pencil 1 from sidetable 1",
            "go to dresser 2",
            "move pencil 1 to dresser 2"
        ]
    );
    let unseen: Vec<TaskType> = idx
        .split("valid_unseen")
        .iter()
        .map(|g| g.task_type)
        .collect();
    assert_eq!(
        unseen,
        vec![TaskType::LookAtObjInLight, TaskType::PickCleanThenPlace]
    );
    assert_eq!(
        idx.by_task("valid_unseen", TaskType::PickCleanThenPlace)
            .len(),
        1
    );
    // The parent folder of json_2.1.1 works too.
    let idx2 = GameIndex::from_dir(&fixtures().join("json_2.1.1")).unwrap();
    assert_eq!(idx2.games, idx.games);
}

#[test]
fn index_errors_name_the_path() {
    let dir = tempfile::tempdir().unwrap();
    let err = GameIndex::from_dir(dir.path()).unwrap_err().to_string();
    assert!(err.contains("no games found"), "{err}");
    let bad = dir
        .path()
        .join("valid_seen/pick_and_place_with_movable_recep-A-B-C-1/trial_x");
    std::fs::create_dir_all(&bad).unwrap();
    std::fs::write(bad.join(GAME_FILE), "{}").unwrap();
    let err = GameIndex::from_dir(dir.path()).unwrap_err().to_string();
    assert!(
        err.contains("pick_and_place_with_movable_recep-A-B-C-1"),
        "{err}"
    );
    let ok = dir
        .path()
        .join("valid_seen/pick_and_place_simple-A-B-C-1/trial_x");
    std::fs::create_dir_all(&ok).unwrap();
    std::fs::write(ok.join(GAME_FILE), "{\"solvable\": true}").unwrap();
    std::fs::remove_dir_all(
        dir.path()
            .join("valid_seen/pick_and_place_with_movable_recep-A-B-C-1"),
    )
    .unwrap();
    let idx = GameIndex::from_dir(dir.path()).unwrap();
    let err = idx.games[0].walkthrough().unwrap_err().to_string();
    assert!(
        err.contains("walkthrough") && err.contains("game.tw-pddl"),
        "{err}"
    );
}

#[test]
fn index_real_valid_tarball() {
    let Some(tar) = shared_tarball("json_2.1.1-valid.tar.gz") else {
        eprintln!("skipped: ../shared/data/alfworld/json_2.1.1-valid.tar.gz not present");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let idx = GameIndex::from_tarballs(std::slice::from_ref(&tar), dir.path()).unwrap();
    assert_eq!(idx.split("valid_seen").len(), 140);
    assert_eq!(idx.split("valid_unseen").len(), 134);
    assert_eq!(idx.split("valid_train").len(), 200);
    for t in TaskType::ALL {
        let n = idx.by_task("valid_unseen", t).len();
        assert!(n > 0, "no valid_unseen games of {t}");
    }
    // Every folder maps to a task type whose name is a prefix of the folder (no cross-mapping).
    for g in &idx.games {
        let folder = g.id.split('/').nth(1).unwrap();
        assert!(
            folder.starts_with(g.task_type.as_str()),
            "{folder} -> {}",
            g.task_type
        );
    }
    let w = idx.split("valid_unseen")[0].walkthrough().unwrap();
    assert!(!w.is_empty());
    // Second call reuses the unpacked tree (marker file).
    let again = GameIndex::from_tarballs(&[tar], dir.path()).unwrap();
    assert_eq!(again.games.len(), idx.games.len());
}

// ---------- pool against the fake bridge (test double) ----------

fn fake_game(
    dir: &Path,
    split: &str,
    folder: &str,
    walk: &[&str],
    fake: serde_json::Value,
) -> Game {
    let d = dir.join(split).join(folder).join("trial_1");
    std::fs::create_dir_all(&d).unwrap();
    let body = serde_json::json!({"walkthrough": walk, "fake": fake});
    std::fs::write(d.join(GAME_FILE), body.to_string()).unwrap();
    Game {
        id: format!("{split}/{folder}/trial_1"),
        split: split.into(),
        task_type: TaskType::from_folder(folder).unwrap(),
        path: d.join(GAME_FILE),
    }
}

#[test]
fn fake_pool_plays_walkthroughs_and_baselines() {
    if !have_python3() {
        eprintln!("skipped: python3 not found");
        return;
    }
    let idx = GameIndex::from_dir(&fixtures()).unwrap();
    let pool = BridgePool::start(fake_cfg(2, 10)).unwrap();
    let rs = pool.play_many(&idx.games, &walkthrough_factory, 20);
    assert_eq!(rs.len(), 3);
    for (r, g) in rs.iter().zip(&idx.games) {
        assert_eq!(r.game_id, g.id);
        assert_eq!(r.outcome, GameOutcome::Won, "{r:?}");
        assert!(r.done && r.reward == 1.0);
        assert_eq!(r.steps, g.walkthrough().unwrap().len());
        assert!(r.initial_obs.contains("Your task is to:"));
    }
    // First admissible: the fake sorts commands, so `examine ...` comes first and never wins.
    let fa = |_: &Game| -> Result<Box<dyn Actor>, String> { Ok(Box::new(FirstAdmissibleActor)) };
    let rep = evaluate(&pool, &idx.games, "first-admissible", &fa, 7, &|_| {});
    let unseen = rep.split("valid_unseen").unwrap();
    assert_eq!((unseen.games, unseen.won, unseen.env_errors), (2, 0, 0));
    assert!((unseen.mean_steps - 7.0).abs() < 1e-9);
    // Expert trajectories are cached: a second call must not need the pool.
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("traj.jsonl");
    let t1 = expert_trajectories(&pool, &idx.games, Some(&cache)).unwrap();
    assert_eq!(t1.len(), 3);
    assert!(t1
        .iter()
        .all(|t| t.success && t.text.ends_with("TRAJECTORY_STATUS: SUCCESS")));
    assert!(t1[0]
        .text
        .contains("ACTION: go to sidetable 1\nOBSERVATION: You did: go to sidetable 1"));
    drop(pool);
    let dead = BridgePool::start(fake_cfg(1, 5)).unwrap();
    let t2 = expert_trajectories(&dead, &idx.games, Some(&cache)).unwrap();
    assert_eq!(t1, t2);
    assert_eq!(read_cache(&cache).unwrap().len(), 3);
    let s = to_sample(&t1[0]);
    assert_eq!(s.sessions[0].turns.len(), 1 + 2 * 4 + 1);
}

#[test]
fn fake_pool_supervision_crash_hang_remote_error() {
    if !have_python3() {
        eprintln!("skipped: python3 not found");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let walk = [
        "go to desk 1",
        "take mug 1 from desk 1",
        "go to shelf 1",
        "move mug 1 to shelf 1",
    ];
    let ok1 = fake_game(
        dir.path(),
        "valid_unseen",
        "pick_and_place_simple-A-None-B-1",
        &walk,
        serde_json::json!({}),
    );
    let crash = fake_game(
        dir.path(),
        "valid_unseen",
        "pick_cool_then_place_in_recep-A-None-B-2",
        &walk,
        serde_json::json!({"crash_at_step": 2}),
    );
    let hang = fake_game(
        dir.path(),
        "valid_unseen",
        "pick_heat_then_place_in_recep-A-None-B-3",
        &walk,
        serde_json::json!({"hang_at_step": 3}),
    );
    let remote = fake_game(
        dir.path(),
        "valid_unseen",
        "look_at_obj_in_light-A-None-B-4",
        &walk,
        serde_json::json!({"reset_error": "broken game"}),
    );
    let ok2 = fake_game(
        dir.path(),
        "valid_unseen",
        "pick_two_obj_and_place-A-None-B-5",
        &walk,
        serde_json::json!({}),
    );
    // One worker so the games run in order on the same process slot.
    let pool = BridgePool::start(fake_cfg(1, 2)).unwrap();
    let pid0 = pool.pids()[0];
    let games = vec![ok1, crash, hang, remote, ok2];
    let t0 = Instant::now();
    let rs = pool.play_many(&games, &walkthrough_factory, 10);
    assert!(
        t0.elapsed() < Duration::from_secs(20),
        "hang was not timed out"
    );
    assert_eq!(rs[0].outcome, GameOutcome::Won);
    match &rs[1].outcome {
        GameOutcome::EnvError(m) => assert!(m.contains("died") && m.contains("step 2"), "{m}"),
        o => panic!("crash not reported as env error: {o:?}"),
    }
    match &rs[2].outcome {
        GameOutcome::EnvError(m) => assert!(m.contains("timed out"), "{m}"),
        o => panic!("hang not reported as env error: {o:?}"),
    }
    match &rs[3].outcome {
        GameOutcome::EnvError(m) => assert!(m.contains("broken game"), "{m}"),
        o => panic!("remote error not reported: {o:?}"),
    }
    assert_eq!(
        rs[4].outcome,
        GameOutcome::Won,
        "pool did not recover: {:?}",
        rs[4]
    );
    assert_eq!(
        pool.restarts(),
        2,
        "crash and hang restart the process; a remote error does not"
    );
    assert_ne!(pool.pids()[0], pid0);
    let rep = EvalReport::from_results("walkthrough", 10, 1.0, rs);
    let a = rep.split("valid_unseen").unwrap();
    assert_eq!((a.scored, a.won, a.env_errors), (2, 2, 3));
    assert_eq!(a.success_rate, 1.0, "env errors are not scored as failures");
}

/// Kills worker 0's process while it plays, checks the in-flight game is an env error,
/// the process was replaced and every other game still won.
fn kill_mid_game(cfg: BridgeConfig, games: &[Game], kill_after: Duration, step_delay: Duration) {
    let pool = BridgePool::start(cfg).unwrap();
    let before = pool.pids();
    let factory = move |g: &Game| -> Result<Box<dyn Actor>, String> {
        Ok(Box::new(SlowWalkthrough(
            WalkthroughActor::new(g.walkthrough().map_err(|e| e.to_string())?),
            step_delay,
        )))
    };
    let rs = std::thread::scope(|s| {
        let pool = &pool;
        s.spawn(move || {
            std::thread::sleep(kill_after);
            let pid = pool.pids()[0];
            let st = std::process::Command::new("kill")
                .arg("-9")
                .arg(pid.to_string())
                .status();
            assert!(st.is_ok_and(|s| s.success()), "kill {pid} failed");
        });
        pool.play_many(games, &factory, 60)
    });
    let errs: Vec<&GameResult> = rs.iter().filter(|r| r.is_env_error()).collect();
    assert_eq!(
        errs.len(),
        1,
        "{:#?}",
        rs.iter()
            .map(|r| (&r.game_id, &r.outcome))
            .collect::<Vec<_>>()
    );
    if let GameOutcome::EnvError(m) = &errs[0].outcome {
        assert!(m.contains("died"), "{m}");
    }
    assert!(rs.iter().filter(|r| !r.is_env_error()).all(|r| r.won()));
    assert_eq!(pool.restarts(), 1);
    let after = pool.pids();
    assert_ne!(after[0], before[0]);
    assert_eq!(after[1], before[1]);
}

#[test]
fn fake_pool_restarts_killed_process() {
    if !have_python3() {
        eprintln!("skipped: python3 not found");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let walk: Vec<String> = (0..8).map(|i| format!("go to drawer {i}")).collect();
    let walk: Vec<&str> = walk.iter().map(|s| s.as_str()).collect();
    let games: Vec<Game> = (0..4)
        .map(|i| {
            fake_game(
                dir.path(),
                "valid_unseen",
                &format!("pick_and_place_simple-A-None-B-{i}"),
                &walk,
                serde_json::json!({}),
            )
        })
        .collect();
    kill_mid_game(
        fake_cfg(2, 10),
        &games,
        Duration::from_millis(300),
        Duration::from_millis(100),
    );
}

// ---------- the real ALFWorld bridge ----------

fn real_cfg(workers: usize) -> Option<BridgeConfig> {
    let cfg = BridgeConfig {
        workers,
        timeout_secs: 120,
        ..BridgeConfig::default()
    };
    if !cfg.python.is_file() {
        eprintln!(
            "skipped: ALFWorld venv not found at {} (run scripts/alfworld/setup.sh)",
            cfg.python.display()
        );
        return None;
    }
    Some(cfg)
}

fn real_games() -> Option<GameIndex> {
    let root = default_games_root();
    if root.join("valid_unseen").is_dir() {
        return GameIndex::from_dir(&root).ok();
    }
    let Some(tar) = shared_tarball("json_2.1.1-valid.tar.gz") else {
        eprintln!("skipped: no ALFWorld games (run scripts/alfworld/unpack.sh or download.sh)");
        return None;
    };
    Some(GameIndex::from_tarballs(&[tar], &cache_dir().join("alfworld")).unwrap())
}

/// `n` valid_unseen games, task types interleaved.
fn spread(idx: &GameIndex, n: usize) -> Vec<Game> {
    idx.select("valid_unseen", Some(n))
}

#[test]
fn real_bridge_walkthroughs_win() {
    let Some(cfg) = real_cfg(2) else { return };
    let Some(idx) = real_games() else { return };
    let games = spread(&idx, 20);
    assert_eq!(games.len(), 20);
    let pool = BridgePool::start(cfg).unwrap();
    let t0 = Instant::now();
    let rs = pool.play_many(&games, &walkthrough_factory, 60);
    let secs = t0.elapsed().as_secs_f64();
    for r in &rs {
        assert!(
            r.done && r.reward == 1.0 && r.won(),
            "{} did not finish: {:?}",
            r.game_id,
            r.outcome
        );
        assert!(!r.objective.is_empty() && r.initial_obs.contains(&r.objective));
    }
    let types: std::collections::BTreeSet<TaskType> = rs.iter().map(|r| r.task_type).collect();
    assert_eq!(types.len(), 6, "20 interleaved games cover every task type");
    eprintln!(
        "real bridge: {} walkthroughs, pool of 2, {secs:.1}s = {:.1} games/min; task types {types:?}",
        rs.len(),
        60.0 * rs.len() as f64 / secs
    );
    // The trajectory text of a real game.
    let t = Trajectory::from_result(&rs[0]).unwrap();
    assert!(t.text.starts_with("-= Welcome to TextWorld, ALFRED! =-"));
    assert!(t.text.ends_with("TRAJECTORY_STATUS: SUCCESS"));
}

#[test]
fn real_bridge_restarts_killed_process() {
    let Some(cfg) = real_cfg(2) else { return };
    let Some(idx) = real_games() else { return };
    let games = spread(&idx, 4);
    kill_mid_game(
        cfg,
        &games,
        Duration::from_millis(2500),
        Duration::from_millis(250),
    );
}

#[test]
fn llm_actor_plays_through_pool() {
    if !have_python3() {
        eprintln!("skipped: python3 not found");
        return;
    }
    use memskill_core::{ChatRequest, ChatResponse, Llm, LlmError, Usage};
    /// Replies with the walkthrough's next command wrapped in chatter (substring match path).
    struct Chatty;
    impl Llm for Chatty {
        fn id(&self) -> String {
            "chatty".into()
        }
        fn chat(&self, req: &ChatRequest) -> Result<ChatResponse, LlmError> {
            let u = &req.messages.last().unwrap().content;
            let adm: Vec<&str> = u
                .split("Admissible commands")
                .nth(1)
                .unwrap_or("")
                .lines()
                .filter_map(|l| l.strip_prefix("- "))
                .collect();
            // Pick the command that is not look/inventory/examine.
            let pick = adm.iter().find(|a| {
                !a.starts_with("look") && !a.starts_with("inventory") && !a.starts_with("examine")
            });
            let text = format!("I think the best move is: {}.", pick.unwrap_or(&"dance"));
            Ok(ChatResponse {
                text,
                usage: Usage::default(),
                latency_ms: 0,
                cached: false,
                truncated: false,
            })
        }
    }
    let idx = GameIndex::from_dir(&fixtures()).unwrap();
    let pool = BridgePool::start(fake_cfg(2, 10)).unwrap();
    let llm: Arc<dyn Llm> = Arc::new(Chatty);
    let factory = |_: &Game| -> Result<Box<dyn Actor>, String> {
        Ok(Box::new(LlmActor::new(llm.clone(), vec!["tip".into()])))
    };
    let rep = evaluate(&pool, &idx.games, "llm", &factory, 20, &|_| {});
    for r in &rep.results {
        assert!(r.won(), "{r:?}");
        assert_eq!(r.tips, vec!["tip".to_string()]);
        assert_eq!(r.actor_stats.substring, r.steps);
    }
}

#[test]
fn select_interleaves_task_types() {
    let idx = GameIndex::from_dir(&fixtures()).unwrap();
    let sel = idx.select("valid_unseen", Some(1));
    assert_eq!(sel.len(), 1);
    assert_eq!(
        sel[0].task_type,
        TaskType::PickCleanThenPlace,
        "Table-1 order: clean before look"
    );
    let all = idx.select("valid_unseen", None);
    assert_eq!(all.len(), 2);
    assert!(idx.select("train", Some(5)).is_empty());
    assert_eq!(parse_splits("valid"), vec!["valid_seen", "valid_unseen"]);
    assert_eq!(parse_splits("unseen, train"), vec!["valid_unseen", "train"]);
    assert!("llm".parse::<ActorKind>().is_ok() && "first_admissible".parse::<ActorKind>().is_ok());
    assert!("random".parse::<ActorKind>().is_err());
}

fn eval_opts(
    actor: ActorKind,
    bridge: BridgeConfig,
    root: PathBuf,
    out: Option<PathBuf>,
    limit: Option<usize>,
) -> EvalOptions {
    EvalOptions {
        splits: vec!["valid_unseen".into()],
        limit,
        actor,
        max_steps: 50,
        out,
        games_root: root,
        bridge,
        actor_settings: Default::default(),
        prompts: None,
        executor: None,
    }
}

#[test]
fn run_eval_with_fake_bridge_writes_results() {
    if !have_python3() {
        eprintln!("skipped: python3 not found");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("eval");
    let opts = eval_opts(
        ActorKind::Walkthrough,
        fake_cfg(2, 10),
        fixtures(),
        Some(out.clone()),
        Some(10),
    );
    let rep = run_eval(&opts, None, None, &|_| {}).unwrap();
    assert_eq!(rep.split("valid_unseen").unwrap().success_rate, 1.0);
    let md = std::fs::read_to_string(out.join("results.md")).unwrap();
    assert!(md.contains("| walkthrough | 100.0 |"), "{md}");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap()).unwrap();
    assert_eq!(json["results"].as_array().unwrap().len(), 2);
    let fa = eval_opts(
        ActorKind::FirstAdmissible,
        fake_cfg(2, 10),
        fixtures(),
        None,
        Some(10),
    );
    assert_eq!(
        run_eval(&fa, None, None, &|_| {})
            .unwrap()
            .split("valid_unseen")
            .unwrap()
            .won,
        0
    );
    let llm = eval_opts(ActorKind::Llm, fake_cfg(1, 10), fixtures(), None, Some(10));
    let err = run_eval(&llm, None, None, &|_| {}).unwrap_err().to_string();
    assert!(err.contains("needs an LLM"), "{err}");
    let mut bad = eval_opts(
        ActorKind::Walkthrough,
        fake_cfg(1, 10),
        fixtures(),
        None,
        None,
    );
    bad.splits = vec!["train".into()];
    let err = run_eval(&bad, None, None, &|_| {}).unwrap_err().to_string();
    assert!(
        err.contains("`train` has no games") && err.contains("valid_seen, valid_unseen"),
        "{err}"
    );
}

/// `memskill eval --dataset alfworld --split valid_unseen --limit 10 --actor walkthrough|first-admissible`
/// without the binary. Slow (about 2 minutes): MEMSKILL_SLOW=1.
#[test]
fn real_eval_walkthrough_and_first_admissible() {
    if std::env::var("MEMSKILL_SLOW").ok().as_deref() != Some("1") {
        eprintln!("skipped: set MEMSKILL_SLOW=1 to run the real 2x10-game ALFWorld evaluation");
        return;
    }
    let Some(cfg) = real_cfg(2) else { return };
    let Some(idx) = real_games() else { return };
    let dir = tempfile::tempdir().unwrap();
    for (actor, check) in [
        (
            ActorKind::Walkthrough,
            (|sr: f64| sr == 1.0) as fn(f64) -> bool,
        ),
        (ActorKind::FirstAdmissible, |sr: f64| sr <= 0.3),
    ] {
        let out = dir.path().join(actor.as_str());
        let opts = eval_opts(actor, cfg.clone(), idx.root.clone(), Some(out), Some(10));
        let rep = run_eval(&opts, None, None, &|_| {}).unwrap();
        println!("{}", rep.to_markdown());
        let a = rep.split("valid_unseen").unwrap();
        assert_eq!((a.games, a.env_errors), (10, 0));
        assert!(check(a.success_rate), "{actor:?}: SR {}", a.success_rate);
    }
}

/// A walkthrough actor that, when its game starts, announces itself and waits (up to a
/// bound) for the other concurrent game to start too; `met` records whether it did.
struct Rendezvous {
    inner: WalkthroughActor,
    tx: std::sync::mpsc::Sender<()>,
    rx: std::sync::mpsc::Receiver<()>,
    met: Arc<std::sync::atomic::AtomicUsize>,
}
impl Actor for Rendezvous {
    fn begin(&mut self, _goal: &str, _intro: &str) -> Vec<String> {
        let _ = self.tx.send(());
        if self.rx.recv_timeout(Duration::from_secs(10)).is_ok() {
            self.met.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        }
        Vec::new()
    }
    fn act(&mut self, ctx: &ActorContext<'_>) -> String {
        self.inner.act(ctx)
    }
}

#[test]
fn concurrent_callers_share_every_free_process() {
    if !have_python3() {
        eprintln!("skipped: python3 not found");
        return;
    }
    // Two callers, one game each, on a pool of two processes: each game must get its own
    // process (before, every caller started on process 0 and the second game waited).
    let idx = GameIndex::from_dir(&fixtures()).unwrap();
    let pool = BridgePool::start(fake_cfg(2, 10)).unwrap();
    let (a_tx, b_rx) = std::sync::mpsc::channel();
    let (b_tx, a_rx) = std::sync::mpsc::channel();
    let met = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let ends = std::sync::Mutex::new(vec![Some((a_tx, a_rx)), Some((b_tx, b_rx))]);
    let game = |i: usize| idx.games[i].clone();
    std::thread::scope(|s| {
        for i in 0..2 {
            let (pool, ends, met) = (&pool, &ends, met.clone());
            let g = vec![game(i)];
            s.spawn(move || {
                let (tx, rx) = ends.lock().unwrap()[i].take().unwrap();
                let cell = std::sync::Mutex::new(Some((tx, rx)));
                let factory = |g: &Game| -> Result<Box<dyn Actor>, String> {
                    let (tx, rx) = cell.lock().unwrap().take().ok_or("one game per caller")?;
                    Ok(Box::new(Rendezvous {
                        inner: WalkthroughActor::new(g.walkthrough().map_err(|e| e.to_string())?),
                        tx,
                        rx,
                        met: met.clone(),
                    }))
                };
                let r = pool.play_many(&g, &factory, 20);
                assert_eq!(r[0].outcome, GameOutcome::Won, "{:?}", r[0]);
            });
        }
    });
    assert_eq!(met.load(std::sync::atomic::Ordering::SeqCst), 2);
}
