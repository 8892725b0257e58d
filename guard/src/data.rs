//! The labelled sets the classifier is trained and measured on, and their manifest.
//!
//! `guard/data/sets.toml` lists every set: its file (JSON Lines under `guard/data/sets/`),
//! its author, its language mix, its role and, for a set that was held out, the commit it
//! was measured on once. Roles:
//! - `train`: the classifier learns from it (every set that has been measured joins these);
//! - `calibration`: ordinary memory work by independent authors (forgetting, corrections,
//!   cleanups, embodied keys and doors, ...); trained on, and its false-rejection rate is
//!   reported leave-one-author-out;
//! - `held-out`: never trained on; measured once, then moved to `train` by a later commit.
//!
//! A line is `{"set": "skill"|"memory", "category", "label": "unsafe"|"ordinary", "lang",
//! "enc", "text"}` or the same with `"fields": {"name", "description", "instructions"}`.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::Category;

/// The manifest.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    #[serde(rename = "set")]
    pub sets: Vec<SetEntry>,
}

/// One set of the manifest.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SetEntry {
    pub name: String,
    pub file: String,
    pub author: String,
    #[serde(default)]
    pub languages: String,
    pub role: Role,
    /// The commit a held-out set was measured on once, where it was.
    #[serde(default)]
    pub measured: Option<String>,
    #[serde(default)]
    pub note: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Role {
    Train,
    Calibration,
    HeldOut,
}

/// One labelled text.
#[derive(Debug, Clone, PartialEq)]
pub struct Example {
    /// The skill text as the guard reads it ([`crate::skill_text`]); an item with only a
    /// `text` is the instructions of a skill with a neutral name and description.
    pub text: String,
    pub unsafe_: bool,
    pub category: Option<Category>,
    /// The set (author) it comes from.
    pub set: String,
    /// `plain`, `base64`, `leet`, ... as the author labelled it.
    pub enc: String,
    /// `memory` for a memory text (the memory filter's), else `skill`.
    pub kind: String,
    /// The topic of a calibration item (`forget`, `delete`, `embodied`, ...), if any.
    pub topic: Option<String>,
    /// (name, description, instructions) as the guard scans them.
    pub fields: [String; 3],
}

/// The neutral name and description an item given only as a text is scanned under.
pub const NEUTRAL: (&str, &str) = ("memory-helper", "Helps write memories.");

/// The data folder in this source tree.
pub fn source_dir() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/data"))
}

/// Read the manifest of `dir`.
pub fn manifest(dir: &Path) -> Result<Manifest, String> {
    let p = dir.join("sets.toml");
    let t = std::fs::read_to_string(&p).map_err(|e| format!("{}: {e}", p.display()))?;
    toml::from_str(&t).map_err(|e| format!("{}: {e}", p.display()))
}

/// Parse one JSONL set; `name` labels its examples. Errors name the file and line.
pub fn parse_set(name: &str, path: &Path) -> Result<Vec<Example>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    parse_lines(name, &text).map_err(|(line, e)| format!("{}:{line}: {e}", path.display()))
}

/// [`parse_set`] over a text.
pub fn parse_lines(name: &str, text: &str) -> Result<Vec<Example>, (usize, String)> {
    let mut out = Vec::new();
    for (i, l) in text.lines().enumerate() {
        let l = l.trim();
        if l.is_empty() || l.starts_with('#') {
            continue;
        }
        let v: serde_json::Value = serde_json::from_str(l).map_err(|e| (i + 1, e.to_string()))?;
        let s =
            |v: &serde_json::Value, k: &str| v.get(k).and_then(|x| x.as_str()).map(String::from);
        let fields = match (v.get("fields"), s(&v, "text")) {
            (Some(f), _) => {
                ["name", "description", "instructions"].map(|k| s(f, k).unwrap_or_default())
            }
            (None, Some(t)) => [NEUTRAL.0.into(), NEUTRAL.1.into(), t],
            (None, None) => return Err((i + 1, "neither \"text\" nor \"fields\"".into())),
        };
        let label = s(&v, "label").unwrap_or_default();
        if label != "unsafe" && label != "ordinary" {
            return Err((
                i + 1,
                format!("label must be unsafe or ordinary, got {label:?}"),
            ));
        }
        out.push(Example {
            text: crate::skill_text(&fields[0], &fields[1], &fields[2]),
            unsafe_: label == "unsafe",
            category: s(&v, "category").and_then(|c| Category::parse(&c)),
            set: name.into(),
            enc: s(&v, "enc").unwrap_or_else(|| "plain".into()),
            kind: if s(&v, "set").as_deref() == Some("memory") {
                "memory".into()
            } else {
                "skill".into()
            },
            topic: s(&v, "topic"),
            fields,
        });
    }
    Ok(out)
}

/// Every set of the manifest in `dir` with the given roles, in manifest order.
pub fn load(dir: &Path, roles: &[Role]) -> Result<Vec<(SetEntry, Vec<Example>)>, String> {
    manifest(dir)?
        .sets
        .into_iter()
        .filter(|s| roles.contains(&s.role))
        .map(|s| {
            let ex = parse_set(&s.name, &dir.join(&s.file))?;
            Ok((s, ex))
        })
        .collect()
}

/// sha256 over the manifest and every file it lists: what a model file records as the data
/// it was trained on.
pub fn fingerprint(dir: &Path) -> Result<String, String> {
    use sha2::{Digest, Sha256};
    let m = manifest(dir)?;
    let mut h = Sha256::new();
    let mp = dir.join("sets.toml");
    h.update(std::fs::read(&mp).map_err(|e| format!("{}: {e}", mp.display()))?);
    for s in &m.sets {
        let p = dir.join(&s.file);
        h.update(std::fs::read(&p).map_err(|e| format!("{}: {e}", p.display()))?);
    }
    Ok(hex::encode(h.finalize()))
}
