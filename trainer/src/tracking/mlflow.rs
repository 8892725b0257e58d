//! The MLflow sink: an MLflow tracking server through its REST API (`/api/2.0/mlflow/...`
//! for experiments, runs, params and metrics; `/api/2.0/mlflow-artifacts/...` for artifact
//! uploads, which `mlflow server` proxies by default). The run's MLflow id is kept in
//! `<run>/mlflow.json`, so a resumed run logs into the same MLflow run.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::tfevents::HValue;
use crate::fsutil::write_atomic;

/// MLflow's limits: params per `log-batch`, metrics per `log-batch`, a param value's length.
const PARAMS_PER_BATCH: usize = 100;
const METRICS_PER_BATCH: usize = 1000;
const PARAM_VALUE_MAX: usize = 500;

/// What `<run>/mlflow.json` holds.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
struct RunRef {
    uri: String,
    experiment_id: String,
    run_id: String,
}

pub struct MlflowSink {
    base: String,
    rt: tokio::runtime::Runtime,
    client: reqwest::Client,
    run: RunRef,
    artifact_uri: String,
    /// Per tag group, the highest step the MLflow run already holds.
    done: BTreeMap<String, u64>,
}

/// A param value as MLflow stores it (text, at most [`PARAM_VALUE_MAX`] characters).
fn param_text(v: &HValue) -> String {
    let s = match v {
        HValue::Number(x) => format!("{x}"),
        HValue::Text(s) => s.clone(),
        HValue::Bool(b) => b.to_string(),
    };
    if s.chars().count() > PARAM_VALUE_MAX {
        s.chars()
            .take(PARAM_VALUE_MAX - 3)
            .chain("...".chars())
            .collect()
    } else {
        s
    }
}

/// The artifact path below the server's proxy for a run's `artifact_uri`
/// (`mlflow-artifacts:/1/abc/artifacts` or `mlflow-artifacts://host/1/abc/artifacts`).
fn proxied_artifact_path(artifact_uri: &str) -> Option<String> {
    let rest = artifact_uri.strip_prefix("mlflow-artifacts:")?;
    let rest = match rest.strip_prefix("//") {
        Some(r) => r.split_once('/').map(|(_, p)| p)?,
        None => rest.trim_start_matches('/'),
    };
    Some(rest.trim_end_matches('/').to_string())
}

/// The files below `root` (regular files only; links are not followed), with their paths
/// relative to `root`'s parent, `/`-separated.
fn files_below(root: &Path) -> Result<Vec<(PathBuf, String)>> {
    let base = root.parent().unwrap_or(Path::new(""));
    let mut out = Vec::new();
    let mut todo = vec![root.to_path_buf()];
    while let Some(p) = todo.pop() {
        let meta =
            std::fs::symlink_metadata(&p).with_context(|| format!("reading {}", p.display()))?;
        if meta.is_dir() {
            for e in std::fs::read_dir(&p).with_context(|| format!("listing {}", p.display()))? {
                todo.push(e?.path());
            }
        } else if meta.is_file() {
            let rel = p.strip_prefix(base).unwrap_or(&p);
            let rel: Vec<String> = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            out.push((p.clone(), rel.join("/")));
        }
    }
    out.sort();
    Ok(out)
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .as_millis() as u64
}

impl MlflowSink {
    /// Connect to the server at `uri` and open the run's MLflow run: the one recorded in
    /// `<run>/mlflow.json` for the same server, else a new run in `experiment` (created when
    /// missing) with the params logged.
    pub fn open(
        uri: &str,
        experiment: &str,
        run_dir: &Path,
        run_name: &str,
        params: &BTreeMap<String, HValue>,
    ) -> Result<Self> {
        let base = uri.trim_end_matches('/').to_string();
        if !(base.starts_with("http://") || base.starts_with("https://")) {
            bail!("tracking.mlflow = {uri:?}: expected an http:// or https:// URL");
        }
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .context("starting the MLflow client's runtime")?;
        let client = reqwest::Client::builder()
            .timeout(Duration::from_secs(30))
            .build()
            .context("building the MLflow HTTP client")?;
        let ref_path = run_dir.join("mlflow.json");
        let previous: Option<RunRef> = std::fs::read(&ref_path)
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .filter(|r: &RunRef| r.uri == base);
        let mut sink = Self {
            base,
            rt,
            client,
            run: RunRef {
                uri: String::new(),
                experiment_id: String::new(),
                run_id: String::new(),
            },
            artifact_uri: String::new(),
            done: BTreeMap::new(),
        };
        match previous {
            Some(r) => sink.reopen(r)?,
            None => {
                sink.create(experiment, run_name)?;
                sink.log_params(params)?;
                let bytes = serde_json::to_vec_pretty(&sink.run)?;
                write_atomic(&ref_path, &bytes)?;
            }
        }
        Ok(sink)
    }

    fn call(
        &self,
        method: reqwest::Method,
        path: &str,
        query: &[(&str, &str)],
        body: Option<Value>,
    ) -> Result<Value> {
        let url = format!("{}{path}", self.base);
        let mut req = self.client.request(method.clone(), &url).query(query);
        if let Some(b) = body {
            req = req.json(&b);
        }
        let (status, text) = self
            .rt
            .block_on(async {
                let resp = req.send().await?;
                let status = resp.status();
                Ok::<_, reqwest::Error>((status, resp.text().await?))
            })
            .with_context(|| format!("MLflow {method} {url}"))?;
        if !status.is_success() {
            let snippet: String = text.chars().take(300).collect();
            bail!("MLflow {method} {url}: HTTP {status}: {snippet}");
        }
        if text.trim().is_empty() {
            return Ok(Value::Null);
        }
        serde_json::from_str(&text)
            .with_context(|| format!("MLflow {method} {url}: the reply is not JSON"))
    }

    fn post(&self, path: &str, body: Value) -> Result<Value> {
        self.call(reqwest::Method::POST, path, &[], Some(body))
    }

    fn get(&self, path: &str, query: &[(&str, &str)]) -> Result<Value> {
        self.call(reqwest::Method::GET, path, query, None)
    }

    fn experiment_id(&self, name: &str) -> Result<String> {
        let q = [("experiment_name", name)];
        if let Ok(v) = self.get("/api/2.0/mlflow/experiments/get-by-name", &q) {
            if let Some(id) = v["experiment"]["experiment_id"].as_str() {
                return Ok(id.to_string());
            }
        }
        let v = self.post("/api/2.0/mlflow/experiments/create", json!({"name": name}))?;
        v["experiment_id"]
            .as_str()
            .map(str::to_string)
            .context("MLflow experiments/create: no experiment_id in the reply")
    }

    fn create(&mut self, experiment: &str, run_name: &str) -> Result<()> {
        let exp = self.experiment_id(experiment)?;
        let v = self.post(
            "/api/2.0/mlflow/runs/create",
            json!({"experiment_id": exp, "run_name": run_name, "start_time": now_ms(),
                   "tags": [{"key": "mlflow.runName", "value": run_name},
                            {"key": "mlflow.source.name", "value": "memskill"}]}),
        )?;
        let info = &v["run"]["info"];
        let run_id = info["run_id"]
            .as_str()
            .context("MLflow runs/create: no run_id in the reply")?;
        self.artifact_uri = info["artifact_uri"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        self.run = RunRef {
            uri: self.base.clone(),
            experiment_id: exp,
            run_id: run_id.to_string(),
        };
        Ok(())
    }

    /// The recorded run: its artifact location, the steps it holds, status back to RUNNING.
    fn reopen(&mut self, r: RunRef) -> Result<()> {
        let v = self.get("/api/2.0/mlflow/runs/get", &[("run_id", &r.run_id)])?;
        self.artifact_uri = v["run"]["info"]["artifact_uri"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        self.run = r;
        for (group, probe) in [("train", "train/reward"), ("stage", "stage/reward")] {
            self.probe_done(group, probe)?;
        }
        self.post(
            "/api/2.0/mlflow/runs/update",
            json!({"run_id": self.run.run_id, "status": "RUNNING"}),
        )?;
        Ok(())
    }

    /// The highest step the run holds for metric `probe`, as `group`'s last logged step.
    fn probe_done(&mut self, group: &str, probe: &str) -> Result<()> {
        let q = [("run_id", self.run.run_id.as_str()), ("metric_key", probe)];
        let h = self.get("/api/2.0/mlflow/metrics/get-history", &q)?;
        if let Some(max) = h["metrics"]
            .as_array()
            .and_then(|a| a.iter().filter_map(|m| m["step"].as_u64()).max())
        {
            self.done.insert(group.to_string(), max);
        }
        Ok(())
    }

    fn log_params(&self, params: &BTreeMap<String, HValue>) -> Result<()> {
        let all: Vec<Value> = params
            .iter()
            .map(|(k, v)| json!({"key": k, "value": param_text(v)}))
            .collect();
        for chunk in all.chunks(PARAMS_PER_BATCH) {
            self.post(
                "/api/2.0/mlflow/runs/log-batch",
                json!({"run_id": self.run.run_id, "params": chunk}),
            )?;
        }
        Ok(())
    }

    /// Log a group's scalars at `step` (skipped when the run already holds that step).
    pub fn log_metrics(&mut self, group: &str, step: u64, values: &[(String, f64)]) -> Result<()> {
        // an evaluation group: the steps an earlier evaluation of the run logged
        if group.starts_with("eval/") && !self.done.contains_key(group) {
            self.probe_done(group, &format!("{group}/questions"))?;
        }
        if self.done.get(group).is_some_and(|&d| step <= d) {
            return Ok(());
        }
        let ts = now_ms();
        let all: Vec<Value> = values
            .iter()
            .map(|(k, v)| json!({"key": k, "value": v, "timestamp": ts, "step": step}))
            .collect();
        for chunk in all.chunks(METRICS_PER_BATCH) {
            self.post(
                "/api/2.0/mlflow/runs/log-batch",
                json!({"run_id": self.run.run_id, "metrics": chunk}),
            )?;
        }
        self.done.insert(group.to_string(), step);
        Ok(())
    }

    /// Upload a file or every file below a folder as artifacts (`skills/...`, `skills.md`).
    pub fn upload(&self, path: &Path) -> Result<()> {
        let Some(root) = proxied_artifact_path(&self.artifact_uri) else {
            bail!(
                "MLflow stores this run's artifacts at {:?}, which its server does not proxy: start `mlflow server` with artifact serving (the default; not --no-serve-artifacts)",
                self.artifact_uri
            );
        };
        for (file, rel) in files_below(path)? {
            let bytes =
                std::fs::read(&file).with_context(|| format!("reading {}", file.display()))?;
            let url = artifact_url(&self.base, &root, &rel)?;
            let req = self.client.put(url.clone()).body(bytes);
            let status = self
                .rt
                .block_on(async { req.send().await.map(|r| r.status()) })
                .with_context(|| format!("MLflow PUT {url}"))?;
            if !status.is_success() {
                bail!("MLflow PUT {url}: HTTP {status}");
            }
        }
        Ok(())
    }

    /// Mark the MLflow run ended with `status` (`FINISHED`, `FAILED`).
    pub fn end(&self, status: &str) -> Result<()> {
        self.post(
            "/api/2.0/mlflow/runs/update",
            json!({"run_id": self.run.run_id, "status": status, "end_time": now_ms()}),
        )?;
        Ok(())
    }
}

/// The proxy URL of artifact `rel` (`/`-separated) below `root`, each segment
/// percent-encoded by the URL type.
fn artifact_url(base: &str, root: &str, rel: &str) -> Result<reqwest::Url> {
    let mut url = reqwest::Url::parse(&format!("{base}/api/2.0/mlflow-artifacts/artifacts/{root}"))
        .with_context(|| format!("tracking.mlflow = {base:?}: not a URL"))?;
    url.path_segments_mut()
        .map_err(|_| anyhow::anyhow!("tracking.mlflow = {base:?}: not a URL with a path"))?
        .extend(rel.split('/'));
    Ok(url)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn artifact_paths_below_the_proxy() {
        assert_eq!(
            proxied_artifact_path("mlflow-artifacts:/1/abc/artifacts").as_deref(),
            Some("1/abc/artifacts")
        );
        assert_eq!(
            proxied_artifact_path("mlflow-artifacts://127.0.0.1:5000/2/x/artifacts/").as_deref(),
            Some("2/x/artifacts")
        );
        assert_eq!(proxied_artifact_path("/tmp/mlruns/1/abc/artifacts"), None);
        assert_eq!(
            artifact_url("http://h:5000", "1/abc/artifacts", "skills/a b/SKILL.md")
                .unwrap()
                .as_str(),
            "http://h:5000/api/2.0/mlflow-artifacts/artifacts/1/abc/artifacts/skills/a%20b/SKILL.md"
        );
    }

    #[test]
    fn long_param_values_are_cut() {
        assert_eq!(param_text(&HValue::Number(0.5)), "0.5");
        let long = param_text(&HValue::Text("x".repeat(900)));
        assert_eq!(long.chars().count(), PARAM_VALUE_MAX);
        assert!(long.ends_with("..."));
    }

    #[test]
    fn a_down_server_is_an_error_naming_the_url() {
        let dir = tempfile::tempdir().unwrap();
        // A port nothing listens on (bound, then released).
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let uri = format!("http://127.0.0.1:{port}");
        let err = MlflowSink::open(&uri, "e", dir.path(), "r", &BTreeMap::new())
            .err()
            .unwrap();
        assert!(format!("{err:#}").contains(&uri), "{err:#}");
        assert!(!dir.path().join("mlflow.json").exists());
        let err = MlflowSink::open("ftp://x", "e", dir.path(), "r", &BTreeMap::new())
            .err()
            .unwrap();
        assert!(format!("{err:#}").contains("http://"), "{err:#}");
    }
}
