//! Models by Hugging Face Hub name: wherever a model folder or GGUF file is accepted, a name
//! such as `Qwen/Qwen3-Embedding-0.6B` (not an existing path, of the form `owner/name`, or
//! `owner/name/file.gguf` for a GGUF) is looked up in the local Hugging Face cache, laid out
//! as `huggingface_hub` lays it out: `<cache>/models--owner--name/refs/main` holds a revision,
//! `snapshots/<revision>/` the files. The cache is `HF_HUB_CACHE`, else `$HF_HOME/hub`, else
//! `$XDG_CACHE_HOME/huggingface/hub`, else `~/.cache/huggingface/hub`. Nothing is downloaded
//! (runs stay offline); a model missing from the cache is an error naming the model, the
//! folder searched and the command that fetches it.
//!
//! The path logic is pure ([`hub_cache_dir`], [`parse_hub_name`]); [`resolve_model`] is the
//! small I/O edge every caller goes through.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

/// What the caller wants from a model reference.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModelFile {
    /// A model folder (config.json, tokenizer.json, weights).
    Folder,
    /// One `.gguf` file.
    Gguf,
}

/// A Hub model name, with the file inside the repository when one was given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HubName {
    pub owner: String,
    pub name: String,
    pub file: Option<String>,
}

impl HubName {
    pub fn repo(&self) -> String {
        format!("{}/{}", self.owner, self.name)
    }
}

/// The Hugging Face hub cache from the environment's values (see the module docs); None when
/// not even a home folder is known.
pub fn hub_cache_dir(
    hf_hub_cache: Option<&str>,
    hf_home: Option<&str>,
    xdg_cache_home: Option<&str>,
    home: Option<&str>,
) -> Option<PathBuf> {
    let set = |v: Option<&str>| v.filter(|s| !s.trim().is_empty()).map(PathBuf::from);
    set(hf_hub_cache)
        .or_else(|| set(hf_home).map(|h| h.join("hub")))
        .or_else(|| set(xdg_cache_home).map(|x| x.join("huggingface").join("hub")))
        .or_else(|| set(home).map(|h| h.join(".cache").join("huggingface").join("hub")))
}

/// `owner/name` or `owner/name/file` (Hub names: ASCII letters, digits, `-`, `_`, `.`, not
/// starting with `.`); None for anything else (absolute or home-relative paths, `./x`, more
/// parts).
pub fn parse_hub_name(s: &str) -> Option<HubName> {
    let ok = |p: &str| {
        !p.is_empty()
            && !p.starts_with('.')
            && p.bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
    };
    let parts: Vec<&str> = s.split('/').collect();
    if !parts.iter().all(|p| ok(p)) {
        return None;
    }
    match parts.as_slice() {
        [o, n] => Some(HubName {
            owner: o.to_string(),
            name: n.to_string(),
            file: None,
        }),
        [o, n, f] => Some(HubName {
            owner: o.to_string(),
            name: n.to_string(),
            file: Some(f.to_string()),
        }),
        _ => None,
    }
}

/// `<cache>/models--owner--name`.
pub fn repo_dir(cache: &Path, name: &HubName) -> PathBuf {
    cache.join(format!("models--{}--{}", name.owner, name.name))
}

/// The hub cache of this process's environment.
pub fn env_hub_cache() -> Option<PathBuf> {
    let v = |k: &str| std::env::var(k).ok();
    hub_cache_dir(
        v("HF_HUB_CACHE").as_deref(),
        v("HF_HOME").as_deref(),
        v("XDG_CACHE_HOME").as_deref(),
        v("HOME").as_deref(),
    )
}

/// The model `spec` names: itself when it exists or is not a Hub name, else its snapshot in
/// the Hugging Face cache of the environment (a folder, or for [`ModelFile::Gguf`] the named
/// `.gguf` or the only one in the snapshot). `what` names the setting in errors.
pub fn resolve_model(spec: &Path, want: ModelFile, what: &str) -> Result<PathBuf> {
    let text = spec.to_string_lossy();
    let name = match parse_hub_name(&text) {
        Some(n) if !spec.exists() => n,
        _ => return Ok(spec.to_path_buf()),
    };
    let Some(cache) = env_hub_cache() else {
        bail!("{what}: `{text}` is not a file or folder, and no Hugging Face cache is known (set HF_HUB_CACHE or HOME)");
    };
    resolve_in_cache(&cache, &name, want).with_context(|| format!("{what}: model `{text}`"))
}

/// [`resolve_model`] in the cache folder `cache`.
pub fn resolve_in_cache(cache: &Path, name: &HubName, want: ModelFile) -> Result<PathBuf> {
    let repo = repo_dir(cache, name);
    let fetch = format!(
        "fetch it with `hf download {}` (or give a folder path)",
        name.repo()
    );
    let main = repo.join("refs").join("main");
    let rev = std::fs::read_to_string(&main).map_err(|e| {
        anyhow::anyhow!(
            "not a file or folder, and not in the Hugging Face cache {} (read {}: {e}); {fetch}",
            cache.display(),
            main.display()
        )
    })?;
    let snap = repo.join("snapshots").join(rev.trim());
    if rev.trim().is_empty() || !snap.is_dir() {
        bail!(
            "{} names revision {:?}, but {} is not a folder; {fetch}",
            main.display(),
            rev.trim(),
            snap.display()
        );
    }
    match (want, &name.file) {
        (ModelFile::Folder, None) => Ok(snap),
        (_, Some(f)) => {
            let p = snap.join(f);
            if !p.exists() {
                bail!(
                    "{} does not exist in the cached snapshot; {fetch}",
                    p.display()
                );
            }
            Ok(p)
        }
        (ModelFile::Gguf, None) => only_gguf(&snap),
    }
}

/// The single `.gguf` file of a snapshot folder.
fn only_gguf(snap: &Path) -> Result<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(snap)
        .with_context(|| format!("listing {}", snap.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.extension()
                .is_some_and(|x| x.eq_ignore_ascii_case("gguf"))
        })
        .collect();
    found.sort();
    match found.len() {
        1 => Ok(found.remove(0)),
        0 => bail!("no .gguf file in {}", snap.display()),
        _ => bail!(
            "{} .gguf files in {} ({}): name one as owner/name/FILE.gguf",
            found.len(),
            snap.display(),
            found
                .iter()
                .filter_map(|p| p.file_name().map(|f| f.to_string_lossy().into_owned()))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cache_folder_from_the_environment_in_order() {
        let d = |a, b, c, h| hub_cache_dir(a, b, c, h).map(|p| p.display().to_string());
        assert_eq!(
            d(Some("/c"), Some("/h"), Some("/x"), Some("/u")).as_deref(),
            Some("/c")
        );
        assert_eq!(
            d(None, Some("/h"), Some("/x"), Some("/u")).as_deref(),
            Some("/h/hub")
        );
        assert_eq!(
            d(Some(""), None, Some("/x"), Some("/u")).as_deref(),
            Some("/x/huggingface/hub")
        );
        assert_eq!(
            d(None, None, None, Some("/u")).as_deref(),
            Some("/u/.cache/huggingface/hub")
        );
        assert_eq!(d(None, None, None, None), None);
    }

    #[test]
    fn hub_names_and_what_is_not_one() {
        let n = parse_hub_name("Qwen/Qwen3-Embedding-0.6B").unwrap();
        assert_eq!(
            (n.repo().as_str(), n.file),
            ("Qwen/Qwen3-Embedding-0.6B", None)
        );
        let g = parse_hub_name("bartowski/SmolLM2-135M-GGUF/model.Q4_1.gguf").unwrap();
        assert_eq!(g.file.as_deref(), Some("model.Q4_1.gguf"));
        for not in [
            "minilm", "/abs/dir", "./a/b", "../a/b", "~/a/b", "a//b", "a/b/c/d", "a b/c", "",
        ] {
            assert_eq!(parse_hub_name(not), None, "{not:?}");
        }
    }

    /// A temp folder laid out like the Hugging Face cache.
    fn cache_with(files: &[&str]) -> (tempfile::TempDir, PathBuf) {
        let d = tempfile::tempdir().unwrap();
        let repo = d.path().join("models--owner--model");
        let snap = repo.join("snapshots").join("abc123");
        std::fs::create_dir_all(&snap).unwrap();
        std::fs::create_dir_all(repo.join("refs")).unwrap();
        std::fs::write(repo.join("refs").join("main"), "abc123\n").unwrap();
        for f in files {
            std::fs::write(snap.join(f), "x").unwrap();
        }
        (d, snap)
    }

    #[test]
    fn names_resolve_through_refs_main_to_the_snapshot() {
        let (d, snap) = cache_with(&["config.json", "m.gguf"]);
        let name = |s| parse_hub_name(s).unwrap();
        let r = |s, w| resolve_in_cache(d.path(), &name(s), w);
        assert_eq!(r("owner/model", ModelFile::Folder).unwrap(), snap);
        assert_eq!(
            r("owner/model", ModelFile::Gguf).unwrap(),
            snap.join("m.gguf")
        );
        assert_eq!(
            r("owner/model/m.gguf", ModelFile::Gguf).unwrap(),
            snap.join("m.gguf")
        );
        let e = format!(
            "{:#}",
            r("owner/model/other.gguf", ModelFile::Gguf).unwrap_err()
        );
        assert!(
            e.contains("other.gguf") && e.contains("hf download owner/model"),
            "{e}"
        );
        // not cached: the folder searched and the command that fetches it
        let e = format!("{:#}", r("someone/else", ModelFile::Folder).unwrap_err());
        assert!(
            e.contains(&d.path().display().to_string())
                && e.contains("models--someone--else")
                && e.contains("hf download someone/else"),
            "{e}"
        );
        // two GGUFs: name one
        std::fs::write(snap.join("n.gguf"), "x").unwrap();
        let e = format!("{:#}", r("owner/model", ModelFile::Gguf).unwrap_err());
        assert!(
            e.contains("m.gguf, n.gguf") && e.contains("owner/name/FILE.gguf"),
            "{e}"
        );
        // refs/main naming a missing snapshot
        std::fs::write(d.path().join("models--owner--model/refs/main"), "zzz").unwrap();
        let e = format!("{:#}", r("owner/model", ModelFile::Folder).unwrap_err());
        assert!(e.contains("\"zzz\""), "{e}");
    }

    #[test]
    fn existing_paths_and_plain_names_pass_through() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("x");
        std::fs::create_dir_all(&p).unwrap();
        assert_eq!(resolve_model(&p, ModelFile::Folder, "t").unwrap(), p);
        let plain = Path::new("no-such-folder");
        assert_eq!(resolve_model(plain, ModelFile::Folder, "t").unwrap(), plain);
    }
}
