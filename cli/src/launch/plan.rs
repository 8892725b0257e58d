//! What a launch runs, as pure functions: the tasks (sweep points x seeds), their run names
//! and the `memskill train` command line of each. No I/O.

use std::path::Path;

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};

pub use crate::shell::{shell_line, shell_word};

/// The most tasks one launch may hold (a typo in `--seeds 1-100000` is refused, not
/// submitted).
pub const MAX_TASKS: usize = 10_000;

/// One task of a launch: one sweep point at one seed, trained as one run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Task {
    /// The array task id (0-based, in order).
    pub task: usize,
    /// The sweep point's index (0-based) and its `key=value` sets.
    pub point: usize,
    pub sets: Vec<String>,
    /// `run.seed` of this task (`None`: the config's).
    pub seed: Option<u64>,
    /// The run's name (`--run-name`); its folder is `<runs dir>/<run_name>`.
    pub run_name: String,
}

/// `--seeds`: `1-5`, `1,3,7` or a mix (`1-3,9`); each seed once, in the order given.
pub fn parse_seeds(s: &str) -> Result<Vec<u64>> {
    let mut out: Vec<u64> = Vec::new();
    let bad = || format!("--seeds {s:?}: expected seeds like 1-5 or 1,3,7");
    for part in s.split(',').map(str::trim) {
        let (lo, hi) = match part.split_once('-') {
            Some((a, b)) => (a.trim(), b.trim()),
            None => (part, part),
        };
        let lo: u64 = lo.parse().with_context(bad)?;
        let hi: u64 = hi.parse().with_context(bad)?;
        if hi < lo {
            bail!("--seeds {s:?}: the range {part} runs backwards");
        }
        if hi - lo >= MAX_TASKS as u64 || out.len() + (hi - lo) as usize >= MAX_TASKS {
            bail!("--seeds {s:?}: more than {MAX_TASKS} seeds");
        }
        for seed in lo..=hi {
            if out.contains(&seed) {
                bail!("--seeds {s:?}: seed {seed} is given twice");
            }
            out.push(seed);
        }
    }
    Ok(out)
}

/// The tasks of `grid` (the sweep points, each a list of `key=value`; one empty point without
/// a sweep) times `seeds` (none: the config's seed), seeds varying fastest. Run names are
/// `<name>`, then `-p<point>` when there is more than one point, then `-s<seed>` when seeds
/// are given: short, unique, and valid run names; the index maps each to its values.
pub fn tasks(name: &str, grid: &[Vec<String>], seeds: &[u64]) -> Result<Vec<Task>> {
    memskill_trainer::config::check_run_name(name).context("--name")?;
    let seeds: Vec<Option<u64>> = if seeds.is_empty() {
        vec![None]
    } else {
        seeds.iter().copied().map(Some).collect()
    };
    let n = grid.len().saturating_mul(seeds.len());
    if n == 0 {
        bail!("nothing to launch: the sweep has no points");
    }
    if n > MAX_TASKS {
        bail!(
            "{n} tasks ({} sweep points x {} seeds): at most {MAX_TASKS}",
            grid.len(),
            seeds.len()
        );
    }
    let mut out = Vec::with_capacity(n);
    for (point, sets) in grid.iter().enumerate() {
        for seed in &seeds {
            let mut run_name = name.to_string();
            if grid.len() > 1 {
                run_name.push_str(&format!("-p{point}"));
            }
            if let Some(s) = seed {
                run_name.push_str(&format!("-s{s}"));
            }
            memskill_trainer::config::check_run_name(&run_name)
                .with_context(|| format!("the run name of task {}", out.len()))?;
            out.push(Task {
                task: out.len(),
                point,
                sets: sets.clone(),
                seed: *seed,
                run_name,
            });
        }
    }
    Ok(out)
}

/// The arguments after `memskill train` that start `task` fresh: the config, the launch's
/// own `--set`s, the point's, the seed's (later sets win), the run name and the runs folder.
pub fn train_args(task: &Task, config: &Path, sets: &[String], runs_dir: &Path) -> Vec<String> {
    let mut a = vec!["--config".to_string(), config.display().to_string()];
    let seed = task.seed.map(|s| format!("run.seed={s}"));
    for s in sets.iter().chain(&task.sets).chain(seed.as_ref()) {
        a.push("--set".into());
        a.push(s.clone());
    }
    a.extend([
        "--run-name".into(),
        task.run_name.clone(),
        "--runs-dir".into(),
        runs_dir.display().to_string(),
    ]);
    a
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(xs: &[&str]) -> Vec<String> {
        xs.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn seeds_take_ranges_and_lists() {
        assert_eq!(parse_seeds("1-5").unwrap(), [1, 2, 3, 4, 5]);
        assert_eq!(parse_seeds("7").unwrap(), [7]);
        assert_eq!(parse_seeds("1,3, 7").unwrap(), [1, 3, 7]);
        assert_eq!(parse_seeds("1-3,9").unwrap(), [1, 2, 3, 9]);
        for bad in ["", "a", "3-1", "1,,2", "1-", "-1", "1-3,2", "0-99999"] {
            assert!(parse_seeds(bad).is_err(), "{bad:?} accepted");
        }
        assert!(
            format!("{:#}", parse_seeds("1-3,2").unwrap_err()).contains("seed 2 is given twice")
        );
    }

    #[test]
    fn tasks_are_points_times_seeds_with_unique_names() {
        let grid = vec![strings(&["ppo.lr=1e-3"]), strings(&["ppo.lr=3e-3"])];
        let t = tasks("sw", &grid, &[1, 2]).unwrap();
        let names: Vec<&str> = t.iter().map(|t| t.run_name.as_str()).collect();
        assert_eq!(names, ["sw-p0-s1", "sw-p0-s2", "sw-p1-s1", "sw-p1-s2"]);
        assert_eq!(t[3].task, 3);
        assert_eq!(t[3].point, 1);
        assert_eq!(t[3].seed, Some(2));
        assert_eq!(t[3].sets, ["ppo.lr=3e-3"]);
        // one point, no seeds: the launch's name itself
        let one = tasks("solo", &[vec![]], &[]).unwrap();
        assert_eq!(one.len(), 1);
        assert_eq!(one[0].run_name, "solo");
        assert_eq!(one[0].seed, None);
        // points only
        let p = tasks("g", &grid, &[]).unwrap();
        assert_eq!(p[1].run_name, "g-p1");
        assert!(tasks("bad name", &grid, &[]).is_err());
        assert!(tasks("x", &[], &[1]).is_err());
    }

    #[test]
    fn train_args_put_the_seed_last_and_name_the_run() {
        let t = &tasks("sw", &[strings(&["a=1"]), strings(&["a=2"])], &[5]).unwrap()[1];
        let a = train_args(
            t,
            Path::new("/c dir/x.toml"),
            &strings(&["b=\"s\""]),
            Path::new("/r"),
        );
        assert_eq!(
            a,
            strings(&[
                "--config",
                "/c dir/x.toml",
                "--set",
                "b=\"s\"",
                "--set",
                "a=2",
                "--set",
                "run.seed=5",
                "--run-name",
                "sw-p1-s5",
                "--runs-dir",
                "/r"
            ])
        );
        assert_eq!(
            shell_line(&a),
            "--config '/c dir/x.toml' --set 'b=\"s\"' --set a=2 --set run.seed=5 \
             --run-name sw-p1-s5 --runs-dir /r"
        );
    }
}
