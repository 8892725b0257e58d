//! `memskill import-reference CKPT.pt --out RUN_DIR`: a checkpoint saved by the reference's
//! trainer (MemSkill cda41f3, `torch.save` of a dict) turned into a memskill run folder that
//! `memskill eval --checkpoint RUN_DIR` evaluates.
//!
//! Read from the checkpoint (nothing in it is executed, see [`pickle`]):
//! * `controller_state_dict`: the `PPOController` weights, loaded through
//!   `Controller::load_reference_state_dict` (the embedding size and hidden width come from
//!   the weight shapes);
//! * `operation_bank.operations`: one skill per operation (name, description, instruction
//!   template, update type, usage count / mean reward / recent rewards);
//!   `operation_bank_new_operation_names`: those are canaries (new), the others active;
//! * `total_steps` (PPO updates: the controller's update counter and the checkpoint's step),
//!   `completed_outer_epoch`, `new_action_bias_active` / `new_action_bias_step` (the new-skill
//!   bias, restarted so that it has `step` updates behind it), `stage_rewards`.
//!
//! The reference keeps no skill versions: every imported skill is 1.0.0 and its provenance
//! names the checkpoint and the operation. Operation names are made valid skill names
//! (lowercase, `_` and spaces to `-`); a name that still is not valid is an error.

pub mod pickle;
pub mod torch;

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use memskill_controller::{Controller, NamedTensor, NewSkillBias};
use memskill_core::{ActionKind, Skill, SkillBank, SkillStatus, UsageStats, Version};
use memskill_designer::{Evolution, HardCasePool};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use crate::checkpoint::{BankHistoryRow, Checkpoint, TrainState, FORMAT_VERSION};
use crate::config::Config;
use pickle::Id;
use torch::TorchFile;

/// Largest checkpoint file read (the reference's are tens of MB).
pub const MAX_CHECKPOINT_BYTES: u64 = 4 << 30;

/// One operation of the reference's operation bank.
#[derive(Debug, Clone, PartialEq)]
pub struct RefOperation {
    pub name: String,
    pub description: String,
    pub instruction_template: String,
    pub update_type: String,
    pub usage_count: u64,
    pub avg_reward: f64,
    pub recent_rewards: Vec<f64>,
    /// The description embedding the reference stored (its encoder's), if any.
    pub embedding: Option<Vec<f32>>,
}

/// What memskill takes from a reference checkpoint.
#[derive(Debug, Clone)]
pub struct ReferenceCheckpoint {
    /// Weights in the reference's `state_dict()` names and layout.
    pub state_dict: Vec<NamedTensor>,
    pub emb_dim: usize,
    pub hidden: usize,
    /// In the bank's order.
    pub operations: Vec<RefOperation>,
    pub new_operation_names: Vec<String>,
    pub total_steps: u64,
    pub completed_outer_epoch: u32,
    pub bias_active: bool,
    pub bias_step: u64,
    pub stage_rewards: Vec<f64>,
}

/// Reads `key` of the dict `id` with `f`, naming the key when it is missing or has another type.
fn field<T>(
    p: &pickle::Pickle,
    id: Id,
    key: &str,
    want: &str,
    f: impl Fn(Id) -> Option<T>,
) -> Result<T> {
    let v = p
        .get(id, key)
        .with_context(|| format!("missing key {key:?}"))?;
    f(v).with_context(|| format!("{key:?} is a {}, expected {want}", p.kind(v)))
}

/// `key` when present and not None, else `default`.
fn opt_field<T>(
    p: &pickle::Pickle,
    id: Id,
    key: &str,
    want: &str,
    default: T,
    f: impl Fn(Id) -> Option<T>,
) -> Result<T> {
    match p.get(id, key) {
        Some(v) if !matches!(p.node(v), pickle::Node::None) => {
            f(v).with_context(|| format!("{key:?} is a {}, expected {want}", p.kind(v)))
        }
        _ => Ok(default),
    }
}

fn floats(p: &pickle::Pickle, id: Id) -> Option<Vec<f64>> {
    p.items(id)?.iter().map(|&x| p.float(x)).collect()
}

impl ReferenceCheckpoint {
    /// Parses the bytes of a reference checkpoint (`what` names it in errors).
    pub fn parse(bytes: &[u8], what: &str) -> Result<Self> {
        let tf = TorchFile::open(bytes, what)?;
        let p = &tf.pickle;
        let root = p.root;
        if p.entries(root).is_none() {
            bail!("{what}: the checkpoint is a {}, not a dict", p.kind(root));
        }
        let state_dict = read_state_dict(&tf).with_context(|| what.to_string())?;
        let s1 = state_dict
            .iter()
            .find(|t| t.0 == "state_net.0.weight")
            .with_context(|| format!("{what}: controller_state_dict has no state_net.0.weight"))?;
        if s1.1.len() != 2 || s1.1[1] % 2 != 0 || s1.1[1] == 0 || s1.1[0] == 0 {
            bail!(
                "{what}: controller_state_dict.state_net.0.weight has shape {:?}, expected [hidden, 2 * embedding size]",
                s1.1
            );
        }
        let (hidden, emb_dim) = (s1.1[0], s1.1[1] / 2);
        let bank = p
            .get(root, "operation_bank")
            .with_context(|| format!("{what}: missing key \"operation_bank\""))?;
        let operations = read_operations(p, bank).with_context(|| what.to_string())?;
        let counters = read_counters(p, root).with_context(|| what.to_string())?;
        Ok(ReferenceCheckpoint {
            state_dict,
            emb_dim,
            hidden,
            operations,
            ..counters
        })
    }
}

/// The step counters, new-skill names and bias state of the checkpoint's root dict (the other
/// fields left empty).
fn read_counters(p: &pickle::Pickle, root: Id) -> Result<ReferenceCheckpoint> {
    let names = |i: Id| -> Option<Vec<String>> {
        p.items(i)?
            .iter()
            .map(|&x| p.str(x).map(str::to_string))
            .collect()
    };
    let uint = |i: Id| p.int(i).and_then(|v| u64::try_from(v).ok());
    let new_names = "operation_bank_new_operation_names";
    let nonneg = "an integer >= 0";
    Ok(ReferenceCheckpoint {
        state_dict: Vec::new(),
        emb_dim: 0,
        hidden: 0,
        operations: Vec::new(),
        new_operation_names: opt_field(p, root, new_names, "a list of names", Vec::new(), names)?,
        total_steps: field(p, root, "total_steps", nonneg, uint)?,
        completed_outer_epoch: opt_field(p, root, "completed_outer_epoch", nonneg, 0, |i| {
            uint(i).and_then(|v| u32::try_from(v).ok())
        })?,
        bias_active: opt_field(p, root, "new_action_bias_active", "a bool", false, |i| {
            p.bool(i)
        })?,
        bias_step: opt_field(p, root, "new_action_bias_step", nonneg, 0, uint)?,
        stage_rewards: opt_field(
            p,
            root,
            "stage_rewards",
            "a list of numbers",
            Vec::new(),
            |i| floats(p, i),
        )?,
    })
}

/// `controller_state_dict`: every float tensor, in the dict's order.
fn read_state_dict(tf: &TorchFile) -> Result<Vec<NamedTensor>> {
    let p = &tf.pickle;
    let sd = p
        .get(p.root, "controller_state_dict")
        .context("missing key \"controller_state_dict\"")?;
    let entries = p.entries(sd).with_context(|| {
        format!(
            "\"controller_state_dict\" is a {}, expected a dict",
            p.kind(sd)
        )
    })?;
    entries
        .into_iter()
        .map(|(name, id)| {
            let t = tf.tensor(id, &format!("controller_state_dict.{name}"))?;
            Ok((name.to_string(), t.shape, t.data))
        })
        .collect()
}

/// `operation_bank.operations` (a dict name -> operation dict).
fn read_operations(p: &pickle::Pickle, bank: Id) -> Result<Vec<RefOperation>> {
    let ops = p
        .get(bank, "operations")
        .context("missing key \"operation_bank.operations\"")?;
    let entries = p.entries(ops).with_context(|| {
        format!(
            "\"operation_bank.operations\" is a {}, expected a dict",
            p.kind(ops)
        )
    })?;
    let text = |i: Id| p.str(i).map(str::to_string);
    entries
        .into_iter()
        .map(|(key, op)| {
            let at = || format!("operation_bank.operations[{key:?}]");
            let meta = p.get(op, "meta_info");
            let m = |k: &str| meta.and_then(|m| p.get(m, k));
            let embedding = match p.get(op, "embedding") {
                Some(e) if !matches!(p.node(e), pickle::Node::None) => Some(
                    floats(p, e)
                        .with_context(|| {
                            format!("{}: \"embedding\" is not a list of numbers", at())
                        })?
                        .into_iter()
                        .map(|x| x as f32)
                        .collect(),
                ),
                _ => None,
            };
            Ok(RefOperation {
                name: field(p, op, "name", "a string", text).with_context(at)?,
                description: field(p, op, "description", "a string", text).with_context(at)?,
                instruction_template: field(p, op, "instruction_template", "a string", text)
                    .with_context(at)?,
                update_type: field(p, op, "update_type", "a string", text).with_context(at)?,
                usage_count: m("usage_count").and_then(|i| p.int(i)).unwrap_or(0).max(0) as u64,
                avg_reward: m("avg_reward").and_then(|i| p.float(i)).unwrap_or(0.0),
                recent_rewards: m("recent_rewards")
                    .and_then(|i| floats(p, i))
                    .unwrap_or_default(),
                embedding,
            })
        })
        .collect()
}

/// A reference operation name as a memskill skill name: lowercase, `_` / spaces to `-`
/// ([`memskill_designer::reference_bank::reference_skill_name`], which released files use too).
pub fn skill_name(name: &str) -> Result<String> {
    memskill_designer::reference_bank::reference_skill_name(name)
        .map_err(|e| anyhow::anyhow!("operation {name:?} has no valid skill name: {e}"))
}

/// The operations as a skill bank (new operations are canaries, the others active).
pub fn to_bank(ck: &ReferenceCheckpoint, source: &str) -> Result<SkillBank> {
    let mut skills = Vec::with_capacity(ck.operations.len());
    for op in &ck.operations {
        let action: ActionKind = op.update_type.parse().with_context(|| {
            format!("operation {:?}: update_type {:?}", op.name, op.update_type)
        })?;
        let new = ck.new_operation_names.contains(&op.name);
        let mut usage = UsageStats {
            count: op.usage_count,
            mean_reward: op.avg_reward,
            recent_rewards: op.recent_rewards.clone(),
        };
        let excess = usage
            .recent_rewards
            .len()
            .saturating_sub(UsageStats::RECENT);
        usage.recent_rewards.drain(..excess);
        skills.push(Skill {
            name: skill_name(&op.name)?,
            description: op.description.clone(),
            instructions: op.instruction_template.clone(),
            action,
            version: Version::new(1, 0, 0),
            status: if new {
                SkillStatus::Canary
            } else {
                SkillStatus::Active
            },
            provenance: vec![format!(
                "reference checkpoint {source}: operation {}",
                op.name
            )],
            usage,
            risk: None,
        });
    }
    let mut bank = SkillBank::from_skills(skills).context("building the skill bank")?;
    bank.bank_version = ck.completed_outer_epoch;
    Ok(bank)
}

/// The reference's controller as a memskill controller (update counter = `total_steps`).
pub fn to_controller(ck: &ReferenceCheckpoint, cfg: &Config) -> Result<Controller> {
    let mut policy = cfg.policy.clone();
    policy.hidden = ck.hidden;
    let mut c = Controller::new(ck.emb_dim, &policy, &cfg.ppo, cfg.run.seed)?;
    c.load_reference_state_dict(&ck.state_dict)
        .context("loading controller_state_dict")?;
    c.set_updates(ck.total_steps);
    Ok(c)
}

/// The memskill checkpoint of a reference checkpoint, with `cfg` (its `policy.hidden` set to
/// the weights' width) as its config.
pub fn to_checkpoint(ck: &ReferenceCheckpoint, cfg: &Config, source: &str) -> Result<Checkpoint> {
    let mut cfg = cfg.clone();
    cfg.policy.hidden = ck.hidden;
    let bank = to_bank(ck, source)?;
    let controller = to_controller(ck, &cfg)?;
    let sel = bank.selectable();
    let mask: Vec<bool> = sel
        .iter()
        .map(|s| s.status == SkillStatus::Canary)
        .collect();
    let bias = (ck.bias_active && mask.iter().any(|&m| m))
        .then(|| NewSkillBias::new(mask, ck.total_steps.saturating_sub(ck.bias_step), &cfg.bias));
    let row = BankHistoryRow {
        stage: ck.completed_outer_epoch,
        update_step: ck.total_steps,
        reward: None,
        event: "start".into(),
        bank_version: bank.bank_version,
        skills: bank
            .skills()
            .iter()
            .map(|s| format!("{}@{} ({})", s.name, s.version, s.status))
            .collect(),
        note: format!("imported from the reference checkpoint {source}"),
    };
    Ok(Checkpoint {
        state: TrainState {
            format_version: FORMAT_VERSION,
            outer: ck.completed_outer_epoch,
            inner: 0,
            update_step: ck.total_steps,
            stage: ck.completed_outer_epoch,
            rng: ChaCha8Rng::seed_from_u64(cfg.run.seed),
            bias,
            stage_rewards: ck.stage_rewards.clone(),
            metrics_len: 0,
            invocations_len: 0,
            best_reward: None,
            stopped_early: false,
            bank_history: vec![row],
            solved: Vec::new(),
        },
        controller: controller.save_bytes()?,
        bank,
        evolution: Evolution::new(cfg.evolution.clone()),
        pool: HardCasePool::new(cfg.pool.clone()),
        config_toml: cfg.to_toml()?,
    })
}

/// What [`import`] wrote.
#[derive(Debug, Clone)]
pub struct Imported {
    /// The checkpoint directory.
    pub dir: PathBuf,
    pub emb_dim: usize,
    pub hidden: usize,
    pub skills: usize,
    /// Skills the reference marked new (canaries).
    pub new_skills: usize,
}

/// `memskill import-reference`: reads `ckpt`, writes the run folder `out` (its config from
/// `config_path` with `sets`, the run named after the folder). Refuses a folder that already
/// holds checkpoints.
pub fn import(ckpt: &Path, out: &Path, config_path: &Path, sets: &[String]) -> Result<Imported> {
    let what = ckpt.display().to_string();
    let bytes =
        memskill_core::fsio::read_user_file(ckpt, MAX_CHECKPOINT_BYTES, "reference checkpoint")?;
    let ck = ReferenceCheckpoint::parse(&bytes, &what)?;
    let mut cfg = Config::load(config_path, sets)?;
    if let Some(name) = out.file_name().and_then(|n| n.to_str()) {
        cfg.run.name = name.to_string();
    }
    if crate::checkpoint::pointer(out, "latest")?.is_some() {
        bail!(
            "{}: already holds checkpoints; choose another --out",
            out.display()
        );
    }
    let source = ckpt
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| what.clone());
    let checkpoint = to_checkpoint(&ck, &cfg, &source)?;
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    crate::fsutil::write_atomic(&out.join("config.toml"), checkpoint.config_toml.as_bytes())?;
    let new_skills = checkpoint
        .bank
        .skills()
        .iter()
        .filter(|s| s.status == SkillStatus::Canary)
        .count();
    Ok(Imported {
        dir: checkpoint.save(out, 1, true)?,
        emb_dim: ck.emb_dim,
        hidden: ck.hidden,
        skills: checkpoint.bank.skills().len(),
        new_skills,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::{evaluate, EvalOptions};

    fn root() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
    }

    /// The fixture's first checkpoint (saved by the reference's own classes, with a new
    /// operation and the bias active) and its expected values.
    fn fixture() -> (Vec<u8>, serde_json::Value) {
        let p = root().join("trainer/tests/fixtures/fidelity/reference_checkpoint.json");
        let v: serde_json::Value =
            serde_json::from_slice(&std::fs::read(p).expect("fixture")).unwrap();
        let case = v["cases"][0].clone();
        let hex_text = case["input"]["checkpoint_hex"].as_str().unwrap();
        (hex::decode(hex_text).unwrap(), case)
    }

    /// The checkpoint's controller gives the fixture's logits on its first state.
    fn assert_reference_logits(ck: &Checkpoint, bytes: &[u8], case: &serde_json::Value) {
        let cfg = Config::from_toml_str(&ck.config_toml, &[], "ck").unwrap();
        let mut c = Controller::new(64, &cfg.policy, &cfg.ppo, 1).unwrap();
        c.load_bytes(&ck.controller).unwrap();
        let rc = ReferenceCheckpoint::parse(bytes, "ref.pt").unwrap();
        let names: Vec<&str> = case["expected"]["operations"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| o["name"].as_str().unwrap())
            .collect();
        let embs: Vec<Vec<f32>> = names
            .iter()
            .map(|n| {
                rc.operations
                    .iter()
                    .find(|o| o.name == *n)
                    .unwrap()
                    .embedding
                    .clone()
                    .unwrap()
            })
            .collect();
        let state: Vec<f32> = case["input"]["states"][0]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap() as f32)
            .collect();
        let ours = c.logits(&state, &embs).unwrap();
        for (o, t) in ours
            .iter()
            .zip(case["expected"]["logits"][0].as_array().unwrap())
        {
            assert!(
                (*o as f64 - t.as_f64().unwrap()).abs() <= 1e-5,
                "{o} vs {t}"
            );
        }
    }

    #[test]
    fn an_imported_reference_checkpoint_is_evaluated_from_its_run_folder() {
        let (bytes, case) = fixture();
        let d = tempfile::tempdir().unwrap();
        let pt = d.path().join("ref.pt");
        std::fs::write(&pt, &bytes).unwrap();
        let run = d.path().join("imported");
        let cfg = root().join("configs/synthetic.toml");
        let imported = import(&pt, &run, &cfg, &[]).unwrap();
        assert_eq!(
            (
                imported.emb_dim,
                imported.hidden,
                imported.skills,
                imported.new_skills
            ),
            (64, 8, 5, 1)
        );
        // The fixture's placeholder cards ("Placeholder skill one: keeps facts the chunk
        // adds. Placeholder card one. ...") are known false rejections of the guard's
        // classifier, which reads "placeholder" as a sign of overwritten secrets or history
        // (p 0.96; docs/safety.md): the import refuses them by name, and the documented way
        // past them, an approval with a name per finding, makes the run evaluable.
        let e = format!(
            "{:#}",
            Checkpoint::load(&imported.dir).err().expect("refused")
        );
        assert!(e.contains("skill `") && e.contains("rule learned"), "{e}");
        let bank: SkillBank =
            serde_json::from_slice(&std::fs::read(imported.dir.join("skill_bank.json")).unwrap())
                .unwrap();
        for sk in bank.skills() {
            if let Some(f) = memskill_designer::finding_for(&bank, sk) {
                crate::checkpoint::approve_in_checkpoint(
                    &imported.dir,
                    &sk.name,
                    f.rule.id(),
                    "placeholder text of the test fixture",
                    "memskill tests",
                )
                .unwrap();
            }
        }
        let ck = Checkpoint::load(&imported.dir).unwrap();
        assert_eq!(ck.state.update_step, 40);
        assert_eq!(
            ck.bank.get("track-dates").unwrap().status,
            SkillStatus::Canary
        );
        let bias = ck
            .state
            .bias
            .as_ref()
            .expect("bias active in the reference");
        assert_eq!(
            (bias.start_update, &bias.new_mask[..]),
            (35, &[false, false, false, true, false][..])
        );
        // the controller written to disk gives the reference's logits
        assert_reference_logits(&ck, &bytes, &case);
        let (res, out) = evaluate(&EvalOptions {
            checkpoint: run.clone(),
            out: Some(d.path().join("eval")),
            sets: vec!["eval.judge=true".into()],
            ..Default::default()
        })
        .unwrap();
        assert!(
            res.overall.count > 0 && out.join("results.json").is_file(),
            "{}",
            res.error_line()
        );
        assert_eq!(
            res.overall.judge_errors, 0,
            "the scripted oracle judges every answer"
        );
        // the judge is recorded (synthetic.toml has no [reward.judge]: the executor judges)
        assert_eq!(res.judge_model.as_deref(), Some("scripted-synthetic"));
        assert!(!res.judge_is_reference, "{:?}", res.overall);
        // a second import into the same folder is refused, the first kept
        let e = import(&pt, &run, &root().join("configs/synthetic.toml"), &[]).unwrap_err();
        assert!(
            format!("{e:#}").contains("already holds checkpoints"),
            "{e:#}"
        );
    }

    #[test]
    fn missing_keys_wrong_shapes_and_non_checkpoints_are_named() {
        let (bytes, _) = fixture();
        let e = ReferenceCheckpoint::parse(b"not a zip", "x.pt")
            .err()
            .unwrap();
        assert!(format!("{e:#}").contains("x.pt: not a torch zip"), "{e:#}");
        // rename the key `total_steps` in the parsed graph
        let tf = TorchFile::open(&bytes, "ref.pt").unwrap();
        let mut p = tf.pickle.clone();
        for n in p.nodes.iter_mut() {
            if *n == pickle::Node::Str("total_steps".into()) {
                *n = pickle::Node::Str("steps".into());
            }
        }
        let e = read_counters(&p, p.root).err().unwrap();
        assert!(
            format!("{e:#}").contains("missing key \"total_steps\""),
            "{e:#}"
        );
        // a weight dropped / reshaped
        let mut rc = ReferenceCheckpoint::parse(&bytes, "ref.pt").unwrap();
        let cfg = Config::default();
        rc.state_dict.retain(|t| t.0 != "actor_head.2.bias");
        let e = to_controller(&rc, &cfg).err().unwrap();
        assert!(
            format!("{e:#}").contains("missing actor_head.2.bias"),
            "{e:#}"
        );
        let mut rc = ReferenceCheckpoint::parse(&bytes, "ref.pt").unwrap();
        rc.state_dict
            .iter_mut()
            .find(|t| t.0 == "op_net.0.weight")
            .unwrap()
            .1 = vec![64, 8];
        let e = to_controller(&rc, &cfg).err().unwrap();
        assert!(
            format!("{e:#}").contains("op_net.0.weight has shape [64, 8]"),
            "{e:#}"
        );
        // operation names become skill names, or are refused
        assert_eq!(skill_name("Track_Dates now").unwrap(), "track-dates-now");
        assert!(skill_name("__").is_err() && skill_name("dates/../x").is_err());
        // a FIFO is refused by the shared reader
        let d = tempfile::tempdir().unwrap();
        let fifo = d.path().join("f.pt");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: mkfifo on a path we own.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let e = import(
            &fifo,
            &d.path().join("r"),
            &root().join("configs/synthetic.toml"),
            &[],
        );
        assert!(format!("{:#}", e.unwrap_err()).contains("not a regular file"));
    }
}
