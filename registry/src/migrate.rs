//! Versioned schema migrations. Each migration is one SQL file per backend
//! (`registry/migrations/{sqlite,postgres}/NNNN_name.sql`, compiled in); `schema_migration`
//! records which ran, when, and the sha256 of the text that ran, so a registry is upgraded
//! by running the ones it lacks, in order, each in the transaction that records it.
//!
//! A registry whose recorded text differs from this build's (an edited migration), or that
//! holds a migration this build does not know (written by a newer memskill), is refused with
//! both named; nothing is guessed.

use anyhow::{bail, Result};
use memskill_core::sha256_hex;

use crate::db::{Backend, Db, Param};

/// One schema version.
pub struct Migration {
    pub version: i64,
    pub name: &'static str,
    sqlite: &'static str,
    postgres: &'static str,
}

impl Migration {
    pub fn sql(&self, b: Backend) -> &'static str {
        match b {
            Backend::Sqlite => self.sqlite,
            Backend::Postgres => self.postgres,
        }
    }
    pub fn checksum(&self, b: Backend) -> String {
        sha256_hex(self.sql(b))
    }
}

/// Every migration, oldest first.
pub const MIGRATIONS: &[Migration] = &[
    Migration {
        version: 1,
        name: "init",
        sqlite: include_str!("../migrations/sqlite/0001_init.sql"),
        postgres: include_str!("../migrations/postgres/0001_init.sql"),
    },
    Migration {
        version: 2,
        name: "pgvector",
        sqlite: include_str!("../migrations/sqlite/0002_pgvector.sql"),
        postgres: include_str!("../migrations/postgres/0002_pgvector.sql"),
    },
];

/// Whether the registry's `memory` table has schema 2's pgvector column (PostgreSQL with the
/// extension; never SQLite).
pub fn has_vector_column(db: &mut Db) -> Result<bool> {
    if db.backend() != Backend::Postgres {
        return Ok(false);
    }
    Ok(!db
        .query(
            "SELECT column_name::text AS name FROM information_schema.columns
             WHERE table_schema = current_schema() AND table_name = 'memory' AND column_name = 'embedding_vector'",
            &[],
        )?
        .is_empty())
}

/// The schema version this build writes.
pub fn current_version() -> i64 {
    MIGRATIONS.last().map_or(0, |m| m.version)
}

/// A migration as a registry recorded it.
#[derive(Debug, Clone, PartialEq)]
pub struct Applied {
    pub version: i64,
    pub name: String,
    pub checksum: String,
    pub applied_at: String,
}

/// The key of the PostgreSQL advisory lock every registry writer holds for its transaction
/// (migrations and writes queue on it, as SQLite writers queue on the file lock).
pub const PG_WRITE_LOCK: i64 = 0x6d65_6d73_6b69_6c6c; // "memskill"

/// Take the registry's write lock for the current transaction (PostgreSQL; on SQLite
/// `BEGIN IMMEDIATE` already holds it).
pub fn lock_for_write(db: &mut Db) -> Result<()> {
    if db.backend() == Backend::Postgres {
        db.execute("SELECT pg_advisory_xact_lock(?)", &[PG_WRITE_LOCK.into()])?;
    }
    Ok(())
}

const CREATE_HISTORY: &str = "CREATE TABLE IF NOT EXISTS schema_migration (
  version BIGINT PRIMARY KEY, name TEXT NOT NULL, checksum TEXT NOT NULL, applied_at TEXT NOT NULL)";

/// The migrations recorded in the registry (none in a new database).
pub fn applied(db: &mut Db) -> Result<Vec<Applied>> {
    let exists = match db.backend() {
        Backend::Sqlite => db.query(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'schema_migration'",
            &[],
        )?,
        Backend::Postgres => db.query(
            "SELECT tablename::text AS name FROM pg_tables WHERE schemaname = current_schema() AND tablename = 'schema_migration'",
            &[],
        )?,
    };
    if exists.is_empty() {
        return Ok(Vec::new());
    }
    Ok(db
        .query(
            "SELECT version, name, checksum, applied_at FROM schema_migration ORDER BY version",
            &[],
        )?
        .into_iter()
        .map(|r| Applied {
            version: r.int("version"),
            name: r.text("name"),
            checksum: r.text("checksum"),
            applied_at: r.text("applied_at"),
        })
        .collect())
}

/// Check the recorded migrations against this build's: the ones still to run (empty when
/// the schema is current).
pub fn pending(db: &mut Db) -> Result<Vec<&'static Migration>> {
    let done = applied(db)?;
    let b = db.backend();
    for a in &done {
        let Some(m) = MIGRATIONS.iter().find(|m| m.version == a.version) else {
            bail!(
                "registry {}: schema version {} ({}) was written by a newer memskill (this one knows up to {}); upgrade memskill",
                db.location,
                a.version,
                a.name,
                current_version()
            );
        };
        if m.checksum(b) != a.checksum {
            bail!(
                "registry {}: migration {} ({}) recorded checksum {} but this build's text has {}; the migration was edited after it ran",
                db.location,
                a.version,
                a.name,
                a.checksum,
                m.checksum(b)
            );
        }
    }
    Ok(MIGRATIONS
        .iter()
        .filter(|m| !done.iter().any(|a| a.version == m.version))
        .collect())
}

/// Bring the schema up to date; returns the versions applied now. Safe to run from several
/// processes at once: they take the write lock, and the later ones find nothing to do.
pub fn migrate(db: &mut Db, now: &str) -> Result<Vec<i64>> {
    db.transaction(|db| {
        lock_for_write(db)?;
        db.batch(CREATE_HISTORY)?;
        let todo = pending(db)?;
        let b = db.backend();
        let mut ran = Vec::new();
        for m in todo {
            db.batch(m.sql(b))?;
            db.execute(
                "INSERT INTO schema_migration (version, name, checksum, applied_at) VALUES (?, ?, ?, ?)",
                &[m.version.into(), m.name.into(), m.checksum(b).into(), Param::from(now)],
            )?;
            ran.push(m.version);
        }
        Ok(ran)
    })
}

/// Table and column names of a migration file's `CREATE TABLE` statements, in order (the
/// two backends' files must agree on them).
pub fn tables_and_columns(sql: &str) -> Vec<(String, Vec<String>)> {
    let mut out = Vec::new();
    let mut lines = sql.lines().map(str::trim);
    while let Some(l) = lines.next() {
        let Some(rest) = l.strip_prefix("CREATE TABLE ") else {
            continue;
        };
        let name = rest.split_whitespace().next().unwrap_or("").to_string();
        let mut cols = Vec::new();
        for c in lines.by_ref() {
            if c.starts_with(");") {
                break;
            }
            let first = c.split_whitespace().next().unwrap_or("");
            if !first.is_empty() && first != "PRIMARY" && !first.starts_with("--") {
                cols.push(first.to_string());
            }
        }
        out.push((name, cols));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_backends_define_the_same_tables_and_columns() {
        for m in MIGRATIONS {
            let a = tables_and_columns(m.sql(Backend::Sqlite));
            let b = tables_and_columns(m.sql(Backend::Postgres));
            if m.version == 1 {
                assert!(a.len() >= 9, "{a:?}");
            }
            assert_eq!(a, b, "migration {}", m.version);
        }
    }

    #[test]
    fn versions_increase() {
        assert!(MIGRATIONS.windows(2).all(|w| w[0].version < w[1].version));
        assert_eq!(MIGRATIONS[0].version, 1);
    }
}
