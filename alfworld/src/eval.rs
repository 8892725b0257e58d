//! Evaluation: play games, aggregate success rate and steps per split and task type,
//! write `results.json` / `results.md`.

use crate::bridge::{ActorFactory, BridgePool, GameResult};
use crate::error::AlfworldError;
use crate::index::{Game, TaskType};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// Aggregate over a group of games. Environment errors are counted but not scored.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Aggregate {
    pub games: usize,
    pub scored: usize,
    pub won: usize,
    pub env_errors: usize,
    /// `won / scored` (0 when nothing was scored).
    pub success_rate: f64,
    /// Mean actions over scored games (lost games count their steps, up to max_steps).
    pub mean_steps: f64,
    /// LLM replies that fell back to the first admissible command.
    pub fallbacks: usize,
}

impl Aggregate {
    /// Aggregates a set of results.
    pub fn of<'a>(results: impl IntoIterator<Item = &'a GameResult>) -> Aggregate {
        let mut a = Aggregate::default();
        let mut steps = 0usize;
        for r in results {
            a.games += 1;
            a.fallbacks += r.actor_stats.fallback;
            if r.is_env_error() {
                a.env_errors += 1;
                continue;
            }
            a.scored += 1;
            steps += r.steps;
            if r.won() {
                a.won += 1;
            }
        }
        if a.scored > 0 {
            a.success_rate = a.won as f64 / a.scored as f64;
            a.mean_steps = steps as f64 / a.scored as f64;
        }
        a
    }
}

/// One row of the per-task table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GroupRow {
    pub split: String,
    /// `None` = all task types.
    pub task_type: Option<TaskType>,
    pub agg: Aggregate,
}

/// Results of one evaluation.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct EvalReport {
    pub actor: String,
    pub max_steps: usize,
    pub elapsed_secs: f64,
    /// Per split: the all-tasks row first, then one row per task type present.
    pub rows: Vec<GroupRow>,
    pub results: Vec<GameResult>,
    /// The LLM actor's model id (`backend:model`), absent for the scripted actors and in
    /// files written before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub executor: Option<String>,
    /// Its backend (`openai`, `local`, `scripted-synthetic`), which the report reads to
    /// mark evaluations of a scripted model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub executor_backend: Option<String>,
}

impl EvalReport {
    /// Builds the aggregate rows from per-game results.
    pub fn from_results(
        actor: &str,
        max_steps: usize,
        elapsed_secs: f64,
        results: Vec<GameResult>,
    ) -> Self {
        let mut splits: Vec<String> = results.iter().map(|r| r.split.clone()).collect();
        splits.sort();
        splits.dedup();
        let mut rows = Vec::new();
        for s in &splits {
            rows.push(GroupRow {
                split: s.clone(),
                task_type: None,
                agg: Aggregate::of(results.iter().filter(|r| &r.split == s)),
            });
            for t in TaskType::ALL {
                let group: Vec<&GameResult> = results
                    .iter()
                    .filter(|r| &r.split == s && r.task_type == t)
                    .collect();
                if !group.is_empty() {
                    rows.push(GroupRow {
                        split: s.clone(),
                        task_type: Some(t),
                        agg: Aggregate::of(group),
                    });
                }
            }
        }
        EvalReport {
            actor: actor.into(),
            max_steps,
            elapsed_secs,
            rows,
            results,
            executor: None,
            executor_backend: None,
        }
    }

    /// The all-tasks aggregate of one split.
    pub fn split(&self, split: &str) -> Option<&Aggregate> {
        self.rows
            .iter()
            .find(|r| r.split == split && r.task_type.is_none())
            .map(|r| &r.agg)
    }

    /// Markdown: a Table-1 style headline (SR and #Steps per split) and a per-task table.
    pub fn to_markdown(&self) -> String {
        let splits: Vec<&GroupRow> = self.rows.iter().filter(|r| r.task_type.is_none()).collect();
        let mut m = String::new();
        m.push_str(&format!(
            "## ALFWorld evaluation (actor: {}, max steps: {})\n\n",
            self.actor, self.max_steps
        ));
        let mut head = String::from("| Method |");
        let mut sep = String::from("|---|");
        let mut row = format!("| {} |", self.actor);
        for s in &splits {
            head.push_str(&format!(" {} SR (%) | {} #Steps |", s.split, s.split));
            sep.push_str("---:|---:|");
            row.push_str(&format!(
                " {:.1} | {:.1} |",
                100.0 * s.agg.success_rate,
                s.agg.mean_steps
            ));
        }
        m.push_str(&format!("{head}\n{sep}\n{row}\n\n"));
        m.push_str("| Split | Task | Games | Won | SR (%) | #Steps | Env errors | Fallbacks |\n");
        m.push_str("|---|---|---:|---:|---:|---:|---:|---:|\n");
        for r in &self.rows {
            let task = r
                .task_type
                .map_or("all".to_string(), |t| t.as_str().to_string());
            m.push_str(&format!(
                "| {} | {} | {} | {} | {:.1} | {:.1} | {} | {} |\n",
                r.split,
                task,
                r.agg.games,
                r.agg.won,
                100.0 * r.agg.success_rate,
                r.agg.mean_steps,
                r.agg.env_errors,
                r.agg.fallbacks
            ));
        }
        m.push_str(&format!(
            "\n{} games in {:.1}s ({:.1} games/min). Env errors are excluded from SR and #Steps.\n",
            self.results.len(),
            self.elapsed_secs,
            if self.elapsed_secs > 0.0 {
                60.0 * self.results.len() as f64 / self.elapsed_secs
            } else {
                0.0
            }
        ));
        m
    }

    /// Writes `results.json` (summary rows + one record per game) and `results.md` into `dir`.
    pub fn write(&self, dir: &Path) -> Result<(), AlfworldError> {
        std::fs::create_dir_all(dir).map_err(|e| AlfworldError::io(dir, e))?;
        let json =
            serde_json::to_string_pretty(self).map_err(|e| AlfworldError::Other(e.to_string()))?;
        write_atomic(&dir.join("results.json"), json.as_bytes())?;
        write_atomic(&dir.join("results.md"), self.to_markdown().as_bytes())?;
        Ok(())
    }
}

/// Temp file in the same folder, fsync, rename: a reader sees the old file or the new one,
/// never a partial write.
fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), AlfworldError> {
    use std::io::Write;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = path.with_file_name(format!(".{name}.tmp-{}", std::process::id()));
    let write = || -> std::io::Result<()> {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    };
    write().map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        AlfworldError::io(path, e)
    })
}

/// Plays `games` through the pool with actors from `factory` and aggregates the results.
pub fn evaluate(
    pool: &BridgePool,
    games: &[Game],
    actor_name: &str,
    factory: &ActorFactory<'_>,
    max_steps: usize,
    on_done: &(dyn Fn(&GameResult) + Sync),
) -> EvalReport {
    let t0 = std::time::Instant::now();
    let results = pool.play_many_with(games, factory, max_steps, on_done);
    EvalReport::from_results(actor_name, max_steps, t0.elapsed().as_secs_f64(), results)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::actor::ActorStats;
    use crate::bridge::GameOutcome;

    fn r(split: &str, t: TaskType, outcome: GameOutcome, steps: usize) -> GameResult {
        GameResult {
            game_id: format!("{split}/{t}/{steps}"),
            split: split.into(),
            task_type: t,
            outcome,
            steps,
            reward: 0.0,
            done: false,
            objective: String::new(),
            initial_obs: String::new(),
            transcript: vec![],
            tips: vec![],
            actor_stats: ActorStats {
                fallback: 1,
                ..Default::default()
            },
            elapsed_ms: 0,
        }
    }

    #[test]
    fn aggregates_exclude_env_errors() {
        let res = vec![
            r("valid_seen", TaskType::PickAndPlace, GameOutcome::Won, 4),
            r("valid_seen", TaskType::PickAndPlace, GameOutcome::Lost, 50),
            r(
                "valid_seen",
                TaskType::PickHeatThenPlace,
                GameOutcome::EnvError("x".into()),
                3,
            ),
            r(
                "valid_unseen",
                TaskType::LookAtObjInLight,
                GameOutcome::Won,
                6,
            ),
        ];
        let rep = EvalReport::from_results("walkthrough", 50, 2.0, res);
        let seen = rep.split("valid_seen").unwrap();
        assert_eq!(
            (seen.games, seen.scored, seen.won, seen.env_errors),
            (3, 2, 1, 1)
        );
        assert!((seen.success_rate - 0.5).abs() < 1e-12);
        assert!((seen.mean_steps - 27.0).abs() < 1e-12);
        assert_eq!(seen.fallbacks, 3);
        let heat = rep
            .rows
            .iter()
            .find(|g| g.task_type == Some(TaskType::PickHeatThenPlace))
            .unwrap();
        assert_eq!((heat.agg.scored, heat.agg.success_rate), (0, 0.0));
        assert_eq!(rep.split("valid_unseen").unwrap().success_rate, 1.0);
        let md = rep.to_markdown();
        assert!(
            md.contains("| walkthrough | 50.0 | 27.0 | 100.0 | 6.0 |"),
            "{md}"
        );
        assert!(
            md.contains("| valid_seen | pick_and_place | 2 | 1 | 50.0 | 27.0 | 0 | 2 |"),
            "{md}"
        );
        let dir = tempfile::tempdir().unwrap();
        rep.write(dir.path()).unwrap();
        let back: EvalReport = serde_json::from_str(
            &std::fs::read_to_string(dir.path().join("results.json")).unwrap(),
        )
        .unwrap();
        assert_eq!(back.results.len(), 4);
        assert_eq!(back.results[2].outcome, GameOutcome::EnvError("x".into()));
        // a scripted actor records no model; an LLM actor its id and backend, which the
        // report reads to mark scripted models
        let text = std::fs::read_to_string(dir.path().join("results.json")).unwrap();
        assert!(!text.contains("executor") && back.executor.is_none());
        let mut llm = rep.clone();
        llm.executor = Some("openai:scripted".into());
        llm.executor_backend = Some("openai".into());
        llm.write(dir.path()).unwrap();
        let v: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(dir.path().join("results.json")).unwrap(),
        )
        .unwrap();
        assert_eq!(
            (v["executor"].as_str(), v["executor_backend"].as_str()),
            (Some("openai:scripted"), Some("openai"))
        );
    }
}

/// Which actor an evaluation uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ActorKind {
    Walkthrough,
    FirstAdmissible,
    Llm,
}

impl ActorKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ActorKind::Walkthrough => "walkthrough",
            ActorKind::FirstAdmissible => "first-admissible",
            ActorKind::Llm => "llm",
        }
    }
}

impl std::str::FromStr for ActorKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().replace('_', "-").as_str() {
            "walkthrough" => Ok(ActorKind::Walkthrough),
            "first-admissible" => Ok(ActorKind::FirstAdmissible),
            "llm" => Ok(ActorKind::Llm),
            _ => Err(format!(
                "unknown actor `{s}` (walkthrough | first-admissible | llm)"
            )),
        }
    }
}

/// Everything an evaluation run needs besides the LLM.
#[derive(Debug, Clone)]
pub struct EvalOptions {
    /// Splits to play, e.g. `["valid_seen", "valid_unseen"]`.
    pub splits: Vec<String>,
    /// Games per split (task types interleaved, see [`crate::GameIndex::select`]).
    pub limit: Option<usize>,
    pub actor: ActorKind,
    pub max_steps: usize,
    /// Folder for `results.json` / `results.md` (not written when `None`).
    pub out: Option<std::path::PathBuf>,
    /// `json_2.1.1` folder (or its parent).
    pub games_root: std::path::PathBuf,
    pub bridge: crate::bridge::BridgeConfig,
    /// The LLM actor's settings (reply budget, temperature, inventory, reply matching).
    pub actor_settings: crate::actor::ActorSettings,
    /// The actor's templates (default: this crate's).
    pub prompts: Option<std::sync::Arc<memskill_core::PromptSet>>,
    /// The LLM actor's model id and backend name, recorded in `results.json`.
    pub executor: Option<(String, String)>,
}

/// Expands `valid` / `all` and comma lists into split names.
pub fn parse_splits(s: &str) -> Vec<String> {
    let mut v = Vec::new();
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        match part {
            "valid" | "eval" => v.extend(["valid_seen".to_string(), "valid_unseen".to_string()]),
            "seen" => v.push("valid_seen".into()),
            "unseen" => v.push("valid_unseen".into()),
            p => v.push(p.to_string()),
        }
    }
    v.dedup();
    v
}

/// Indexes the games, starts the pool, plays the selected games with the chosen actor and
/// writes the results. `llm` is required for [`ActorKind::Llm`]; `tips` (optional) supplies
/// per-game procedural tips by objective. Progress lines go to `on_done`.
pub fn run_eval(
    opts: &EvalOptions,
    llm: Option<std::sync::Arc<dyn memskill_core::Llm>>,
    tips: Option<crate::actor::TipSource>,
    on_done: &(dyn Fn(&GameResult) + Sync),
) -> Result<EvalReport, AlfworldError> {
    use crate::actor::{Actor, FirstAdmissibleActor, LlmActor, WalkthroughActor};
    let index = crate::index::GameIndex::from_dir(&opts.games_root)?;
    let mut games = Vec::new();
    for s in &opts.splits {
        let g = index.select(s, opts.limit);
        if g.is_empty() {
            return Err(AlfworldError::Other(format!(
                "split `{s}` has no games under {} (present: {})",
                index.root.display(),
                index.splits().join(", ")
            )));
        }
        games.extend(g);
    }
    if opts.actor == ActorKind::Llm && llm.is_none() {
        return Err(AlfworldError::Other(
            "actor `llm` needs an LLM backend".into(),
        ));
    }
    let pool = BridgePool::start(opts.bridge.clone())?;
    let factory = |g: &Game| -> Result<Box<dyn Actor>, String> {
        Ok(match opts.actor {
            ActorKind::Walkthrough => Box::new(WalkthroughActor::new(
                g.walkthrough().map_err(|e| e.to_string())?,
            )),
            ActorKind::FirstAdmissible => Box::new(FirstAdmissibleActor),
            ActorKind::Llm => {
                let llm = llm.clone().ok_or("no LLM")?;
                let mut a = LlmActor::new(llm, Vec::new()).with_settings(&opts.actor_settings);
                if let Some(p) = &opts.prompts {
                    a = a.with_prompts(p.clone());
                }
                if let Some(t) = &tips {
                    a = a.with_tip_source(t.clone());
                }
                Box::new(a)
            }
        })
    };
    let mut report = evaluate(
        &pool,
        &games,
        opts.actor.as_str(),
        &factory,
        opts.max_steps,
        on_done,
    );
    if opts.actor == ActorKind::Llm {
        if let Some((id, backend)) = &opts.executor {
            report.executor = Some(id.clone());
            report.executor_backend = Some(backend.clone());
        }
    }
    if let Some(dir) = &opts.out {
        report.write(dir)?;
    }
    Ok(report)
}
