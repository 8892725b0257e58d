//! Where memskill keeps downloaded assets, data and caches. The one place that reads the
//! cache environment variables (it reads the environment, nothing on disk).

use std::path::PathBuf;

/// `${MEMSKILL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/memskill}`: an empty variable counts as
/// unset.
pub fn cache_root() -> PathBuf {
    let var = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
    if let Some(p) = var("MEMSKILL_CACHE") {
        return PathBuf::from(p);
    }
    if let Some(p) = var("XDG_CACHE_HOME") {
        return PathBuf::from(p).join("memskill");
    }
    let home = var("HOME").unwrap_or_else(|| ".".into());
    PathBuf::from(home).join(".cache").join("memskill")
}

/// The model-asset folder, `<cache root>/assets` (`scripts/fetch-assets.sh` fills it).
pub fn asset_root() -> PathBuf {
    cache_root().join("assets")
}
