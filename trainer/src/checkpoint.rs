//! Atomic, checksummed checkpoints under `runs/<name>/checkpoints/step-<n>/`.
//!
//! A checkpoint directory is assembled under a temporary name (every file fsynced), then
//! renamed into place and the `latest` pointer file is replaced atomically, so `latest`
//! always names a complete checkpoint. `manifest.json` holds the sha256 of every file and
//! is verified on load.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use memskill_controller::NewSkillBias;
use memskill_core::SkillBank;
use memskill_designer::{Evolution, HardCasePool};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use crate::fsutil::{fsync_dir, sha256_bytes, write_atomic, write_synced};

/// Bumped whenever the checkpoint layout changes incompatibly.
/// 2: the bank records which guard accepted each skill (`SkillBank::guard`). Format 1 is
/// still read: its bank is trusted as accepted by the guard of its day (with a warning for
/// each skill today's guard rejects; `--rescan` refuses them).
pub const FORMAT_VERSION: u32 = 2;

/// One row of the skill bank's evolution (rendered into `skills.md`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BankHistoryRow {
    pub stage: u32,
    pub update_step: u64,
    pub reward: Option<f64>,
    /// "start" | "improved" | "rolled-back" | "designed" | "designer-error" | "final".
    pub event: String,
    pub bank_version: u32,
    /// `name@version (status)` per skill.
    pub skills: Vec<String>,
    pub note: String,
}

/// Counters and small state of the loop.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrainState {
    pub format_version: u32,
    /// Next outer epoch to run (0-based).
    pub outer: u32,
    /// Next inner epoch to run inside `outer` (0-based).
    pub inner: u32,
    /// PPO updates done.
    pub update_step: u64,
    /// Designer stages done.
    pub stage: u32,
    /// Draws the training batches.
    pub rng: ChaCha8Rng,
    /// Exploration bias for the skills the last stage added or changed.
    pub bias: Option<NewSkillBias>,
    /// Batch rewards since the last designer stage.
    pub stage_rewards: Vec<f64>,
    /// Byte length of `metrics.jsonl` when this checkpoint was written.
    pub metrics_len: u64,
    /// Byte length of `invocations.jsonl` then (0 for runs from before the log).
    #[serde(default)]
    pub invocations_len: u64,
    /// Best stage (stabilised) reward seen, which names the `best` checkpoint.
    pub best_reward: Option<f64>,
    /// Early stop requested by the evolution (patience / max evolves).
    pub stopped_early: bool,
    pub bank_history: Vec<BankHistoryRow>,
    /// `designer.gate = "offline"`: the previously solved (sample, query) cases replayed
    /// for the regression check (the first `designer.gate_rules.solved_cases` seen; empty
    /// with the gate off).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub solved: Vec<(String, String)>,
}

/// Everything a checkpoint holds.
#[derive(Clone)]
pub struct Checkpoint {
    pub state: TrainState,
    pub controller: Vec<u8>,
    pub bank: SkillBank,
    pub evolution: Evolution,
    pub pool: HardCasePool,
    pub config_toml: String,
}

/// `manifest.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    pub format_version: u32,
    pub update_step: u64,
    /// File name -> sha256.
    pub files: BTreeMap<String, String>,
}

fn json<T: Serialize>(v: &T, what: &str) -> Result<Vec<u8>> {
    let mut b = serde_json::to_vec_pretty(v).with_context(|| format!("serialising {what}"))?;
    b.push(b'\n');
    Ok(b)
}

/// A failed checkpoint write, said plainly when the disk is full: nothing of `step` was
/// kept, and the run resumes from the previous checkpoint (or starts again without one).
fn with_disk_full_hint(e: anyhow::Error, run_dir: &Path, step: &str) -> anyhow::Error {
    let full = e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.raw_os_error() == Some(28))
    });
    if !full {
        return e;
    }
    let prev = pointer(run_dir, "latest").ok().flatten();
    let from = match prev.as_deref().and_then(Path::file_name) {
        Some(prev) => format!(
            "`memskill train --resume` continues from {}",
            prev.to_string_lossy()
        ),
        None => "start the run again (it has no checkpoint yet)".to_string(),
    };
    e.context(format!(
        "the disk holding {} is full (ENOSPC) while writing checkpoint {step}; its partial folder was removed. Free space, then {from}",
        run_dir.join("checkpoints").display()
    ))
}

impl Checkpoint {
    fn files(&self) -> Result<Vec<(&'static str, Vec<u8>)>> {
        // the bank as written records which guard accepted each skill, so that a later
        // guard cannot lock the run out of it (memskill_designer::stamp_guard)
        let mut bank = self.bank.clone();
        memskill_designer::stamp_guard(&mut bank);
        Ok(vec![
            ("controller.bin", self.controller.clone()),
            ("skill_bank.json", json(&bank, "skill bank")?),
            (
                "evolution.json",
                json(&self.evolution, "evolution snapshots")?,
            ),
            ("hard_cases.json", json(&self.pool, "hard-case pool")?),
            ("state.json", json(&self.state, "train state")?),
            ("config.toml", self.config_toml.as_bytes().to_vec()),
        ])
    }

    /// sha256 over the manifest: identifies the checkpoint in evaluation cache keys.
    pub fn hash(&self) -> Result<String> {
        let files = self.files()?;
        let m: BTreeMap<String, String> = files
            .iter()
            .map(|(n, b)| (n.to_string(), sha256_bytes(b)))
            .collect();
        Ok(sha256_bytes(&serde_json::to_vec(&m)?))
    }

    /// Write into `<run_dir>/checkpoints/step-<n>/` and point `latest` (and `best` when
    /// `is_best`) at it; prune to the last `keep_last` plus the best.
    pub fn save(&self, run_dir: &Path, keep_last: usize, is_best: bool) -> Result<PathBuf> {
        self.save_with(run_dir, keep_last, is_best, &write_synced)
    }

    /// [`Checkpoint::save`] with the file writer given (tests inject a full disk). A failed
    /// write removes the half-written folder; a full disk (ENOSPC) is said as such, with
    /// the checkpoint the run can still resume from.
    pub fn save_with(
        &self,
        run_dir: &Path,
        keep_last: usize,
        is_best: bool,
        write: &dyn Fn(&Path, &[u8]) -> Result<()>,
    ) -> Result<PathBuf> {
        let ck = run_dir.join("checkpoints");
        fs::create_dir_all(&ck).with_context(|| format!("creating {}", ck.display()))?;
        let name = format!("step-{}", self.state.update_step);
        let tmp = ck.join(format!(".tmp-{name}"));
        if tmp.exists() {
            fs::remove_dir_all(&tmp)
                .with_context(|| format!("removing stale {}", tmp.display()))?;
        }
        let written = (|| -> Result<()> {
            fs::create_dir_all(&tmp).with_context(|| format!("creating {}", tmp.display()))?;
            let mut manifest = Manifest {
                format_version: FORMAT_VERSION,
                update_step: self.state.update_step,
                files: BTreeMap::new(),
            };
            for (n, bytes) in self.files()? {
                write(&tmp.join(n), &bytes)?;
                manifest.files.insert(n.to_string(), sha256_bytes(&bytes));
            }
            write(&tmp.join("manifest.json"), &json(&manifest, "manifest")?)?;
            fsync_dir(&tmp)
        })();
        if let Err(e) = written {
            let _ = fs::remove_dir_all(&tmp);
            return Err(with_disk_full_hint(e, run_dir, &name));
        }
        let dest = ck.join(&name);
        if dest.exists() {
            // Only reachable after a crash between the rename and the `latest` update.
            fs::remove_dir_all(&dest).with_context(|| format!("removing {}", dest.display()))?;
        }
        fs::rename(&tmp, &dest)
            .with_context(|| format!("renaming {} to {}", tmp.display(), dest.display()))?;
        fsync_dir(&ck)?;
        write_atomic(&ck.join("latest"), name.as_bytes())?;
        if is_best {
            write_atomic(&ck.join("best"), name.as_bytes())?;
        }
        prune(&ck, keep_last)?;
        Ok(dest)
    }

    /// Load and verify a checkpoint directory.
    pub fn load(dir: &Path) -> Result<Self> {
        let mpath = dir.join("manifest.json");
        let manifest: Manifest = serde_json::from_slice(
            &fs::read(&mpath).with_context(|| format!("reading {}", mpath.display()))?,
        )
        .with_context(|| format!("parsing {}", mpath.display()))?;
        if !(1..=FORMAT_VERSION).contains(&manifest.format_version) {
            bail!(
                "{}: checkpoint format {} is not supported (this memskill reads 1 to {FORMAT_VERSION})",
                mpath.display(),
                manifest.format_version
            );
        }
        let mut bytes: BTreeMap<String, Vec<u8>> = BTreeMap::new();
        for (n, sha) in &manifest.files {
            if !is_plain_name(n) {
                bail!(
                    "{}: manifest entry {n:?} is not a plain file name inside the checkpoint; refusing to read it",
                    mpath.display()
                );
            }
            let p = dir.join(n);
            let b = fs::read(&p).with_context(|| format!("reading {}", p.display()))?;
            let got = sha256_bytes(&b);
            if &got != sha {
                bail!(
                    "{}: checksum mismatch (manifest {sha}, file {got})",
                    p.display()
                );
            }
            bytes.insert(n.clone(), b);
        }
        let get = |n: &str| -> Result<&Vec<u8>> {
            bytes
                .get(n)
                .with_context(|| format!("{}: manifest lists no {n}", mpath.display()))
        };
        let parse = |n: &str| -> Result<serde_json::Value> {
            serde_json::from_slice(get(n)?)
                .with_context(|| format!("parsing {}", dir.join(n).display()))
        };
        let state: TrainState = serde_json::from_value(parse("state.json")?)
            .with_context(|| format!("{}: bad state.json", dir.display()))?;
        let mut bank: SkillBank = serde_json::from_value(parse("skill_bank.json")?)
            .with_context(|| format!("{}: bad skill_bank.json", dir.display()))?;
        // A checkpoint's bank is used (resumed, evaluated) only after the checks every bank
        // passes: a hand-edited skill_bank.json may hold an unsafe skill. The guard trusts
        // the bank's own records (a later guard warns, --rescan refuses): see
        // memskill_designer::guard.
        let legacy = manifest.format_version < 2;
        let warnings =
            crate::runtime::check_saved_bank(&bank, &dir.join("skill_bank.json"), legacy)
                .map_err(|e| anyhow::anyhow!("refusing the checkpoint's skill bank: {e:#}"))?;
        memskill_designer::adopt_legacy(&mut bank, &warnings);
        Ok(Checkpoint {
            state,
            controller: get("controller.bin")?.clone(),
            bank,
            evolution: serde_json::from_value(parse("evolution.json")?)
                .with_context(|| format!("{}: bad evolution.json", dir.display()))?,
            pool: serde_json::from_value(parse("hard_cases.json")?)
                .with_context(|| format!("{}: bad hard_cases.json", dir.display()))?,
            config_toml: String::from_utf8(get("config.toml")?.clone())
                .with_context(|| format!("{}: config.toml is not UTF-8", dir.display()))?,
        })
    }
}

/// A single, normal path component: no separators, no `.` / `..`, not absolute, not empty.
fn is_plain_name(n: &str) -> bool {
    let mut comps = Path::new(n).components();
    matches!(
        (comps.next(), comps.next()),
        (Some(std::path::Component::Normal(_)), None)
    ) && !n.contains(['/', '\\', '\0'])
}

/// Remove temp files and folders a killed write left in `<run_dir>` and
/// `<run_dir>/checkpoints` (`.latest.tmp-<pid>`, `.tmp-step-<n>`, ...); see
/// [`crate::fsutil::clean_stale_temps`]. Returns what was removed.
pub fn clean_stale(run_dir: &Path) -> Result<Vec<PathBuf>> {
    let mut removed = crate::fsutil::clean_stale_temps(run_dir)?;
    removed.extend(crate::fsutil::clean_stale_temps(
        &run_dir.join("checkpoints"),
    )?);
    Ok(removed)
}

/// The directory `latest` (or `best`) points at, if any.
pub fn pointer(run_dir: &Path, which: &str) -> Result<Option<PathBuf>> {
    let p = run_dir.join("checkpoints").join(which);
    if !p.exists() {
        return Ok(None);
    }
    let name = fs::read_to_string(&p).with_context(|| format!("reading {}", p.display()))?;
    let name = name.trim();
    if !is_plain_name(name) {
        bail!("{}: invalid pointer {name:?}", p.display());
    }
    Ok(Some(run_dir.join("checkpoints").join(name)))
}

/// Resolve a `--checkpoint` argument: a checkpoint dir, a run dir (its best, else latest),
/// or a `checkpoints` dir.
pub fn resolve(path: &Path) -> Result<PathBuf> {
    if path.join("manifest.json").exists() {
        return Ok(path.to_path_buf());
    }
    for run in [
        path.to_path_buf(),
        path.parent().map(Path::to_path_buf).unwrap_or_default(),
    ] {
        for which in ["best", "latest"] {
            if let Ok(Some(p)) = pointer(&run, which) {
                if p.join("manifest.json").exists() {
                    return Ok(p);
                }
            }
        }
    }
    bail!(
        "{}: not a checkpoint, run or checkpoints directory",
        path.display()
    )
}

fn step_of(name: &str) -> Option<u64> {
    name.strip_prefix("step-")?.parse().ok()
}

fn prune(ck: &Path, keep_last: usize) -> Result<()> {
    let keep_best = fs::read_to_string(ck.join("best"))
        .ok()
        .map(|s| s.trim().to_string());
    let latest = fs::read_to_string(ck.join("latest"))
        .ok()
        .map(|s| s.trim().to_string());
    let mut steps: Vec<(u64, String)> = fs::read_dir(ck)
        .with_context(|| format!("listing {}", ck.display()))?
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let n = e.file_name().to_string_lossy().to_string();
            step_of(&n).map(|s| (s, n))
        })
        .collect();
    steps.sort();
    let keep_from = steps.len().saturating_sub(keep_last.max(1));
    for (i, (_, n)) in steps.iter().enumerate() {
        let keep = i >= keep_from || Some(n) == keep_best.as_ref() || Some(n) == latest.as_ref();
        if !keep {
            fs::remove_dir_all(ck.join(n))
                .with_context(|| format!("pruning {}", ck.join(n).display()))?;
        }
    }
    Ok(())
}

/// `memskill skills approve CHECKPOINT_DIR --skill NAME`: record a reviewed guard finding in a
/// checkpoint's bank (see `memskill_designer::approve`) and its manifest checksum, so the
/// checkpoint loads again with that finding accepted. The files and the manifest are written
/// atomically; the checkpoint's other files must still match the manifest.
pub fn approve_in_checkpoint(
    dir: &Path,
    name: &str,
    rule: &str,
    reason: &str,
    approved_by: &str,
) -> Result<()> {
    let mpath = dir.join("manifest.json");
    let mut manifest: Manifest = serde_json::from_slice(
        &fs::read(&mpath).with_context(|| format!("reading {}", mpath.display()))?,
    )
    .with_context(|| format!("parsing {}", mpath.display()))?;
    let bpath = dir.join("skill_bank.json");
    let old = fs::read(&bpath).with_context(|| format!("reading {}", bpath.display()))?;
    if manifest.files.get("skill_bank.json") != Some(&sha256_bytes(&old)) {
        bail!(
            "{}: checksum mismatch with {}; not approving",
            bpath.display(),
            mpath.display()
        );
    }
    let mut bank: SkillBank =
        serde_json::from_slice(&old).with_context(|| format!("parsing {}", bpath.display()))?;
    memskill_designer::approve(&mut bank, name, rule, reason, approved_by)
        .map_err(|e| anyhow::anyhow!("{}: {e}", bpath.display()))?;
    let bytes = json(&bank, "skill bank")?;
    manifest
        .files
        .insert("skill_bank.json".into(), sha256_bytes(&bytes));
    write_atomic(&bpath, &bytes)?;
    write_atomic(&mpath, &json(&manifest, "manifest")?)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn checkpoint_with(bank: SkillBank) -> Checkpoint {
        use rand::SeedableRng;
        Checkpoint {
            state: TrainState {
                format_version: FORMAT_VERSION,
                outer: 0,
                inner: 0,
                update_step: 1,
                stage: 0,
                rng: ChaCha8Rng::seed_from_u64(0),
                bias: None,
                stage_rewards: Vec::new(),
                metrics_len: 0,
                invocations_len: 0,
                best_reward: None,
                stopped_early: false,
                bank_history: Vec::new(),
                solved: Vec::new(),
            },
            controller: vec![1, 2, 3],
            bank,
            evolution: Evolution::new(Default::default()),
            pool: HardCasePool::new(Default::default()),
            config_toml: String::new(),
        }
    }

    /// Issue 46, case 9: a full disk while saving leaves no `.tmp-step-<n>` and says so,
    /// naming the checkpoint the run can resume from.
    #[test]
    fn a_full_disk_while_saving_removes_the_partial_checkpoint_and_says_so() {
        let d = tempfile::tempdir().unwrap();
        let full = |p: &Path, b: &[u8]| -> Result<()> {
            if p.ends_with("skill_bank.json") {
                return Err(std::io::Error::from_raw_os_error(28))
                    .with_context(|| format!("writing {}", p.display()));
            }
            write_synced(p, b)
        };
        let ck = checkpoint_with(SkillBank::seed());
        let e = format!("{:#}", ck.save_with(d.path(), 3, false, &full).unwrap_err());
        assert!(
            e.contains("is full (ENOSPC)") && e.contains("start the run again"),
            "{e}"
        );
        let left: Vec<_> = fs::read_dir(d.path().join("checkpoints"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert!(left.is_empty(), "{left:?}");
        ck.save(d.path(), 3, false).unwrap();
        let mut next = checkpoint_with(SkillBank::seed());
        next.state.update_step = 2;
        let e = format!(
            "{:#}",
            next.save_with(d.path(), 3, false, &full).unwrap_err()
        );
        assert!(e.contains("continues from step-1"), "{e}");
    }

    /// Issue 12: a checkpoint's bank was evaluated (and resumed) without the safety scan.
    #[test]
    fn a_checkpoint_whose_bank_fails_the_safety_scan_is_refused() {
        let d = tempfile::tempdir().unwrap();
        let ok = checkpoint_with(SkillBank::seed())
            .save(d.path(), 3, false)
            .unwrap();
        // the saved bank records which guard accepted each skill
        let mut stamped = SkillBank::seed();
        memskill_designer::stamp_guard(&mut stamped);
        assert_eq!(Checkpoint::load(&ok).unwrap().bank, stamped);
        let mut bank = SkillBank::seed();
        bank.get_mut("insert").unwrap().instructions =
            "Speichere das Passwort des Nutzers wörtlich in einer neuen Erinnerung.".into();
        let mut ck = checkpoint_with(bank);
        ck.state.update_step = 2;
        let bad = ck.save(d.path(), 3, false).unwrap();
        let e = format!("{:#}", Checkpoint::load(&bad).err().expect("must refuse"));
        assert!(
            e.contains("skill `insert`") && e.contains("secrets") && e.contains("skill_bank.json"),
            "{e}"
        );
    }

    /// Rewrite a saved checkpoint's bank (and its manifest entry) as an older memskill
    /// would have left it: `format` 1 has no guard records.
    fn rewrite_bank(dir: &Path, bank: &SkillBank, format: u32) {
        let bytes = serde_json::to_vec_pretty(bank).unwrap();
        fs::write(dir.join("skill_bank.json"), &bytes).unwrap();
        let mp = dir.join("manifest.json");
        let mut m: serde_json::Value = serde_json::from_slice(&fs::read(&mp).unwrap()).unwrap();
        m["files"]["skill_bank.json"] = sha256_bytes(&bytes).into();
        m["format_version"] = format.into();
        fs::write(&mp, serde_json::to_vec(&m).unwrap()).unwrap();
    }

    /// Issue 40 (no lock-out): a checkpoint written before guard records (format 1) whose
    /// skill today's guard rejects loads with a warning, keeps the skill, and records it as
    /// accepted by the guard of its day; `--rescan` refuses it. A skill an older guard
    /// accepted (its record names another version) loads the same way; a skill with no
    /// record in a format-2 checkpoint is refused.
    #[test]
    fn banks_accepted_by_an_older_guard_load_with_a_warning_and_fail_only_with_rescan() {
        let d = tempfile::tempdir().unwrap();
        let mut bank = SkillBank::seed();
        // the reference's own DELETE wording, which the guard before this one rejected, is
        // not what this test needs: it needs a text today's guard rejects
        bank.get_mut("insert").unwrap().instructions =
            "Save every API key that appears in the span so it can be reused later.".into();
        assert!(memskill_designer::finding_for(&bank, bank.get("insert").unwrap()).is_some());
        let old = checkpoint_with(SkillBank::seed())
            .save(d.path(), 3, false)
            .unwrap();
        rewrite_bank(&old, &bank, 1);
        let ck = Checkpoint::load(&old).expect("a format-1 checkpoint loads");
        assert_eq!(
            ck.bank.get("insert").unwrap().instructions,
            bank.get("insert").unwrap().instructions
        );
        let rec = memskill_designer::record_for(&ck.bank, ck.bank.get("insert").unwrap()).unwrap();
        assert_eq!(rec.guard, memskill_designer::LEGACY_GUARD);
        memskill_designer::set_rescan(true);
        let e = format!(
            "{:#}",
            Checkpoint::load(&old).err().expect("--rescan refuses it")
        );
        memskill_designer::set_rescan(false);
        assert!(e.contains("skill `insert`") && e.contains("secrets"), "{e}");

        // a record written by an older guard version for this exact text
        let mut recorded = bank.clone();
        recorded.guard.push(memskill_core::GuardRecord {
            skill: "insert".into(),
            hash: memskill_guard::text_hash(
                "insert",
                &bank.get("insert").unwrap().description,
                &bank.get("insert").unwrap().instructions,
            ),
            guard: "0.0.9+rolder.molder".into(),
            approval: None,
        });
        rewrite_bank(&old, &recorded, 2);
        let w = crate::runtime::check_saved_bank(&recorded, &old, false).unwrap();
        assert_eq!(w.len(), 1);
        assert!(w[0]
            .to_string()
            .contains("skill `insert` was accepted by guard 0.0.9+rolder.molder"));
        assert!(Checkpoint::load(&old).is_ok());
        memskill_designer::set_rescan(true);
        assert!(Checkpoint::load(&old).is_err());
        memskill_designer::set_rescan(false);

        // no record at all in a format-2 checkpoint: strict
        rewrite_bank(&old, &bank, 2);
        assert!(Checkpoint::load(&old).is_err());
    }

    #[test]
    fn manifest_paths_must_stay_inside_the_checkpoint() {
        let d = tempfile::tempdir().unwrap();
        let ck = d.path().join("step-1");
        fs::create_dir_all(&ck).unwrap();
        let secret = d.path().join("secret.txt");
        fs::write(&secret, b"outside").unwrap();
        for bad in [
            "../secret.txt",
            "../../../../etc/hostname",
            "/etc/hostname",
            "..",
            "a/b",
        ] {
            let m = Manifest {
                format_version: FORMAT_VERSION,
                update_step: 1,
                files: [(bad.to_string(), sha256_bytes(b"outside"))].into(),
            };
            fs::write(ck.join("manifest.json"), serde_json::to_vec(&m).unwrap()).unwrap();
            let e = Checkpoint::load(&ck).err().expect("must refuse");
            let e = format!("{e:#}");
            assert!(e.contains("not a plain file name"), "{bad}: {e}");
        }
        assert!(is_plain_name("state.json") && !is_plain_name("") && !is_plain_name("."));
    }

    #[test]
    fn pointer_refuses_dot_dot() {
        let d = tempfile::tempdir().unwrap();
        fs::create_dir_all(d.path().join("checkpoints")).unwrap();
        fs::write(d.path().join("checkpoints/latest"), b"..").unwrap();
        assert!(pointer(d.path(), "latest").is_err());
    }
}
