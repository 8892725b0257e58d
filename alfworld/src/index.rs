//! Game index: finds `game.tw-pddl` files and tells their split and task type.

use crate::error::AlfworldError;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

/// The six ALFWorld task families.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskType {
    PickAndPlace,
    PickTwoObjAndPlace,
    LookAtObjInLight,
    PickCleanThenPlace,
    PickHeatThenPlace,
    PickCoolThenPlace,
}

impl TaskType {
    /// All task types in the paper's Table-1 order.
    pub const ALL: [TaskType; 6] = [
        TaskType::PickAndPlace,
        TaskType::PickCleanThenPlace,
        TaskType::PickHeatThenPlace,
        TaskType::PickCoolThenPlace,
        TaskType::LookAtObjInLight,
        TaskType::PickTwoObjAndPlace,
    ];

    /// Snake-case name, e.g. `pick_and_place`.
    pub fn as_str(self) -> &'static str {
        match self {
            TaskType::PickAndPlace => "pick_and_place",
            TaskType::PickTwoObjAndPlace => "pick_two_obj_and_place",
            TaskType::LookAtObjInLight => "look_at_obj_in_light",
            TaskType::PickCleanThenPlace => "pick_clean_then_place",
            TaskType::PickHeatThenPlace => "pick_heat_then_place",
            TaskType::PickCoolThenPlace => "pick_cool_then_place",
        }
    }

    /// Short column label used in the Table-1 layout.
    pub fn short(self) -> &'static str {
        match self {
            TaskType::PickAndPlace => "Pick",
            TaskType::PickTwoObjAndPlace => "Pick2",
            TaskType::LookAtObjInLight => "Look",
            TaskType::PickCleanThenPlace => "Clean",
            TaskType::PickHeatThenPlace => "Heat",
            TaskType::PickCoolThenPlace => "Cool",
        }
    }

    /// Task type from an ALFWorld game folder name such as
    /// `pick_and_place_simple-Pencil-None-Dresser-330` or
    /// `pick_clean_then_place_in_recep-Ladle-None-CounterTop-14`.
    /// The part before the first `-` is matched exactly against the known ALFRED task names.
    pub fn from_folder(folder: &str) -> Option<TaskType> {
        let head = folder.split('-').next().unwrap_or("");
        match head {
            "pick_and_place_simple" | "pick_and_place" => Some(TaskType::PickAndPlace),
            "pick_two_obj_and_place" => Some(TaskType::PickTwoObjAndPlace),
            "look_at_obj_in_light" => Some(TaskType::LookAtObjInLight),
            "pick_clean_then_place_in_recep" | "pick_clean_then_place" => {
                Some(TaskType::PickCleanThenPlace)
            }
            "pick_heat_then_place_in_recep" | "pick_heat_then_place" => {
                Some(TaskType::PickHeatThenPlace)
            }
            "pick_cool_then_place_in_recep" | "pick_cool_then_place" => {
                Some(TaskType::PickCoolThenPlace)
            }
            _ => None,
        }
    }
}

impl fmt::Display for TaskType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for TaskType {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let t = s.trim().to_ascii_lowercase();
        TaskType::ALL
            .iter()
            .copied()
            .find(|tt| tt.as_str() == t || tt.short().eq_ignore_ascii_case(&t))
            .or_else(|| TaskType::from_folder(&t))
            .ok_or_else(|| format!("unknown ALFWorld task type `{s}`"))
    }
}

/// One playable game file.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Game {
    /// `<split>/<task folder>/<trial>`, unique within an index.
    pub id: String,
    /// `train`, `valid_seen`, `valid_unseen`, `valid_train`.
    pub split: String,
    pub task_type: TaskType,
    /// Absolute path of the `game.tw-pddl` file.
    pub path: PathBuf,
}

#[derive(Deserialize)]
struct WalkthroughOnly {
    #[serde(default)]
    walkthrough: Option<Vec<String>>,
}

/// The largest game file read (ALFWorld's `game.tw-pddl` files are tens of KB).
pub const GAME_FILE_MAX_BYTES: u64 = 64 << 20;

impl Game {
    /// Reads the expert walkthrough from the game file (not cached: call once per game).
    pub fn walkthrough(&self) -> Result<Vec<String>, AlfworldError> {
        // game files are a few KB; a FIFO or device is refused, never read forever
        let text =
            memskill_core::fsio::read_user_text(&self.path, GAME_FILE_MAX_BYTES, "game file")?;
        let w: WalkthroughOnly =
            serde_json::from_str(&text).map_err(|e| AlfworldError::BadGame {
                path: self.path.clone(),
                message: e.to_string(),
            })?;
        w.walkthrough.ok_or_else(|| AlfworldError::BadGame {
            path: self.path.clone(),
            message: "missing field `walkthrough`".into(),
        })
    }
}

/// All games found under one root, sorted by id.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct GameIndex {
    pub root: PathBuf,
    pub games: Vec<Game>,
}

/// Name of the game file inside each trial folder.
pub const GAME_FILE: &str = "game.tw-pddl";

/// The memskill cache directory (`memskill_core::cache_root`).
pub fn cache_dir() -> PathBuf {
    memskill_core::cache_root()
}

/// Default games root: `<cache>/alfworld/json_2.1.1` (filled by `scripts/alfworld/unpack.sh`).
pub fn default_games_root() -> PathBuf {
    cache_dir().join("alfworld").join("json_2.1.1")
}

impl GameIndex {
    /// Indexes `root`, which is either the `json_2.1.1` folder (holding split folders) or
    /// a folder holding `json_2.1.1`. Layout: `<split>/<task>-<objs>-<scene>/<trial>/game.tw-pddl`.
    pub fn from_dir(root: &Path) -> Result<GameIndex, AlfworldError> {
        let root = if root.join("json_2.1.1").is_dir() {
            root.join("json_2.1.1")
        } else {
            root.to_path_buf()
        };
        let root = root
            .canonicalize()
            .map_err(|e| AlfworldError::io(&root, e))?;
        let mut games = Vec::new();
        for split_dir in read_dir_sorted(&root)? {
            if !split_dir.is_dir() {
                continue;
            }
            let split = file_name(&split_dir);
            for task_dir in read_dir_sorted(&split_dir)? {
                if !task_dir.is_dir() {
                    continue;
                }
                let folder = file_name(&task_dir);
                for trial_dir in read_dir_sorted(&task_dir)? {
                    let path = trial_dir.join(GAME_FILE);
                    if !path.is_file() {
                        continue;
                    }
                    let task_type = TaskType::from_folder(&folder).ok_or_else(|| {
                        AlfworldError::UnknownTaskType {
                            path: path.clone(),
                            folder: folder.clone(),
                        }
                    })?;
                    games.push(Game {
                        id: format!("{split}/{folder}/{}", file_name(&trial_dir)),
                        split: split.clone(),
                        task_type,
                        path,
                    });
                }
            }
        }
        if games.is_empty() {
            return Err(AlfworldError::NoGames(root));
        }
        games.sort_by(|a, b| a.id.cmp(&b.id));
        Ok(GameIndex { root, games })
    }

    /// Unpacks the given `json_2.1.1-*.tar.gz` files (with the system `tar`) into `dest`
    /// unless already unpacked there (a `.unpacked-<name>` marker), then indexes `dest`.
    pub fn from_tarballs(paths: &[PathBuf], dest: &Path) -> Result<GameIndex, AlfworldError> {
        std::fs::create_dir_all(dest).map_err(|e| AlfworldError::io(dest, e))?;
        for p in paths {
            let marker = dest.join(format!(".unpacked-{}", file_name(p)));
            if marker.is_file() {
                continue;
            }
            let out = std::process::Command::new("tar")
                .arg("xzf")
                .arg(p)
                .arg("-C")
                .arg(dest)
                .output()
                .map_err(|e| AlfworldError::Unpack {
                    path: p.clone(),
                    message: e.to_string(),
                })?;
            if !out.status.success() {
                return Err(AlfworldError::Unpack {
                    path: p.clone(),
                    message: String::from_utf8_lossy(&out.stderr).trim().to_string(),
                });
            }
            std::fs::write(&marker, b"ok\n").map_err(|e| AlfworldError::io(&marker, e))?;
        }
        GameIndex::from_dir(dest)
    }

    /// Games of one split (`train`, `valid_seen`, `valid_unseen`, `valid_train`), in id order.
    pub fn split(&self, split: &str) -> Vec<&Game> {
        self.games.iter().filter(|g| g.split == split).collect()
    }

    /// Up to `limit` games of `split` (all when `None`), interleaving task types round-robin
    /// (each type in id order) so a small limit still covers every task type. Deterministic.
    pub fn select(&self, split: &str, limit: Option<usize>) -> Vec<Game> {
        let mut queues: Vec<Vec<&Game>> = TaskType::ALL
            .iter()
            .map(|t| self.by_task(split, *t).into_iter().rev().collect())
            .collect();
        let want = limit.unwrap_or(usize::MAX);
        let mut out = Vec::new();
        while out.len() < want && queues.iter().any(|q| !q.is_empty()) {
            for q in queues.iter_mut() {
                if out.len() >= want {
                    break;
                }
                if let Some(g) = q.pop() {
                    out.push(g.clone());
                }
            }
        }
        out
    }

    /// Names of the splits present, sorted.
    pub fn splits(&self) -> Vec<String> {
        let mut s: Vec<String> = self.games.iter().map(|g| g.split.clone()).collect();
        s.sort();
        s.dedup();
        s
    }

    /// Games of one split and task type.
    pub fn by_task(&self, split: &str, task: TaskType) -> Vec<&Game> {
        self.games
            .iter()
            .filter(|g| g.split == split && g.task_type == task)
            .collect()
    }
}

fn file_name(p: &Path) -> String {
    p.file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

fn read_dir_sorted(dir: &Path) -> Result<Vec<PathBuf>, AlfworldError> {
    let rd = std::fs::read_dir(dir).map_err(|e| AlfworldError::io(dir, e))?;
    let mut v = Vec::new();
    for e in rd {
        let e = e.map_err(|e| AlfworldError::io(dir, e))?;
        v.push(e.path());
    }
    v.sort();
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A game file that is a FIFO is refused by name, never read (it would block).
    #[cfg(unix)]
    #[test]
    fn a_fifo_game_file_is_refused() {
        let d = tempfile::tempdir().unwrap();
        let path = d.path().join("game.tw-pddl");
        let made = std::process::Command::new("mkfifo")
            .arg(&path)
            .status()
            .is_ok_and(|s| s.success());
        if !made {
            println!("skipped: mkfifo is not available");
            return;
        }
        let g = Game {
            id: "train/x/trial".into(),
            split: "train".into(),
            task_type: TaskType::PickAndPlace,
            path,
        };
        let e = g.walkthrough().unwrap_err().to_string();
        assert!(e.contains("game file") && e.contains("FIFO"), "{e}");
    }

    #[test]
    fn folder_names_map_to_task_types() {
        let cases = [
            (
                "pick_and_place_simple-Pencil-None-Dresser-330",
                TaskType::PickAndPlace,
            ),
            (
                "pick_two_obj_and_place-Newspaper-None-Drawer-224",
                TaskType::PickTwoObjAndPlace,
            ),
            (
                "look_at_obj_in_light-AlarmClock-None-DeskLamp-323",
                TaskType::LookAtObjInLight,
            ),
            (
                "pick_clean_then_place_in_recep-Ladle-None-CounterTop-14",
                TaskType::PickCleanThenPlace,
            ),
            (
                "pick_heat_then_place_in_recep-Apple-None-DiningTable-26",
                TaskType::PickHeatThenPlace,
            ),
            (
                "pick_cool_then_place_in_recep-Lettuce-None-CounterTop-11",
                TaskType::PickCoolThenPlace,
            ),
        ];
        for (folder, want) in cases {
            assert_eq!(TaskType::from_folder(folder), Some(want), "{folder}");
        }
        // ALFRED's pick_and_place_with_movable_recep is not an ALFWorld task; prefixes must not leak.
        assert_eq!(
            TaskType::from_folder("pick_and_place_with_movable_recep-X-Y-Z-1"),
            None
        );
        assert_eq!(TaskType::from_folder("pick_two_obj"), None);
        assert_eq!(TaskType::from_folder(""), None);
    }

    #[test]
    fn task_type_parses_names_and_short_labels() {
        for t in TaskType::ALL {
            assert_eq!(t.as_str().parse::<TaskType>().ok(), Some(t));
            assert_eq!(t.short().parse::<TaskType>().ok(), Some(t));
            let json = serde_json::to_string(&t).unwrap();
            assert_eq!(json, format!("\"{}\"", t.as_str()));
        }
        assert!("pick".parse::<TaskType>().is_ok());
        assert!("nonsense".parse::<TaskType>().is_err());
    }
}
