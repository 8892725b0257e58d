//! Experiment tracking (`[tracking]`): TensorBoard event files inside the run (`<run>/tb`),
//! an MLflow tracking server through its REST API, and W&B through a sidecar Python process
//! running the `wandb` package (`wandb.rs`). All are off by default.
//!
//! Tracking never stops training: a sink that fails warns once on stderr, counts its
//! failures and keeps being tried. A resumed run appends; a step a sink already holds (the
//! steps after the checkpoint that a stopped run had logged, which the deterministic resume
//! logs again with the same values) is not written twice.
//!
//! What is logged is derived from the `metrics.jsonl` lines ([`scalars`]): every numeric
//! field of an update line as `train/<field>` at the update step, of a stage line as
//! `stage/<field>` at the update step it ended; the skill-bank table (`skills.md`) as text
//! after each designer stage; the resolved config as hparams and params.

mod mlflow;
pub mod tfevents;
pub mod wandb;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use mlflow::MlflowSink;
use tfevents::{EventWriter, HValue, Payload};
pub use wandb::WandbSink;

/// `[tracking]`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct TrackingConfig {
    /// Write TensorBoard event files into `<run>/tb`.
    pub tensorboard: bool,
    /// An MLflow tracking server (`http://host:port`); absent = off.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mlflow: Option<String>,
    /// The MLflow experiment (created when missing); absent = the run's dataset
    /// (`memskill-<dataset>`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mlflow_experiment: Option<String>,
    /// Log live to W&B through a sidecar Python process with the `wandb` package
    /// (`WANDB_MODE`, `WANDB_API_KEY` and W&B's other variables apply).
    pub wandb: bool,
    /// The W&B project; absent = the run's dataset (`memskill-<dataset>`).
    pub wandb_project: Option<String>,
    /// The W&B entity (user or team); absent = W&B's default for the API key.
    pub wandb_entity: Option<String>,
    /// The Python that runs the sidecar; absent = `$MEMSKILL_WANDB_PYTHON`, else the
    /// tracking venv (`scripts/tracking/setup.sh`), else `python3`.
    pub wandb_python: Option<PathBuf>,
}

impl TrackingConfig {
    /// Nothing to track (the section is then left out of the saved config, so runs from
    /// before it resume as they were).
    pub fn is_off(&self) -> bool {
        !self.tensorboard && self.mlflow.is_none() && !self.wandb
    }

    /// Every key of the section, for the unknown-key check.
    pub fn all_keys() -> toml::Table {
        let mut t = toml::Table::new();
        t.insert("tensorboard".into(), false.into());
        t.insert("mlflow".into(), "".into());
        t.insert("mlflow_experiment".into(), "".into());
        t.insert("wandb".into(), false.into());
        t.insert("wandb_project".into(), "".into());
        t.insert("wandb_entity".into(), "".into());
        t.insert("wandb_python".into(), "".into());
        t
    }

    /// The W&B names, checked: a project or entity W&B would refuse fails at load, with
    /// the key named, not hours later in the sidecar.
    pub fn validate(&self) -> anyhow::Result<()> {
        for (key, v) in [
            ("tracking.wandb_project", &self.wandb_project),
            ("tracking.wandb_entity", &self.wandb_entity),
        ] {
            if let Some(v) = v {
                if v.trim().is_empty()
                    || v.len() > 128
                    || v.contains(['/', '\\', '#', '?', '%', ':'])
                {
                    anyhow::bail!(
                        "{key} = {v:?}: expected a W&B name (1 to 128 characters, none of / \\ # ? % :)"
                    );
                }
            }
        }
        if self
            .wandb_python
            .as_ref()
            .is_some_and(|p| p.as_os_str().is_empty())
        {
            anyhow::bail!("tracking.wandb_python is empty: leave it out for the default");
        }
        Ok(())
    }
}

/// A line the tracker logs (a line of `metrics.jsonl`): its fields are its JSON object's.
pub trait Tracked: Serialize {
    /// The group its scalars are logged under (`train` / `stage`) and the step they are
    /// logged at.
    fn group_and_step(&self) -> (&'static str, u64);
}

/// The scalars of a metrics line: its group (`train` / `stage`), the step to log them at,
/// and every finite numeric (or boolean, as 0/1) field, nested fields joined by `/`.
pub fn scalars(line: &impl Tracked) -> (&'static str, u64, Vec<(String, f64)>) {
    let (group, step) = line.group_and_step();
    let mut out = Vec::new();
    if let Ok(Value::Object(map)) = serde_json::to_value(line) {
        for (k, v) in &map {
            if k != "step" && k != "type" {
                flatten(&format!("{group}/{k}"), v, &mut out);
            }
        }
    }
    (group, step, out)
}

fn flatten(prefix: &str, v: &Value, out: &mut Vec<(String, f64)>) {
    match v {
        Value::Number(n) => {
            if let Some(x) = n.as_f64().filter(|x| x.is_finite()) {
                out.push((prefix.to_string(), x));
            }
        }
        Value::Bool(b) => out.push((prefix.to_string(), *b as u8 as f64)),
        Value::Object(m) => {
            for (k, v) in m {
                flatten(&format!("{prefix}/{k}"), v, out);
            }
        }
        _ => {}
    }
}

/// The resolved config (its TOML) as flat `section.key` parameters: scalars as they are,
/// arrays and tables below the first level as their TOML text.
pub fn params(config_toml: &str) -> BTreeMap<String, HValue> {
    let mut out = BTreeMap::new();
    let Ok(table) = config_toml.parse::<toml::Table>() else {
        return out;
    };
    fn walk(prefix: &str, v: &toml::Value, out: &mut BTreeMap<String, HValue>) {
        let hv = match v {
            toml::Value::Table(t) => {
                for (k, v) in t {
                    let key = if prefix.is_empty() {
                        k.clone()
                    } else {
                        format!("{prefix}.{k}")
                    };
                    walk(&key, v, out);
                }
                return;
            }
            toml::Value::Integer(i) => HValue::Number(*i as f64),
            toml::Value::Float(f) => HValue::Number(*f),
            toml::Value::Boolean(b) => HValue::Bool(*b),
            toml::Value::String(s) => HValue::Text(s.clone()),
            other => HValue::Text(other.to_string()),
        };
        out.insert(prefix.to_string(), hv);
    }
    walk("", &toml::Value::Table(table), &mut out);
    out
}

/// One sink's failures: the first warns, all are counted.
#[derive(Debug, Default)]
struct Failures {
    what: &'static str,
    count: u64,
}

impl Failures {
    fn record(&mut self, e: anyhow::Error) {
        if self.count == 0 {
            eprintln!(
                "warning: {} tracking failed (training goes on; later failures are counted): {e:#}",
                self.what
            );
        }
        self.count += 1;
    }
}

/// The TensorBoard sink.
struct TbSink {
    writer: Option<EventWriter>,
    dir: PathBuf,
    /// Per tag group, the highest step already in the run's event files.
    done: BTreeMap<String, u64>,
}

impl TbSink {
    fn open(run_dir: &Path) -> anyhow::Result<Self> {
        let dir = run_dir.join("tb");
        let done = tfevents::max_steps(&dir)?;
        Ok(Self {
            writer: None,
            dir,
            done,
        })
    }

    fn fresh(&self, group: &str, step: u64) -> bool {
        self.done.get(group).is_none_or(|&d| step > d)
    }

    fn write(
        &mut self,
        group: &str,
        step: u64,
        values: &[(String, Payload)],
    ) -> anyhow::Result<()> {
        if !self.fresh(group, step) {
            return Ok(());
        }
        if self.writer.is_none() {
            self.writer = Some(EventWriter::create(&self.dir)?);
        }
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default()
            .as_secs_f64();
        let w = self.writer.as_mut().expect("opened above");
        w.write_event(&tfevents::summary_event(now, step, values))?;
        self.done.insert(group.to_string(), step);
        Ok(())
    }
}

/// The run's tracking sinks.
pub struct Tracker {
    tb: Option<(TbSink, Failures)>,
    mlflow: Option<(MlflowSink, Failures)>,
    wandb: Option<(WandbSink, Failures)>,
    /// The MLflow run was given its end status (a tracker dropped without one, by an error,
    /// marks it FAILED).
    ended: bool,
}

impl Tracker {
    /// No sink at all.
    pub fn off() -> Self {
        Self {
            tb: None,
            mlflow: None,
            wandb: None,
            ended: false,
        }
    }

    /// Open the configured sinks for the run in `run_dir` (named `run_name`), logging the
    /// resolved config once per sink (a resumed run does not log it again). A fresh run
    /// (`resume` false) first drops what a run of the same name that never reached a
    /// checkpoint left in `tb/` and `mlflow.json`, as it empties `metrics.jsonl`.
    pub fn open(
        cfg: &TrackingConfig,
        resume: bool,
        run_dir: &Path,
        run_name: &str,
        default_experiment: &str,
        config_toml: &str,
    ) -> Self {
        let mut t = Self::off();
        if !resume {
            if let Err(e) = forget_previous(run_dir) {
                eprintln!("warning: tracking: {e:#}");
            }
        }
        let p = params(config_toml);
        if cfg.tensorboard {
            let mut f = Failures {
                what: "TensorBoard",
                count: 0,
            };
            match TbSink::open(run_dir) {
                Ok(mut sink) => {
                    let values = vec![
                        (
                            "_hparams_/session_start_info".to_string(),
                            Payload::Hparams(p.clone()),
                        ),
                        (
                            "config/resolved".to_string(),
                            Payload::Text(fenced(config_toml)),
                        ),
                    ];
                    if let Err(e) = sink.write("config", 0, &values) {
                        f.record(e);
                    }
                    t.tb = Some((sink, f));
                }
                Err(e) => f.record(e),
            }
        }
        if let Some(uri) = &cfg.mlflow {
            let mut f = Failures {
                what: "MLflow",
                count: 0,
            };
            let exp = cfg
                .mlflow_experiment
                .as_deref()
                .unwrap_or(default_experiment);
            match MlflowSink::open(uri, exp, run_dir, run_name, &p) {
                Ok(sink) => t.mlflow = Some((sink, f)),
                Err(e) => f.record(e),
            }
        }
        if cfg.wandb {
            let mut f = Failures {
                what: "W&B",
                count: 0,
            };
            let project = cfg.wandb_project.as_deref().unwrap_or(default_experiment);
            match WandbSink::open(cfg, project, run_dir, run_name, &p) {
                Ok(sink) => t.wandb = Some((sink, f)),
                Err(e) => f.record(e),
            }
        }
        t
    }

    /// Log a metrics line.
    pub fn log(&mut self, line: &impl Tracked) {
        if self.tb.is_none() && self.mlflow.is_none() && self.wandb.is_none() {
            return;
        }
        let (group, step, values) = scalars(line);
        if let Some((sink, f)) = &mut self.tb {
            let vals: Vec<_> = values
                .iter()
                .map(|(k, v)| (k.clone(), Payload::Scalar(*v as f32)))
                .collect();
            if let Err(e) = sink.write(group, step, &vals) {
                f.record(e);
            }
        }
        if let Some((sink, f)) = &mut self.mlflow {
            if let Err(e) = sink.log_metrics(group, step, &values) {
                f.record(e);
            }
        }
        if let Some((sink, f)) = &mut self.wandb {
            if let Err(e) = sink.log_scalars(group, step, &values) {
                f.record(e);
            }
        }
    }

    /// Log an evaluation's scores (`eval/<label>/<key>`) at the evaluated checkpoint's step;
    /// a label is logged once per step.
    pub fn log_eval(&mut self, label: &str, step: u64, values: &[(String, f64)]) {
        let group = format!("eval/{label}");
        let named: Vec<(String, f64)> = values
            .iter()
            .filter(|(_, v)| v.is_finite())
            .map(|(k, v)| (format!("{group}/{k}"), *v))
            .collect();
        if let Some((sink, f)) = &mut self.tb {
            let vals: Vec<_> = named
                .iter()
                .map(|(k, v)| (k.clone(), Payload::Scalar(*v as f32)))
                .collect();
            if let Err(e) = sink.write(&group, step, &vals) {
                f.record(e);
            }
        }
        if let Some((sink, f)) = &mut self.mlflow {
            if let Err(e) = sink.log_metrics(&group, step, &named) {
                f.record(e);
            }
        }
        if let Some((sink, f)) = &mut self.wandb {
            if let Err(e) = sink.log_scalars(&group, step, &named) {
                f.record(e);
            }
        }
    }

    /// Log the skill-bank table after a designer stage, at the update step it ended.
    pub fn log_bank(&mut self, step: u64, skills_md: &str) {
        if let Some((sink, f)) = &mut self.tb {
            let vals = [(
                "bank/skills".to_string(),
                Payload::Text(skills_md.to_string()),
            )];
            if let Err(e) = sink.write("bank", step, &vals) {
                f.record(e);
            }
        }
        if let Some((sink, f)) = &mut self.wandb {
            if let Err(e) = sink.log_text("bank", step, "bank/skills", skills_md) {
                f.record(e);
            }
        }
    }

    /// Upload the run's artifacts (MLflow) and mark the run finished.
    pub fn finish(&mut self, artifacts: &[PathBuf]) {
        if let Some((sink, f)) = &mut self.mlflow {
            for a in artifacts {
                if let Err(e) = sink.upload(a) {
                    f.record(e);
                }
            }
            if let Err(e) = sink.end("FINISHED") {
                f.record(e);
            }
        }
        if let Some((sink, f)) = &mut self.wandb {
            if let Some(base) = artifacts.first().and_then(|a| a.parent()) {
                if let Err(e) = sink.save(base, artifacts) {
                    f.record(e);
                }
            }
            if let Err(e) = sink.end("FINISHED") {
                f.record(e);
            }
        }
        self.ended = true;
    }

    /// Mark the MLflow and W&B runs ended with `status` while the run itself pauses
    /// (`FINISHED` at `--max-updates`, `KILLED` on a signal: W&B's preempted); `--resume`
    /// continues them.
    pub fn end(&mut self, status: &str) {
        if let Some((sink, f)) = &mut self.mlflow {
            if let Err(e) = sink.end(status) {
                f.record(e);
            }
        }
        if let Some((sink, f)) = &mut self.wandb {
            if let Err(e) = sink.end(status) {
                f.record(e);
            }
        }
        self.ended = true;
    }

    /// Failed writes per sink (for the run's summary).
    pub fn failures(&self) -> Vec<(&'static str, u64)> {
        let mut out = Vec::new();
        if let Some((_, f)) = &self.tb {
            out.push((f.what, f.count));
        }
        if let Some((_, f)) = &self.mlflow {
            out.push((f.what, f.count));
        }
        if let Some((_, f)) = &self.wandb {
            out.push((f.what, f.count));
        }
        out
    }
}

impl Drop for Tracker {
    /// A run stopped by an error: its MLflow and W&B runs are marked FAILED, not left
    /// running.
    fn drop(&mut self) {
        if !self.ended && (self.mlflow.is_some() || self.wandb.is_some()) {
            self.end("FAILED");
        }
    }
}

/// Remove the event files in `<run>/tb`, `<run>/mlflow.json` and `<run>/wandb.json` (a
/// fresh start: a new MLflow run, a new W&B run id).
fn forget_previous(run_dir: &Path) -> anyhow::Result<()> {
    use anyhow::Context;
    let tb = run_dir.join("tb");
    if let Ok(rd) = std::fs::read_dir(&tb) {
        for e in rd {
            let p = e
                .with_context(|| format!("listing {}", tb.display()))?
                .path();
            let name = p
                .file_name()
                .unwrap_or_default()
                .to_string_lossy()
                .into_owned();
            if name.starts_with("events.out.tfevents.") {
                std::fs::remove_file(&p).with_context(|| format!("removing {}", p.display()))?;
            }
        }
    }
    for name in ["mlflow.json", "wandb.json"] {
        let r = run_dir.join(name);
        match std::fs::remove_file(&r) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(e).with_context(|| format!("removing {}", r.display()));
            }
            _ => {}
        }
    }
    Ok(())
}

/// TOML shown as a Markdown code block (TensorBoard renders text as Markdown).
fn fenced(text: &str) -> String {
    format!("```toml\n{text}\n```")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn params_flatten_the_config() {
        let p = params(
            "[run]\nname = \"x\"\nbatch_size = 4\n[ppo]\nlr = 0.001\nnorm = true\nl = [1, 2]\n",
        );
        assert_eq!(p.get("run.name"), Some(&HValue::Text("x".into())));
        assert_eq!(p.get("run.batch_size"), Some(&HValue::Number(4.0)));
        assert_eq!(p.get("ppo.norm"), Some(&HValue::Bool(true)));
        assert_eq!(p.get("ppo.l"), Some(&HValue::Text("[1, 2]".into())));
        assert!(params("not toml [").is_empty());
    }

    #[test]
    fn wandb_keys_load_save_and_are_checked() {
        use crate::config::Config;
        let load = |sets: &[&str]| {
            let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
            Config::from_toml_str("", &sets, "test")
        };
        let c = load(&["tracking.wandb=true", "tracking.wandb_project=\"p\""]).unwrap();
        assert!(c.tracking.wandb && !c.tracking.is_off());
        let saved = c.to_toml().unwrap();
        assert!(saved.contains("wandb = true"), "{saved}");
        assert!(saved.contains("wandb_project = \"p\""), "{saved}");
        assert!(
            !saved.contains("wandb_entity"),
            "an absent key stays absent: {saved}"
        );
        let back = Config::from_toml_str(&saved, &[], "saved").unwrap();
        assert_eq!(back.tracking, c.tracking);
        // off: the section is left out of the saved config, as before
        assert!(!load(&[]).unwrap().to_toml().unwrap().contains("[tracking]"));
        for (set, says) in [
            (
                "tracking.wandb_project=\"a/b\"",
                "tracking.wandb_project = \"a/b\"",
            ),
            ("tracking.wandb_entity=\" \"", "tracking.wandb_entity"),
            (
                "tracking.wandb_python=\"\"",
                "tracking.wandb_python is empty",
            ),
            ("tracking.wandb_projct=\"p\"", "wandb_project"),
        ] {
            let e = format!("{:#}", load(&[set]).unwrap_err());
            assert!(e.contains(says), "{set}: {e}");
        }
    }

    #[test]
    fn tensorboard_sink_skips_steps_it_already_holds() {
        let dir = tempfile::tempdir().unwrap();
        let mut sink = TbSink::open(dir.path()).unwrap();
        let v = [("train/reward".to_string(), Payload::Scalar(1.0))];
        for step in [1, 2, 3] {
            sink.write("train", step, &v).unwrap();
        }
        // A resumed run (from a checkpoint at step 1) logs steps 2 and 3 again, then 4.
        let mut again = TbSink::open(dir.path()).unwrap();
        for step in [2, 3, 4] {
            again.write("train", step, &v).unwrap();
        }
        let mut steps: Vec<u64> = Vec::new();
        for e in std::fs::read_dir(dir.path().join("tb")).unwrap() {
            let bytes = std::fs::read(e.unwrap().path()).unwrap();
            steps.extend(
                tfevents::read_events(&bytes)
                    .into_iter()
                    .filter(|(_, t)| !t.is_empty())
                    .map(|(s, _)| s),
            );
        }
        steps.sort();
        assert_eq!(steps, vec![1, 2, 3, 4]);
    }
}
