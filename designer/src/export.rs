//! Agent Skills export and import: `DIR/<name>/SKILL.md` per skill, plus `DIR/bank.json`
//! (the full bank, including provenance, usage history and release records) and
//! `DIR/RELEASES.md` (human-readable release history).
//!
//! The YAML frontmatter is written and read by hand rather than with a YAML crate: we write
//! exactly five fields (`name`, `description`, `metadata.{version, action, status,
//! mean_reward, usage_count}`), every value as a JSON-style double-quoted string (which is
//! valid YAML), so a ~60-line reader covers it without adding a dependency (serde_yaml is
//! unmaintained and its forks are young). The reader also accepts plain and single-quoted
//! scalars for hand-edited files, ignores other top-level keys (e.g. `license`) and rejects
//! block scalars with a clear message.
//!
//! On import the SKILL.md files are authoritative for what they contain (so hand-edited
//! folders count); `bank.json` supplies the rest (provenance, recent rewards, releases,
//! bank version). Every skill passes [`crate::check_skill_text`] (name, lengths, placeholders,
//! safety scan) or the import fails naming the skill and the rule.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use memskill_core::fsio::{self, WriteGuard};
use memskill_core::{ActionKind, Skill, SkillBank, SkillStatus, UsageStats, Version};

use crate::edit::check_skill_shape;
use crate::error::DesignerError;
use crate::guard::{check_bank_with, load_mode, stamp_guard};
use crate::reference_bank;
use crate::stage::text_diff;

/// The SKILL.md file name inside each skill folder.
pub const SKILL_FILE: &str = "SKILL.md";

fn q(s: &str) -> String {
    serde_json::to_string(s).expect("strings always serialise")
}

/// Render one skill as SKILL.md text.
pub fn render_skill_md(s: &Skill) -> String {
    format!(
        "---\nname: {}\ndescription: {}\nmetadata:\n  version: {}\n  action: {}\n  status: {}\n  mean_reward: {}\n  usage_count: {}\n---\n\n{}\n",
        q(&s.name),
        q(&s.description),
        q(&s.version.to_string()),
        q(s.action.as_str()),
        q(s.status.as_str()),
        q(&s.usage.mean_reward.to_string()),
        q(&s.usage.count.to_string()),
        s.instructions
    )
}

/// The fields a SKILL.md carries.
#[derive(Debug, Clone, PartialEq)]
pub struct SkillMd {
    pub name: String,
    pub description: String,
    pub instructions: String,
    pub action: ActionKind,
    pub version: Version,
    pub status: SkillStatus,
    pub mean_reward: f64,
    pub usage_count: u64,
}

fn scalar(raw: &str, path: &Path, line: usize) -> Result<String, DesignerError> {
    let v = raw.trim();
    let err = |m: String| DesignerError::format(path, format!("frontmatter line {line}: {m}"));
    let trailing_ok = |rest: &str| {
        let r = rest.trim();
        r.is_empty() || r.starts_with('#')
    };
    if v.starts_with('"') {
        let mut it = serde_json::Deserializer::from_str(v).into_iter::<String>();
        let parsed = it.next().ok_or_else(|| err("empty value".into()))?;
        let s = parsed.map_err(|e| err(format!("bad double-quoted string: {e}")))?;
        if !trailing_ok(&v[it.byte_offset()..]) {
            return Err(err("unexpected text after the quoted string".into()));
        }
        return Ok(s);
    }
    if let Some(inner) = v.strip_prefix('\'') {
        let mut out = String::new();
        let mut chars = inner.char_indices().peekable();
        while let Some((i, c)) = chars.next() {
            if c == '\'' {
                if chars.peek().map(|&(_, n)| n) == Some('\'') {
                    out.push('\'');
                    chars.next();
                    continue;
                }
                if !trailing_ok(&inner[i + 1..]) {
                    return Err(err("unexpected text after the quoted string".into()));
                }
                return Ok(out);
            }
            out.push(c);
        }
        return Err(err("unterminated single-quoted string".into()));
    }
    if v.starts_with('|') || v.starts_with('>') {
        return Err(err(
            "block scalars are not supported; write the value as a double-quoted string".into(),
        ));
    }
    let v = match v.find(" #") {
        Some(i) => v[..i].trim_end(),
        None => v,
    };
    Ok(v.to_string())
}

/// Parse SKILL.md text (`path` is used in error messages).
pub fn read_skill_md(text: &str, path: &Path) -> Result<SkillMd, DesignerError> {
    // Files saved with Windows line endings are read as LF; LF files are taken byte for byte.
    let text = if text.starts_with("---\r\n") {
        text.replace("\r\n", "\n")
    } else {
        text.to_string()
    };
    let (front, body) = split_frontmatter(&text, path)?;
    let Frontmatter { top, meta } = parse_frontmatter(front, path)?;
    let need = |k: &str| {
        top.get(k)
            .cloned()
            .ok_or_else(|| DesignerError::format(path, format!("frontmatter has no `{k}`")))
    };
    let name = need("name")?;
    let description = need("description")?;
    let m = read_metadata(&meta, path)?;
    let body = body.strip_prefix('\n').unwrap_or(body);
    let instructions = body.strip_suffix('\n').unwrap_or(body).to_string();
    Ok(SkillMd {
        name,
        description,
        instructions,
        action: m.action,
        version: m.version,
        status: m.status,
        mean_reward: m.mean_reward,
        usage_count: m.usage_count,
    })
}

/// (frontmatter, body) of LF-ended SKILL.md text: the frontmatter lies between the opening
/// `---` line and the next `---` line (or a closing `---` at the very end).
fn split_frontmatter<'a>(text: &'a str, path: &Path) -> Result<(&'a str, &'a str), DesignerError> {
    let rest = text.strip_prefix("---\n").ok_or_else(|| {
        DesignerError::format(path, "SKILL.md must start with a `---` frontmatter line")
    })?;
    if let Some(i) = rest.find("\n---\n") {
        Ok((&rest[..i], &rest[i + 5..]))
    } else if let Some(f) = rest.strip_suffix("\n---") {
        Ok((f, ""))
    } else {
        Err(DesignerError::format(
            path,
            "frontmatter is not closed by a `---` line",
        ))
    }
}

/// The frontmatter's top-level scalars and its `metadata` mapping.
struct Frontmatter {
    top: BTreeMap<String, String>,
    meta: BTreeMap<String, String>,
}

/// Reads `key: value` lines (blank and `#` lines skipped; lines indented under a key other
/// than `metadata` ignored). A duplicate key is an error, as is a non-mapping `metadata`.
fn parse_frontmatter(front: &str, path: &Path) -> Result<Frontmatter, DesignerError> {
    let mut top: BTreeMap<String, String> = BTreeMap::new();
    let mut meta: BTreeMap<String, String> = BTreeMap::new();
    let mut in_meta = false;
    for (n, line) in front.lines().enumerate() {
        let lineno = n + 2;
        if line.trim().is_empty() || line.trim_start().starts_with('#') {
            continue;
        }
        let indented = line.starts_with(' ') || line.starts_with('\t');
        let (k, v) = line.trim().split_once(':').ok_or_else(|| {
            DesignerError::format(
                path,
                format!("frontmatter line {lineno}: expected `key: value`"),
            )
        })?;
        let key = k.trim().to_string();
        if indented {
            if !in_meta {
                // Indented lines under another (ignored) mapping key.
                continue;
            }
            let val = scalar(v, path, lineno)?;
            if meta.insert(key.clone(), val).is_some() {
                return Err(DesignerError::format(
                    path,
                    format!("duplicate metadata key `{key}`"),
                ));
            }
            continue;
        }
        in_meta = key == "metadata";
        if in_meta {
            if !v.trim().is_empty() {
                return Err(DesignerError::format(
                    path,
                    format!("frontmatter line {lineno}: `metadata` must be a mapping"),
                ));
            }
            continue;
        }
        let val = scalar(v, path, lineno)?;
        if top.insert(key.clone(), val).is_some() {
            return Err(DesignerError::format(
                path,
                format!("duplicate frontmatter key `{key}`"),
            ));
        }
    }
    Ok(Frontmatter { top, meta })
}

/// The `metadata` fields of a SKILL.md.
struct SkillMetadata {
    action: ActionKind,
    version: Version,
    status: SkillStatus,
    mean_reward: f64,
    usage_count: u64,
}

/// Parses the `metadata` fields: `action` is required; `version` defaults to 0.1.0,
/// `status` to canary, `mean_reward` (finite) and `usage_count` to 0.
fn read_metadata(
    meta: &BTreeMap<String, String>,
    path: &Path,
) -> Result<SkillMetadata, DesignerError> {
    let bad =
        |field: &str, e: String| DesignerError::format(path, format!("metadata.{field}: {e}"));
    let action = meta
        .get("action")
        .ok_or_else(|| bad("action", "missing (insert, update, delete or noop)".into()))?
        .parse::<ActionKind>()
        .map_err(|e| bad("action", e.to_string()))?;
    let version = match meta.get("version") {
        Some(v) => v
            .parse::<Version>()
            .map_err(|e| bad("version", e.to_string()))?,
        None => Version::INITIAL,
    };
    let status = match meta.get("status") {
        Some(v) => v
            .parse::<SkillStatus>()
            .map_err(|e| bad("status", e.to_string()))?,
        // a hand-written skill is on trial: selectable, not active until its stage proves it
        None => SkillStatus::Canary,
    };
    let mean_reward = match meta.get("mean_reward") {
        Some(v) => {
            let x = v
                .trim()
                .parse::<f64>()
                .map_err(|e| bad("mean_reward", e.to_string()))?;
            // "NaN" / "inf" parse as f64 but cannot be stored in bank.json (JSON has no
            // such numbers: they would be written as `null` and fail to load).
            if !x.is_finite() {
                return Err(bad("mean_reward", format!("{v:?} is not a finite number")));
            }
            x
        }
        None => 0.0,
    };
    let usage_count = match meta.get("usage_count") {
        Some(v) => v
            .trim()
            .parse::<u64>()
            .map_err(|e| bad("usage_count", e.to_string()))?,
        None => 0,
    };
    Ok(SkillMetadata {
        action,
        version,
        status,
        mean_reward,
        usage_count,
    })
}

fn invalid(skill: &str, path: &Path, rule: impl Into<String>) -> DesignerError {
    DesignerError::InvalidSkill {
        skill: skill.to_string(),
        path: path.to_path_buf(),
        rule: rule.into(),
    }
}

/// Human-readable release history.
pub fn render_releases(bank: &SkillBank) -> String {
    let mut out = format!(
        "# Skill bank releases\n\nBank version {}.\n",
        bank.bank_version
    );
    for r in &bank.releases {
        let from = r.from_version.map_or("-".to_string(), |v| v.to_string());
        out.push_str(&format!(
            "\n## stage {}: `{}` {:?} {} -> {}\n\n",
            r.stage, r.skill, r.kind, from, r.to_version
        ));
        if !r.note.is_empty() {
            out.push_str(&format!("{}\n\n", r.note));
        }
        let f = |x: Option<f64>| x.map_or("-".to_string(), |v| format!("{v:.4}"));
        out.push_str(&format!(
            "- reward before: {}, after: {}\n",
            f(r.reward_before),
            f(r.reward_after)
        ));
        if !r.hard_cases.is_empty() {
            out.push_str(&format!("- hard cases: {}\n", r.hard_cases.join(", ")));
        }
        if !r.diff.is_empty() {
            out.push_str(&format!("\n```diff\n{}```\n", r.diff));
        }
    }
    if !bank.eval_runs.is_empty() {
        out.push_str("\n## Release-gate evidence\n\n");
        out.push_str(&crate::gate::eval_runs_md(&bank.eval_runs));
    }
    out
}

/// Write `bank` to `dir` as Agent Skills folders plus `bank.json`, `RELEASES.md` and a
/// `manifest.sha256` of every file (written last; [`import_bank`] checks it). Every skill is
/// validated and every target checked first (nothing is written if one fails): an existing
/// export is replaced only with `force`, whole and atomically (a crash leaves the old export
/// or the new one, never a mix: [`fsio::write_folder_atomic`]), and nothing is written
/// through a symbolic link (a linked `dir`, skill folder or file is refused, even with
/// `force`). A folder holding anything an export does not write is refused.
pub fn export_bank(bank: &SkillBank, dir: &Path, force: bool) -> Result<(), DesignerError> {
    let mut files = Vec::new();
    // the guard as on load: the bank's own records are trusted (strict with --rescan), so a
    // bank a researcher evolved exports whatever guard came later; bank.json records which
    // guard accepted each skill
    check_bank_with(bank, load_mode(), false).map_err(|e| {
        let md = dir.join(&e.skill).join(SKILL_FILE);
        invalid(&e.skill, &md, e.reason)
    })?;
    let mut stamped = bank.clone();
    stamp_guard(&mut stamped);
    let bank = &stamped;
    for s in bank.skills() {
        let md = dir.join(&s.name).join(SKILL_FILE);
        check_skill_shape(&s.name, &s.description, &s.instructions)
            .map_err(|r| invalid(&s.name, &md, r))?;
        if !s.usage.mean_reward.is_finite() || s.usage.recent_rewards.iter().any(|r| !r.is_finite())
        {
            return Err(invalid(
                &s.name,
                &md,
                format!(
                    "usage.mean_reward {} (or a recent reward) is not a finite number",
                    s.usage.mean_reward
                ),
            ));
        }
        files.push((md, render_skill_md(s)));
    }
    let json = serde_json::to_string_pretty(bank)
        .map_err(|e| DesignerError::format(dir.join("bank.json"), e.to_string()))?;
    files.push((dir.join("bank.json"), json + "\n"));
    files.push((dir.join("RELEASES.md"), render_releases(bank)));
    let guard = WriteGuard::new("skills export", force);
    refuse_link(dir)?;
    for s in bank.skills() {
        refuse_link(&dir.join(&s.name))?;
    }
    for (path, _) in &files {
        guard.check(path)?;
    }
    if fs::symlink_metadata(dir).is_ok() {
        check_replaceable(dir)?;
    }
    let rel: Vec<(PathBuf, Vec<u8>)> = files
        .into_iter()
        .map(|(p, t)| {
            let r = p.strip_prefix(dir).map(Path::to_path_buf).unwrap_or(p);
            (r, t.into_bytes())
        })
        .collect();
    fsio::write_folder_atomic(dir, &rel)?;
    Ok(())
}

/// An existing export folder is replaced whole, so it may hold only what an export writes
/// (skill folders holding a SKILL.md, `bank.json`, `RELEASES.md`, the manifest, and the
/// temp files of an interrupted older export); anything else would be lost and is refused.
fn check_replaceable(dir: &Path) -> Result<(), DesignerError> {
    let foreign = |p: &Path| {
        DesignerError::format(
            p,
            "is not part of a skill export; an export replaces the whole folder, so it refuses to remove this (move it away, or export elsewhere)",
        )
    };
    let junk = |name: &str| name.starts_with('.') && name.contains(".tmp-");
    let top = ["bank.json", "RELEASES.md", fsio::FOLDER_MANIFEST];
    let md = fs::symlink_metadata(dir).map_err(|e| DesignerError::io(dir, e))?;
    if !md.is_dir() {
        return Err(DesignerError::format(dir, "exists and is not a folder"));
    }
    for e in fs::read_dir(dir)
        .map_err(|e| DesignerError::io(dir, e))?
        .flatten()
    {
        let (p, name) = (e.path(), e.file_name().to_string_lossy().into_owned());
        let t = e.file_type().map_err(|err| DesignerError::io(&p, err))?;
        if junk(&name) || (t.is_file() && top.contains(&name.as_str())) {
            continue;
        }
        if !t.is_dir() {
            return Err(foreign(&p));
        }
        for f in fs::read_dir(&p)
            .map_err(|err| DesignerError::io(&p, err))?
            .flatten()
        {
            let fname = f.file_name().to_string_lossy().into_owned();
            let file = f.file_type().is_ok_and(|t| t.is_file());
            if !(junk(&fname) || (file && fname == SKILL_FILE)) {
                return Err(foreign(&f.path()));
            }
        }
    }
    Ok(())
}

/// A symbolic link at `p` (an export would write through it into its target) is refused.
fn refuse_link(p: &Path) -> Result<(), DesignerError> {
    if fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_symlink()) {
        return Err(DesignerError::format(
            p,
            "is a symbolic link; refusing to write through it (remove the link or export elsewhere)",
        ));
    }
    Ok(())
}

/// A bank read from a JSON file with no check at all (`skills approve`, which records a
/// review of a skill the guard rejects, must read it first).
pub fn read_bank_unchecked(path: &Path) -> Result<SkillBank, DesignerError> {
    read_json_bank(path)
}

fn read_json_bank(path: &Path) -> Result<SkillBank, DesignerError> {
    let text = fsio::read_user_text(path, fsio::SMALL_FILE_LIMIT, "skill bank")?;
    serde_json::from_str(&text)
        .map_err(|e| DesignerError::format(path, format!("not a skill bank: {e}")))
}

/// Where a symbolic link inside an imported folder may lead.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LinkPolicy {
    /// Links that stay inside the imported folder are followed; others are refused.
    #[default]
    InsideOnly,
    /// Every link is followed (`--follow-links`).
    Follow,
}

/// `p` itself when it is no link; a link is followed when it stays inside `root` (or the
/// policy follows all), and refused otherwise, naming both ends.
fn check_link(p: &Path, root: &Path, links: LinkPolicy) -> Result<(), DesignerError> {
    let Ok(m) = fs::symlink_metadata(p) else {
        return Ok(());
    };
    if !m.file_type().is_symlink() || links == LinkPolicy::Follow {
        return Ok(());
    }
    let target = fs::canonicalize(p).map_err(|e| DesignerError::io(p, e))?;
    let root = fs::canonicalize(root).map_err(|e| DesignerError::io(root, e))?;
    if !target.starts_with(&root) {
        return Err(DesignerError::format(
            p,
            format!(
                "is a symbolic link to {}, outside the imported folder; refusing to follow it (use --follow-links)",
                target.display()
            ),
        ));
    }
    Ok(())
}

/// Read an exported folder back into a bank (see the module docs for precedence rules);
/// symbolic links leaving the folder are refused.
pub fn import_bank(dir: &Path) -> Result<SkillBank, DesignerError> {
    import_bank_with(dir, LinkPolicy::InsideOnly)
}

/// [`import_bank`] with a choice of what to do with links that leave the folder.
pub fn import_bank_with(dir: &Path, links: LinkPolicy) -> Result<SkillBank, DesignerError> {
    import_bank_opts(dir, links, false)
}

/// [`import_bank_with`], and with `accept_edits` the files of an export taken as they are
/// when they differ from its `manifest.sha256` (hand edits; a warning names them); without
/// it such a folder is refused, naming the first file that differs (a mix of two exports
/// looks the same).
pub fn import_bank_opts(
    dir: &Path,
    links: LinkPolicy,
    accept_edits: bool,
) -> Result<SkillBank, DesignerError> {
    if reference_bank::is_reference_dir(dir) {
        let (skills, files) = read_reference_dir(dir, links)?;
        let by_name: BTreeMap<String, PathBuf> =
            skills.iter().map(|s| s.name.clone()).zip(files).collect();
        let file_of = |name: &str| by_name.get(name).cloned().unwrap_or_else(|| dir.into());
        return finish_import(dir, &dir.join("bank.json"), skills, None, &file_of);
    }
    let mut entries: Vec<PathBuf> = fs::read_dir(dir)
        .map_err(|e| DesignerError::io(dir, e))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    entries.sort();
    let json_path = dir.join("bank.json");
    let json = if fs::symlink_metadata(&json_path).is_ok() {
        check_link(&json_path, dir, links)?;
        Some(read_json_bank(&json_path)?)
    } else {
        None
    };
    let mut skills = Vec::new();
    for folder in entries {
        let fname = folder
            .file_name()
            .map(|f| f.to_string_lossy().to_string())
            .unwrap_or_default();
        if fname.starts_with('.') {
            continue;
        }
        check_link(&folder, dir, links)?;
        let path = folder.join(SKILL_FILE);
        if fs::symlink_metadata(&path).is_err() {
            return Err(invalid(
                &fname,
                &folder,
                format!("folder has no {SKILL_FILE}"),
            ));
        }
        check_link(&path, dir, links)?;
        let text = fsio::read_user_text(&path, fsio::SMALL_FILE_LIMIT, SKILL_FILE)?;
        skills.push(imported_skill(&fname, &path, &text, json.as_ref())?);
    }
    let file_of = |name: &str| dir.join(name).join(SKILL_FILE);
    let bank = finish_import(dir, &json_path, skills, json, &file_of)?;
    if !accept_edits {
        fsio::check_folder_manifest(dir).map_err(|e| {
            DesignerError::format(
                dir,
                format!("{e}: export again, or pass --accept-edits to take the files as they are"),
            )
        })?;
    } else if let Some(d) = fsio::folder_manifest_differences(dir)?.filter(|d| !d.is_empty()) {
        // taken as they are, but never silently: a mix of two exports looks the same
        let names: Vec<String> = d
            .iter()
            .map(|(p, _)| p.strip_prefix(dir).unwrap_or(p).display().to_string())
            .collect();
        eprintln!(
            "warning: {}: {} file(s) differ from its {} (hand edits, or a mix of two exports): {}",
            dir.display(),
            names.len(),
            fsio::FOLDER_MANIFEST,
            names.join(", ")
        );
    }
    Ok(bank)
}

/// The skills of a folder in the reference's released layout ([`reference_bank`]), in file
/// name order, shape-checked (the guard scan is [`finish_import`]'s), with the file of each.
fn read_reference_dir(
    dir: &Path,
    links: LinkPolicy,
) -> Result<(Vec<Skill>, Vec<PathBuf>), DesignerError> {
    let mut files: Vec<PathBuf> = fs::read_dir(dir)
        .map_err(|e| DesignerError::io(dir, e))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| reference_bank::is_skill_file(p))
        .collect();
    files.sort();
    let folder = fs::canonicalize(dir)
        .ok()
        .and_then(|d| d.file_name().map(|f| f.to_string_lossy().to_string()))
        .unwrap_or_default();
    let mut skills: Vec<Skill> = Vec::new();
    for p in &files {
        let p = p.as_path();
        check_link(p, dir, links)?;
        let text = fsio::read_user_text(p, fsio::SMALL_FILE_LIMIT, "skill file")?;
        let file = p
            .file_name()
            .map(|f| f.to_string_lossy().to_string())
            .unwrap_or_default();
        let s = reference_bank::read_released_skill(&text, &format!("{folder}/{file}"), p)?;
        check_skill_shape(&s.name, &s.description, &s.instructions)
            .map_err(|r| invalid(&s.name, p, r))?;
        if let Some(other) = skills.iter().find(|o| o.name == s.name) {
            return Err(invalid(
                &s.name,
                p,
                format!("the same skill name as {}", other.provenance[0]),
            ));
        }
        skills.push(s);
    }
    Ok((skills, files))
}

/// One skill folder's SKILL.md, checked, with what `bank.json` adds.
fn imported_skill(
    fname: &str,
    path: &Path,
    text: &str,
    json: Option<&SkillBank>,
) -> Result<Skill, DesignerError> {
    let md = read_skill_md(text, path).map_err(|e| invalid(fname, path, e.to_string()))?;
    if md.name != fname {
        return Err(invalid(
            fname,
            path,
            format!(
                "frontmatter name {:?} differs from the folder name",
                md.name
            ),
        ));
    }
    check_skill_shape(&md.name, &md.description, &md.instructions)
        .map_err(|r| invalid(&md.name, path, r))?;
    let prior = json.and_then(|b| b.get(&md.name));
    let usage = UsageStats {
        count: md.usage_count,
        mean_reward: md.mean_reward,
        recent_rewards: prior
            .map(|p| p.usage.recent_rewards.clone())
            .unwrap_or_default(),
    };
    // the bank's assessment holds while the text is the one it assessed
    let risk = prior
        .filter(|p| p.description == md.description && p.instructions == md.instructions)
        .and_then(|p| p.risk);
    Ok(Skill {
        name: md.name,
        description: md.description,
        instructions: md.instructions,
        action: md.action,
        version: md.version,
        status: md.status,
        provenance: prior.map_or_else(|| vec!["imported".to_string()], |p| p.provenance.clone()),
        usage,
        risk,
    })
}

/// `file_of` names the file a skill was read from, for a rejection.
fn finish_import(
    dir: &Path,
    json_path: &Path,
    skills: Vec<Skill>,
    json: Option<SkillBank>,
    file_of: &dyn Fn(&str) -> PathBuf,
) -> Result<SkillBank, DesignerError> {
    if let Some(b) = &json {
        for s in b.skills() {
            if !skills.iter().any(|x| x.name == s.name) {
                return Err(invalid(
                    &s.name,
                    json_path,
                    "listed in bank.json but has no skill folder",
                ));
            }
        }
    }
    if skills.is_empty() {
        return Err(DesignerError::format(
            dir,
            format!(
                "no skill folders (<name>/{SKILL_FILE}) found, nor the reference's released \
                 layout (<name>.md files with an `Action type:` line)"
            ),
        ));
    }
    let mut bank = SkillBank::from_skills(skills)?;
    if let Some(b) = json {
        bank.bank_version = b.bank_version;
        bank.releases = b.releases;
        bank.eval_runs = b.eval_runs;
        bank.guard = b.guard;
    }
    // an import is scanned strictly, whatever guard accepted it before; an approval recorded
    // for a skill's exact text (with its rule, reason and approver) still counts
    for s in bank.skills() {
        if let Some(f) = crate::guard::finding_for(&bank, s) {
            return Err(invalid(&s.name, &file_of(&s.name), format!("safety: {f}")));
        }
    }
    Ok(bank)
}

/// Validate an exported folder with the same checks as [`import_bank`]; returns the skill names.
pub fn validate_dir(dir: &Path) -> Result<Vec<String>, DesignerError> {
    Ok(import_bank(dir)?
        .names()
        .into_iter()
        .map(String::from)
        .collect())
}

/// A bank read from JSON (a bank or checkpoint this project wrote): every skill through
/// [`check_skill_shape`], the guard trusting the bank's own records as loads do
/// ([`crate::guard`]); each skill a later guard would reject is named on stderr.
fn read_checked_json_bank(path: &Path) -> Result<SkillBank, DesignerError> {
    let text = fsio::read_user_text(path, fsio::SMALL_FILE_LIMIT, "skill bank")?;
    if reference_bank::is_operation_bank(&text) {
        return read_operation_bank_file(&text, path);
    }
    let bank: SkillBank = serde_json::from_str(&text)
        .map_err(|e| DesignerError::format(path, format!("not a skill bank: {e}")))?;
    for s in bank.skills() {
        check_skill_shape(&s.name, &s.description, &s.instructions)
            .map_err(|r| invalid(&s.name, path, r))?;
    }
    let warnings = check_bank_with(&bank, load_mode(), false)
        .map_err(|e| invalid(&e.skill, path, e.reason))?;
    for w in warnings {
        eprintln!("warning: {}: {w}", path.display());
    }
    Ok(bank)
}

/// The reference's `OperationBank.to_dict()` JSON as a bank: a foreign bank, so every
/// skill passes the shape checks and the guard strictly.
fn read_operation_bank_file(text: &str, path: &Path) -> Result<SkillBank, DesignerError> {
    let skills = reference_bank::read_operation_bank(text, path)?;
    for s in &skills {
        check_skill_shape(&s.name, &s.description, &s.instructions)
            .map_err(|r| invalid(&s.name, path, r))?;
    }
    let bank = SkillBank::from_skills(skills)?;
    for s in bank.skills() {
        if let Some(f) = crate::guard::finding_for(&bank, s) {
            return Err(invalid(&s.name, path, format!("safety: {f}")));
        }
    }
    Ok(bank)
}

/// Load a bank from a JSON file, a checkpoint directory (`bank.json` or `skills.json`
/// inside) or an exported skills folder (folders with SKILL.md take precedence). Every
/// skill passes the shape checks and the guard, however the bank is given: strictly for an
/// exported folder (an import), trusting the bank's own records for a JSON bank
/// ([`crate::guard`]). Anything but a folder is read as a JSON file through the bounded
/// reader (a FIFO or a device is refused, naming it).
pub fn load_bank(path: &Path) -> Result<SkillBank, DesignerError> {
    if !path.is_dir() {
        return read_checked_json_bank(path);
    }
    let has_skill_folders = fs::read_dir(path)
        .map_err(|e| DesignerError::io(path, e))?
        .filter_map(|e| e.ok())
        .any(|e| fs::symlink_metadata(e.path().join(SKILL_FILE)).is_ok());
    if has_skill_folders || reference_bank::is_reference_dir(path) {
        // a bank to show, diff or start from: edits since the export are taken, with a
        // warning naming them (`skills import` / `validate` refuse them by default)
        return import_bank_opts(path, LinkPolicy::InsideOnly, true);
    }
    for f in ["bank.json", "skills.json"] {
        if path.join(f).exists() {
            return read_checked_json_bank(&path.join(f));
        }
    }
    Err(DesignerError::format(
        path,
        "directory holds neither skill folders nor bank.json / skills.json",
    ))
}

/// Added, removed and changed skills from `a` to `b`, with text diffs. Empty when equal.
pub fn bank_diff(a: &SkillBank, b: &SkillBank) -> String {
    let mut out = String::new();
    for s in b.skills() {
        if !a.contains(&s.name) {
            out.push_str(&format!(
                "+ added `{}` ({}, {}, {})\n",
                s.name, s.action, s.version, s.status
            ));
            out.push_str(&text_diff("", "", &s.description, &s.instructions));
        }
    }
    for s in a.skills() {
        if !b.contains(&s.name) {
            out.push_str(&format!(
                "- removed `{}` ({}, {}, {})\n",
                s.name, s.action, s.version, s.status
            ));
        }
    }
    for old in a.skills() {
        let Some(new) = b.get(&old.name) else {
            continue;
        };
        let mut parts = Vec::new();
        if old.action != new.action {
            parts.push(format!("action {} -> {}", old.action, new.action));
        }
        if old.version != new.version {
            parts.push(format!("version {} -> {}", old.version, new.version));
        }
        if old.status != new.status {
            parts.push(format!("status {} -> {}", old.status, new.status));
        }
        let d = text_diff(
            &old.description,
            &old.instructions,
            &new.description,
            &new.instructions,
        );
        if !d.is_empty() {
            parts.push("text".into());
        }
        if !parts.is_empty() {
            out.push_str(&format!("~ changed `{}`: {}\n", old.name, parts.join(", ")));
            out.push_str(&d);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn skill_md_round_trip_with_awkward_text() {
        let mut s = SkillBank::seed().get("insert").unwrap().clone();
        s.description = "Quotes \" and: colons, # hashes, 'single', unicode é, tab\tend".into();
        s.instructions = "line 1\n\n---\nline: 3 \"q\"\n".into();
        s.usage.record(0.1);
        s.usage.record(0.2);
        let text = render_skill_md(&s);
        let md = read_skill_md(&text, Path::new("x/SKILL.md")).unwrap();
        assert_eq!(md.name, s.name);
        assert_eq!(md.description, s.description);
        assert_eq!(md.instructions, s.instructions);
        assert_eq!(
            (md.action, md.version, md.status),
            (s.action, s.version, s.status)
        );
        assert_eq!(md.mean_reward.to_bits(), s.usage.mean_reward.to_bits());
        assert_eq!(md.usage_count, 2);
    }

    proptest::proptest! {
        #[test]
        fn skill_md_round_trips_any_text(desc in "\\PC*", instr in "(\\PC|\n|\r|\t)*", mean in -1e6f64..1e6, count in 0u64..u64::MAX) {
            let mut s = SkillBank::seed().get("update").unwrap().clone();
            s.description = desc;
            s.instructions = instr;
            s.usage.mean_reward = mean;
            s.usage.count = count;
            let md = read_skill_md(&render_skill_md(&s), Path::new("p")).unwrap();
            proptest::prop_assert_eq!(&md.description, &s.description);
            proptest::prop_assert_eq!(&md.instructions, &s.instructions);
            proptest::prop_assert_eq!(md.mean_reward.to_bits(), mean.to_bits());
            proptest::prop_assert_eq!(md.usage_count, count);
        }
    }

    #[test]
    fn reader_accepts_hand_written_and_rejects_broken() {
        let hand = "---\r\nname: my-skill\r\ndescription: 'It''s plain' # c\r\nlicense: MIT\r\nmetadata:\r\n  action: update\r\n---\r\nDo it.\r\n";
        let md = read_skill_md(hand, Path::new("p")).unwrap();
        assert_eq!(
            (
                md.name.as_str(),
                md.description.as_str(),
                md.instructions.as_str()
            ),
            ("my-skill", "It's plain", "Do it.")
        );
        assert_eq!(
            (md.action, md.version, md.status),
            (ActionKind::Update, Version::INITIAL, SkillStatus::Canary)
        );
        for (bad, why) in [
            ("name: x\n", "start with"),
            ("---\nname: x\n", "not closed"),
            (
                "---\nname: x\nmetadata:\n  action: insert\n---\n",
                "no `description`",
            ),
            ("---\nname: x\ndescription: d\n---\n", "metadata.action"),
            (
                "---\nname: x\ndescription: d\nmetadata:\n  action: insert\n  mean_reward: NaN\n---\n",
                "not a finite number",
            ),
            (
                "---\nname: x\ndescription: d\nmetadata:\n  action: insert\n  mean_reward: \"-inf\"\n---\n",
                "not a finite number",
            ),
            (
                "---\nname: x\ndescription: |\n  d\nmetadata:\n  action: insert\n---\n",
                "block scalars",
            ),
            (
                "---\nname: x\ndescription: d\nmetadata:\n  action: fly\n---\n",
                "metadata.action",
            ),
            (
                "---\nname: x\nname: y\ndescription: d\nmetadata:\n  action: insert\n---\n",
                "duplicate",
            ),
        ] {
            let e = read_skill_md(bad, Path::new("p")).unwrap_err().to_string();
            assert!(e.contains(why), "{bad:?}: {e}");
        }
    }
}
