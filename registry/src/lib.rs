//! memskill-registry: the governance registry, one queryable store of skills and what
//! happened to them across runs. Tables follow the governance design (`trajectory`,
//! `memory`, `skill`, `skill_eval_case`, `skill_eval_run`, `skill_invocation`,
//! `skill_release`), plus `skill_version` (every text a skill had, which a rollback
//! restores) and `source_run` (the run directories that wrote into it).
//!
//! One schema on two databases: an embedded SQLite file (the default, `runs/registry.db`,
//! WAL) or PostgreSQL by URL, through [`db::Db`]; created and upgraded by the versioned
//! migrations of [`migrate`]. Runs write through [`ingest`] (idempotent, one transaction per
//! write); people decide through [`ops`] (every decision a release record with its approver);
//! [`show`] renders a skill's history. The run directories' files stay what they are: the
//! registry indexes them, it does not replace them.

pub mod clock;
pub mod db;
pub mod ingest;
pub mod migrate;
pub mod ops;
pub mod postmortem;
pub mod show;
pub mod testing;

use anyhow::{bail, Context, Result};

pub use db::{Backend, Db, Location, Param, Row};

/// The registry's file when none is named.
pub const DEFAULT_PATH: &str = "runs/registry.db";

/// Every table, in schema order.
pub const TABLES: &[&str] = &[
    "source_run",
    "trajectory",
    "memory",
    "skill",
    "skill_version",
    "skill_eval_case",
    "skill_eval_run",
    "skill_invocation",
    "skill_release",
];

/// Open a registry to write: a SQLite file (and its folder) is created if missing, and the
/// schema is brought up to date.
pub fn open_for_write(loc: &Location) -> Result<Db> {
    if let Location::Sqlite(p) = loc {
        if let Some(dir) = p.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("creating the registry's folder {}", dir.display()))?;
        }
    }
    let mut db = Db::open(loc, true, false)?;
    migrate::migrate(&mut db, &clock::now())?;
    Ok(db)
}

/// Open an existing registry to read (`read_only`: no statement can write). Its schema must
/// be this build's (`registry init` upgrades an older one).
pub fn open_existing(loc: &Location, read_only: bool) -> Result<Db> {
    let mut db = Db::open(loc, false, read_only)?;
    let pending = migrate::pending(&mut db)?;
    if let Some(m) = pending.first() {
        bail!(
            "registry {} lacks schema version {} ({}); upgrade it with `memskill registry init --registry {}`",
            db.location,
            m.version,
            m.name,
            loc.display()
        );
    }
    Ok(db)
}
