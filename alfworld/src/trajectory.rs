//! Expert trajectories: walkthroughs replayed through the bridge, rendered as text, cached as JSONL.

use crate::actor::StepRecord;
use crate::actor::{Actor, WalkthroughActor};
use crate::bridge::{BridgePool, GameResult};
use crate::error::AlfworldError;
use crate::index::{Game, TaskType};
use memskill_core::{Sample, Session, Turn};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::io::Write;
use std::path::Path;

/// One replayed expert game.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Trajectory {
    pub game_id: String,
    pub split: String,
    pub task_type: TaskType,
    pub objective: String,
    pub initial_obs: String,
    pub steps: Vec<StepRecord>,
    pub success: bool,
    /// [`format_trajectory`] of the above.
    pub text: String,
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The reference's trajectory text (`_build_trajectory_text`): the first observation
/// (stripped) and two blank lines, then one `ACTION: {action}` line and one `OBSERVATION:
/// {observation, stripped}` line per step (an empty action or observation leaves its line
/// out), then two blank lines and `TRAJECTORY_STATUS: SUCCESS|FAILED`; the whole text
/// stripped.
pub fn format_trajectory(initial_obs: &str, steps: &[StepRecord], success: bool) -> String {
    let mut parts: Vec<String> = Vec::with_capacity(2 * steps.len() + 4);
    if !initial_obs.is_empty() {
        parts.push(crate::actor::py_strip(initial_obs).to_string());
        parts.push(String::new());
        parts.push(String::new());
    }
    for s in steps {
        if !s.action.is_empty() {
            parts.push(format!("ACTION: {}", s.action));
        }
        if !s.obs.is_empty() {
            parts.push(format!("OBSERVATION: {}", crate::actor::py_strip(&s.obs)));
        }
    }
    parts.push(format!(
        "\n\nTRAJECTORY_STATUS: {}",
        if success { "SUCCESS" } else { "FAILED" }
    ));
    crate::actor::py_strip(&parts.join("\n")).to_string()
}

impl Trajectory {
    /// From a played game; `None` for environment errors (they are not trajectories).
    pub fn from_result(r: &GameResult) -> Option<Trajectory> {
        if r.is_env_error() {
            return None;
        }
        let success = r.won();
        Some(Trajectory {
            game_id: r.game_id.clone(),
            split: r.split.clone(),
            task_type: r.task_type,
            objective: r.objective.clone(),
            initial_obs: r.initial_obs.clone(),
            steps: r.transcript.clone(),
            success,
            text: format_trajectory(&r.initial_obs, &r.transcript, success),
        })
    }
}

/// A trajectory as a one-session [`Sample`] (dataset `alfworld`, no queries): turn 1 is the
/// first observation (speaker `environment`), then one turn per `ACTION:` (speaker `agent`) and
/// `OBSERVATION:` (speaker `environment`) line, then the status line (speaker `environment`).
pub fn to_sample(traj: &Trajectory) -> Sample {
    let mut turns = Vec::with_capacity(2 * traj.steps.len() + 2);
    let mut push = |speaker: &str, text: String| {
        let id = format!("S1:T{}", turns.len() + 1);
        turns.push(Turn {
            id,
            speaker: speaker.into(),
            text,
        });
    };
    push("environment", traj.initial_obs.trim().to_string());
    for s in &traj.steps {
        push("agent", format!("ACTION: {}", one_line(&s.action)));
        push("environment", format!("OBSERVATION: {}", one_line(&s.obs)));
    }
    push(
        "environment",
        if traj.success {
            "TRAJECTORY_STATUS: SUCCESS"
        } else {
            "TRAJECTORY_STATUS: FAILED"
        }
        .into(),
    );
    Sample {
        id: traj.game_id.clone(),
        dataset: "alfworld".into(),
        sessions: vec![Session {
            index: 1,
            date: None,
            turns,
        }],
        spans: Vec::new(),
        queries: Vec::new(),
    }
}

/// The largest trajectory cache read.
pub const CACHE_MAX_BYTES: u64 = 2048 << 20;

/// Reads a trajectory JSONL cache (missing file = empty); each `text` is re-rendered with
/// [`format_trajectory`].
pub fn read_cache(path: &Path) -> Result<Vec<Trajectory>, AlfworldError> {
    if std::fs::symlink_metadata(path).is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound) {
        return Ok(Vec::new());
    }
    let text = memskill_core::fsio::read_user_text(path, CACHE_MAX_BYTES, "trajectory cache")?;
    let mut v = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let mut t: Trajectory =
            serde_json::from_str(line).map_err(|e| AlfworldError::BadCache {
                path: path.to_path_buf(),
                line: i + 1,
                message: e.to_string(),
            })?;
        // The text is derived data: render it in the current layout (caches written before
        // the layout followed the reference hold the old one).
        t.text = format_trajectory(&t.initial_obs, &t.steps, t.success);
        v.push(t);
    }
    Ok(v)
}

fn append_cache(path: &Path, trajs: &[Trajectory]) -> Result<(), AlfworldError> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| AlfworldError::io(dir, e))?;
    }
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(|e| AlfworldError::io(path, e))?;
    for t in trajs {
        let line = serde_json::to_string(t).map_err(|e| AlfworldError::Other(e.to_string()))?;
        writeln!(f, "{line}").map_err(|e| AlfworldError::io(path, e))?;
    }
    Ok(())
}

/// Plays each game's expert walkthrough (step limit: the longest walkthrough + 5), in order.
pub fn replay_walkthroughs(pool: &BridgePool, games: &[Game]) -> Vec<GameResult> {
    let max_len = games
        .iter()
        .filter_map(|g| g.walkthrough().ok().map(|w| w.len()))
        .max()
        .unwrap_or(0);
    let factory = |g: &Game| -> Result<Box<dyn Actor>, String> {
        let w = g.walkthrough().map_err(|e| e.to_string())?;
        Ok(Box::new(WalkthroughActor::new(w)))
    };
    pool.play_many(games, &factory, max_len + 5)
}

/// Replays `games` and appends their trajectories to the JSONL `cache` (when given); games
/// that hit an environment error are left out (and not cached). Does not read the cache.
pub fn replay_into_cache(
    pool: &BridgePool,
    games: &[Game],
    cache: Option<&Path>,
) -> Result<Vec<Trajectory>, AlfworldError> {
    if games.is_empty() {
        return Ok(Vec::new());
    }
    let fresh: Vec<Trajectory> = replay_walkthroughs(pool, games)
        .iter()
        .filter_map(Trajectory::from_result)
        .collect();
    if let Some(p) = cache {
        append_cache(p, &fresh)?;
    }
    Ok(fresh)
}

/// Expert trajectories of `games`, in order: taken from the JSONL `cache` when present there,
/// otherwise replayed through the pool ([`replay_into_cache`]). Games that hit an
/// environment error are left out.
pub fn expert_trajectories(
    pool: &BridgePool,
    games: &[Game],
    cache: Option<&Path>,
) -> Result<Vec<Trajectory>, AlfworldError> {
    let mut known: HashMap<String, Trajectory> = match cache {
        Some(p) => read_cache(p)?
            .into_iter()
            .map(|t| (t.game_id.clone(), t))
            .collect(),
        None => HashMap::new(),
    };
    let missing: Vec<Game> = games
        .iter()
        .filter(|g| !known.contains_key(&g.id))
        .cloned()
        .collect();
    for t in replay_into_cache(pool, &missing, cache)? {
        known.insert(t.game_id.clone(), t);
    }
    Ok(games
        .iter()
        .filter_map(|g| known.get(&g.id).cloned())
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn traj() -> Trajectory {
        let steps = vec![
            StepRecord {
                action: "go to sidetable 1".into(),
                obs: "On the sidetable 1,\nyou see a pencil 1.".into(),
            },
            StepRecord {
                action: "take pencil 1 from sidetable 1".into(),
                obs: "You pick up the pencil 1.".into(),
            },
        ];
        let intro =
            "-= Welcome =-\n\nYou are in a room.\n\nYour task is to: put a pencil in dresser.";
        Trajectory {
            game_id: "valid_seen/x/t1".into(),
            split: "valid_seen".into(),
            task_type: TaskType::PickAndPlace,
            objective: "put a pencil in dresser.".into(),
            initial_obs: intro.into(),
            text: format_trajectory(intro, &steps, false),
            steps,
            success: false,
        }
    }

    #[test]
    fn text_layout_is_the_reference_one() {
        let t = traj();
        assert_eq!(
            t.text,
            "-= Welcome =-\n\nYou are in a room.\n\nYour task is to: put a pencil in dresser.\n\n\n\
             ACTION: go to sidetable 1\nOBSERVATION: On the sidetable 1,\nyou see a pencil 1.\n\
             ACTION: take pencil 1 from sidetable 1\nOBSERVATION: You pick up the pencil 1.\n\n\n\
             TRAJECTORY_STATUS: FAILED"
        );
        assert_eq!(
            format_trajectory("x", &[], true),
            "x\n\n\n\n\nTRAJECTORY_STATUS: SUCCESS"
        );
        assert_eq!(
            format_trajectory("", &[], false),
            "TRAJECTORY_STATUS: FAILED"
        );
        let blank = [StepRecord {
            action: String::new(),
            obs: "  seen \n".into(),
        }];
        assert_eq!(
            format_trajectory(" o ", &blank, true),
            "o\n\n\nOBSERVATION: seen\n\n\nTRAJECTORY_STATUS: SUCCESS"
        );
    }

    #[test]
    fn sample_has_one_turn_per_line() {
        let t = traj();
        let s = to_sample(&t);
        assert_eq!(s.dataset, "alfworld");
        assert_eq!(s.sessions.len(), 1);
        let turns = &s.sessions[0].turns;
        assert_eq!(turns.len(), 1 + 2 * 2 + 1);
        assert_eq!(turns[1].speaker, "agent");
        assert_eq!(turns[1].text, "ACTION: go to sidetable 1");
        assert_eq!(turns[2].speaker, "environment");
        assert_eq!(turns[5].text, "TRAJECTORY_STATUS: FAILED");
        assert_eq!(turns[5].id, "S1:T6");
        assert_eq!(turns[3].text, "ACTION: take pencil 1 from sidetable 1");
    }

    #[test]
    fn cache_roundtrip_and_bad_line() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("c.jsonl");
        assert!(read_cache(&p).unwrap().is_empty());
        append_cache(&p, &[traj()]).unwrap();
        append_cache(&p, &[traj()]).unwrap();
        let back = read_cache(&p).unwrap();
        assert_eq!(back.len(), 2);
        assert_eq!(back[0], traj());
        // A stale text (an older layout) is re-rendered on reading.
        let mut old = traj();
        old.text = "old layout".into();
        append_cache(&p, &[old]).unwrap();
        assert_eq!(read_cache(&p).unwrap()[2].text, traj().text);
        std::fs::write(&p, "{\"game_id\": 3}\n").unwrap();
        let err = read_cache(&p).unwrap_err().to_string();
        assert!(err.contains("c.jsonl:1"), "{err}");
    }
}
