//! One connection to SQLite (rusqlite) or PostgreSQL (postgres), behind one small interface:
//! statements written once with `?` placeholders (rewritten to `$1, $2, ...` for
//! PostgreSQL), parameters as [`Param`], rows read back as JSON values, so every query of the
//! registry runs unchanged on both.
//!
//! Rows come back with each column as a `serde_json::Value`: integers and floats as numbers,
//! text as strings, JSON columns (JSONB there, `JSON_TEXT` here) parsed, blobs as hex strings.
//! That makes `registry export` and `registry query` print the same bytes from either store.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{anyhow, bail, Context, Result};
use postgres::types::{ToSql, Type};
use serde_json::Value;

/// A statement parameter.
#[derive(Debug, Clone, PartialEq)]
pub enum Param {
    Null,
    Int(i64),
    Real(f64),
    Text(String),
    /// A JSON document (JSONB on PostgreSQL, JSON text on SQLite).
    Json(Value),
    Blob(Vec<u8>),
}

impl From<&str> for Param {
    fn from(s: &str) -> Self {
        Param::Text(s.to_string())
    }
}
impl From<String> for Param {
    fn from(s: String) -> Self {
        Param::Text(s)
    }
}
impl From<&String> for Param {
    fn from(s: &String) -> Self {
        Param::Text(s.clone())
    }
}
impl From<i64> for Param {
    fn from(x: i64) -> Self {
        Param::Int(x)
    }
}
impl From<u64> for Param {
    fn from(x: u64) -> Self {
        Param::Int(i64::try_from(x).unwrap_or(i64::MAX))
    }
}
impl From<usize> for Param {
    fn from(x: usize) -> Self {
        Param::Int(i64::try_from(x).unwrap_or(i64::MAX))
    }
}
impl From<bool> for Param {
    fn from(x: bool) -> Self {
        Param::Int(i64::from(x))
    }
}
impl From<f64> for Param {
    fn from(x: f64) -> Self {
        // NaN and infinities are not numbers in JSON or comparable in SQL: stored as NULL
        if x.is_finite() {
            Param::Real(x)
        } else {
            Param::Null
        }
    }
}
impl From<Value> for Param {
    fn from(v: Value) -> Self {
        Param::Json(v)
    }
}
impl<T: Into<Param>> From<Option<T>> for Param {
    fn from(x: Option<T>) -> Self {
        x.map_or(Param::Null, Into::into)
    }
}

/// A row: column names and values, in the statement's order.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub columns: Vec<String>,
    pub values: Vec<Value>,
}

impl Row {
    /// The value of a column (`Value::Null` when absent).
    pub fn get(&self, name: &str) -> &Value {
        static NULL: Value = Value::Null;
        self.columns
            .iter()
            .position(|c| c == name)
            .map_or(&NULL, |i| &self.values[i])
    }
    /// A text column (`""` when NULL).
    pub fn text(&self, name: &str) -> String {
        match self.get(name) {
            Value::String(s) => s.clone(),
            Value::Null => String::new(),
            v => v.to_string(),
        }
    }
    pub fn int(&self, name: &str) -> i64 {
        self.get(name).as_i64().unwrap_or(0)
    }
    pub fn real(&self, name: &str) -> Option<f64> {
        self.get(name).as_f64()
    }
    /// The row as one JSON object (keys sorted, as serde_json's map keeps them).
    pub fn to_object(&self) -> Value {
        let mut m = serde_json::Map::new();
        for (c, v) in self.columns.iter().zip(&self.values) {
            m.insert(c.clone(), v.clone());
        }
        Value::Object(m)
    }
}

/// Which database a [`Db`] talks to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

impl Backend {
    pub fn as_str(self) -> &'static str {
        match self {
            Backend::Sqlite => "sqlite",
            Backend::Postgres => "postgres",
        }
    }
}

enum Conn {
    Sqlite(rusqlite::Connection),
    /// The client and its prepared statements by SQL text (as rusqlite's `prepare_cached`:
    /// a run's write repeats a few statements many times).
    Postgres(
        Box<postgres::Client>,
        std::collections::HashMap<String, postgres::Statement>,
    ),
}

/// The statement for `sql` on `c`, prepared once.
fn pg_statement(
    c: &mut postgres::Client,
    cache: &mut std::collections::HashMap<String, postgres::Statement>,
    sql: &str,
) -> Result<postgres::Statement> {
    if let Some(st) = cache.get(sql) {
        return Ok(st.clone());
    }
    let st = c.prepare(&dollar_placeholders(sql))?;
    cache.insert(sql.to_string(), st.clone());
    Ok(st)
}

/// An open registry database.
pub struct Db {
    conn: Conn,
    /// The file or the URL without its password (for messages).
    pub location: String,
    /// Inside [`Db::transaction`].
    in_tx: bool,
}

/// How long a writer waits for another process's write transaction on SQLite.
const SQLITE_BUSY: Duration = Duration::from_secs(120);

/// Where a registry lives: a SQLite file or a PostgreSQL URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    Sqlite(PathBuf),
    Postgres(String),
}

impl Location {
    /// `postgres://...` / `postgresql://...` is PostgreSQL; `sqlite://PATH`, `sqlite:PATH` or
    /// any other text is a SQLite file path.
    pub fn parse(s: &str) -> Location {
        let t = s.trim();
        if t.starts_with("postgres://") || t.starts_with("postgresql://") {
            return Location::Postgres(t.to_string());
        }
        let path = t
            .strip_prefix("sqlite://")
            .or_else(|| t.strip_prefix("sqlite:"))
            .unwrap_or(t);
        Location::Sqlite(PathBuf::from(path))
    }

    /// For messages: the file, or the URL with any password replaced by `***`.
    pub fn display(&self) -> String {
        match self {
            Location::Sqlite(p) => p.display().to_string(),
            Location::Postgres(u) => redact_password(u),
        }
    }
}

/// `postgres://user:secret@host/db` -> `postgres://user:***@host/db`, and a `password=`
/// parameter's value likewise.
pub fn redact_password(url: &str) -> String {
    let url = match url.find("password=") {
        Some(i) => {
            let start = i + "password=".len();
            let end = url[start..].find('&').map_or(url.len(), |j| start + j);
            format!("{}***{}", &url[..start], &url[end..])
        }
        None => url.to_string(),
    };
    let url = url.as_str();
    let Some(scheme_end) = url.find("://").map(|i| i + 3) else {
        return url.to_string();
    };
    let rest = &url[scheme_end..];
    let Some(at) = rest.find('@') else {
        return url.to_string();
    };
    match rest[..at].find(':') {
        Some(colon) => format!(
            "{}{}:***{}",
            &url[..scheme_end],
            &rest[..colon],
            &rest[at..]
        ),
        None => url.to_string(),
    }
}

impl Db {
    /// Open a registry database. A SQLite file is created when `create` (its folder must
    /// exist); `read_only` opens it so that no statement can write (`registry query`).
    pub fn open(loc: &Location, create: bool, read_only: bool) -> Result<Db> {
        match loc {
            Location::Sqlite(p) => Self::open_sqlite(p, create, read_only),
            Location::Postgres(url) => Self::open_postgres(url, read_only),
        }
    }

    fn open_sqlite(path: &Path, create: bool, read_only: bool) -> Result<Db> {
        use rusqlite::OpenFlags as F;
        let location = path.display().to_string();
        if let Ok(m) = std::fs::symlink_metadata(path) {
            if !m.file_type().is_file() {
                bail!("registry {location}: not a regular file (a registry is a SQLite file)");
            }
        } else if !create {
            bail!("registry {location} does not exist (create it with `memskill registry init`)");
        }
        let mut flags = F::SQLITE_OPEN_NO_MUTEX | F::SQLITE_OPEN_URI;
        flags |= if read_only {
            F::SQLITE_OPEN_READ_ONLY
        } else if create {
            F::SQLITE_OPEN_READ_WRITE | F::SQLITE_OPEN_CREATE
        } else {
            F::SQLITE_OPEN_READ_WRITE
        };
        let c = rusqlite::Connection::open_with_flags(path, flags)
            .with_context(|| format!("opening the registry {location}"))?;
        c.busy_timeout(SQLITE_BUSY)
            .with_context(|| format!("registry {location}"))?;
        if read_only {
            c.execute_batch("PRAGMA query_only = ON;")
        } else {
            // WAL: readers never block the writer; one writer at a time, the others wait
            // (busy timeout) inside BEGIN IMMEDIATE
            c.execute_batch(
                "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON;",
            )
        }
        .with_context(|| format!("registry {location}: is it a SQLite file?"))?;
        Ok(Db {
            conn: Conn::Sqlite(c),
            location,
            in_tx: false,
        })
    }

    fn open_postgres(url: &str, read_only: bool) -> Result<Db> {
        let location = redact_password(url);
        let mut cfg: postgres::Config = url
            .parse()
            .with_context(|| format!("registry URL {location}"))?;
        cfg.connect_timeout(Duration::from_secs(10));
        cfg.application_name("memskill-registry");
        // the password can stay out of the URL (and so out of configs and logs)
        // (a saved config holds `***` where the password was)
        if cfg.get_password().is_none_or(|p| p == b"***") {
            if let Ok(pw) = std::env::var("PGPASSWORD") {
                cfg.password(pw);
            }
        }
        let mut c = cfg
            .connect(postgres::NoTls)
            .with_context(|| format!("connecting to the registry at {location}"))?;
        // a writer waits for another's write lock as long as SQLite's would, then fails
        let mut setup = format!("SET lock_timeout = '{}s';", SQLITE_BUSY.as_secs());
        if read_only {
            setup.push_str("SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY;");
        }
        c.batch_execute(&setup)
            .with_context(|| format!("registry {location}"))?;
        Ok(Db {
            conn: Conn::Postgres(Box::new(c), Default::default()),
            location,
            in_tx: false,
        })
    }

    pub fn backend(&self) -> Backend {
        match self.conn {
            Conn::Sqlite(_) => Backend::Sqlite,
            Conn::Postgres(..) => Backend::Postgres,
        }
    }

    /// Run statements without parameters (migrations).
    pub fn batch(&mut self, sql: &str) -> Result<()> {
        let loc = self.location.clone();
        match &mut self.conn {
            Conn::Sqlite(c) => c.execute_batch(sql).map_err(|e| db_error(&loc, e.into())),
            Conn::Postgres(c, _) => c.batch_execute(sql).map_err(|e| db_error(&loc, e.into())),
        }
    }

    /// Run one statement; returns the rows it changed.
    pub fn execute(&mut self, sql: &str, params: &[Param]) -> Result<u64> {
        let loc = self.location.clone();
        match &mut self.conn {
            Conn::Sqlite(c) => {
                let mut st = c
                    .prepare_cached(sql)
                    .map_err(|e| db_error(&loc, e.into()))?;
                let n = st
                    .execute(rusqlite::params_from_iter(params.iter().map(sqlite_value)))
                    .map_err(|e| db_error(&loc, e.into()))?;
                Ok(n as u64)
            }
            Conn::Postgres(c, cache) => {
                let st = pg_statement(c, cache, sql).map_err(|e| db_error(&loc, e))?;
                let boxed = pg_params(params, st.params())?;
                let refs: Vec<&(dyn ToSql + Sync)> = boxed.iter().map(|b| b.as_ref()).collect();
                c.execute(&st, &refs).map_err(|e| db_error(&loc, e.into()))
            }
        }
    }

    /// Run a query; every row as [`Row`].
    pub fn query(&mut self, sql: &str, params: &[Param]) -> Result<Vec<Row>> {
        let loc = self.location.clone();
        match &mut self.conn {
            Conn::Sqlite(c) => sqlite_query(c, sql, params).map_err(|e| db_error(&loc, e)),
            Conn::Postgres(c, cache) => {
                pg_query(c, cache, sql, params).map_err(|e| db_error(&loc, e))
            }
        }
    }

    /// Run `f` in one transaction: committed when it returns `Ok`, rolled back otherwise.
    /// On SQLite the transaction takes the write lock at once (`BEGIN IMMEDIATE`), so two
    /// writers queue instead of failing on an upgrade; nested calls join the outer one.
    pub fn transaction<T>(&mut self, f: impl FnOnce(&mut Db) -> Result<T>) -> Result<T> {
        if self.in_tx {
            return f(self);
        }
        let begin = match self.backend() {
            Backend::Sqlite => "BEGIN IMMEDIATE",
            Backend::Postgres => "BEGIN",
        };
        self.batch(begin)?;
        self.in_tx = true;
        let out = f(self);
        self.in_tx = false;
        match out {
            Ok(v) => match self.batch("COMMIT") {
                Ok(()) => Ok(v),
                Err(e) => {
                    // (a failed COMMIT can leave SQLite's transaction open)
                    let _ = self.batch("ROLLBACK");
                    Err(e)
                }
            },
            Err(e) => {
                let _ = self.batch("ROLLBACK");
                Err(e)
            }
        }
    }
}

fn db_error(location: &str, e: anyhow::Error) -> anyhow::Error {
    e.context(format!("registry {location}"))
}

/// `?` placeholders (outside quoted text) to PostgreSQL's `$1, $2, ...`.
pub fn dollar_placeholders(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len() + 8);
    let (mut n, mut quote) = (0, None::<char>);
    for ch in sql.chars() {
        match (quote, ch) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '"') => quote = Some(ch),
            (None, '?') => {
                n += 1;
                out.push_str(&format!("${n}"));
                continue;
            }
            _ => {}
        }
        out.push(ch);
    }
    out
}

fn sqlite_value(p: &Param) -> rusqlite::types::Value {
    use rusqlite::types::Value as V;
    match p {
        Param::Null => V::Null,
        Param::Int(x) => V::Integer(*x),
        Param::Real(x) => V::Real(*x),
        Param::Text(s) => V::Text(s.clone()),
        Param::Json(v) => V::Text(v.to_string()),
        Param::Blob(b) => V::Blob(b.clone()),
    }
}

fn sqlite_query(c: &rusqlite::Connection, sql: &str, params: &[Param]) -> Result<Vec<Row>> {
    use rusqlite::types::ValueRef;
    let mut st = c.prepare_cached(sql)?;
    let cols: Vec<(String, bool)> = st
        .columns()
        .map(|c| {
            let json = c
                .decl_type()
                .is_some_and(|t| t.eq_ignore_ascii_case("JSON_TEXT"));
            (c.name().to_string(), json)
        })
        .collect();
    let mut rows = st.query(rusqlite::params_from_iter(params.iter().map(sqlite_value)))?;
    let mut out = Vec::new();
    while let Some(r) = rows.next()? {
        let mut values = Vec::with_capacity(cols.len());
        for (i, (name, json)) in cols.iter().enumerate() {
            let v = match r.get_ref(i)? {
                ValueRef::Null => Value::Null,
                ValueRef::Integer(x) => Value::from(x),
                ValueRef::Real(x) => {
                    serde_json::Number::from_f64(x).map_or(Value::Null, Value::Number)
                }
                ValueRef::Text(t) => {
                    let s = std::str::from_utf8(t)
                        .with_context(|| format!("column {name}: text is not UTF-8"))?;
                    if *json {
                        serde_json::from_str(s)
                            .with_context(|| format!("column {name}: stored JSON does not parse"))?
                    } else {
                        Value::String(s.to_string())
                    }
                }
                ValueRef::Blob(b) => Value::String(hex::encode(b)),
            };
            values.push(v);
        }
        out.push(Row {
            columns: cols.iter().map(|(n, _)| n.clone()).collect(),
            values,
        });
    }
    Ok(out)
}

/// Each parameter as the type the server expects for its position (a NULL needs the column's
/// type too; a `Text` bound to JSONB is parsed as JSON).
fn pg_params(params: &[Param], types: &[Type]) -> Result<Vec<Box<dyn ToSql + Sync>>> {
    if params.len() != types.len() {
        bail!(
            "the statement takes {} parameters, {} were given",
            types.len(),
            params.len()
        );
    }
    params
        .iter()
        .zip(types)
        .enumerate()
        .map(|(i, (p, t))| pg_param(p, t).with_context(|| format!("parameter {}", i + 1)))
        .collect()
}

/// PostgreSQL's text and JSONB cannot hold U+0000 (SQLite's can): it becomes U+FFFD there.
fn without_nul(s: &str) -> String {
    s.replace('\0', "\u{FFFD}")
}

fn json_without_nul(v: &Value) -> Value {
    match v {
        Value::String(s) if s.contains('\0') => Value::String(without_nul(s)),
        Value::Array(a) => Value::Array(a.iter().map(json_without_nul).collect()),
        Value::Object(o) => Value::Object(
            o.iter()
                .map(|(k, v)| (without_nul(k), json_without_nul(v)))
                .collect(),
        ),
        v => v.clone(),
    }
}

fn pg_param(p: &Param, t: &Type) -> Result<Box<dyn ToSql + Sync>> {
    let as_json = || -> Result<Option<Value>> {
        Ok(match p {
            Param::Null => None,
            Param::Json(v) => Some(json_without_nul(v)),
            Param::Text(s) => Some(json_without_nul(
                &serde_json::from_str(s).context("not JSON")?,
            )),
            Param::Int(x) => Some(Value::from(*x)),
            Param::Real(x) => Some(Value::from(*x)),
            Param::Blob(_) => bail!("a blob is not JSON"),
        })
    };
    let text = || -> Option<String> {
        match p {
            Param::Null => None,
            Param::Text(s) => Some(without_nul(s)),
            Param::Json(v) => Some(without_nul(&v.to_string())),
            Param::Int(x) => Some(x.to_string()),
            Param::Real(x) => Some(x.to_string()),
            Param::Blob(b) => Some(hex::encode(b)),
        }
    };
    Ok(match *t {
        Type::INT8 | Type::INT4 | Type::INT2 => {
            let x: Option<i64> = match p {
                Param::Null => None,
                Param::Int(x) => Some(*x),
                Param::Text(s) => Some(s.trim().parse().context("not an integer")?),
                _ => bail!("expected an integer for a {t} column"),
            };
            match *t {
                Type::INT8 => Box::new(x),
                Type::INT4 => Box::new(x.map(i32::try_from).transpose()?),
                _ => Box::new(x.map(i16::try_from).transpose()?),
            }
        }
        Type::FLOAT8 | Type::FLOAT4 => {
            let x: Option<f64> = match p {
                Param::Null => None,
                Param::Int(x) => Some(*x as f64),
                Param::Real(x) => Some(*x),
                Param::Text(s) => Some(s.trim().parse().context("not a number")?),
                _ => bail!("expected a number for a {t} column"),
            };
            if *t == Type::FLOAT8 {
                Box::new(x)
            } else {
                Box::new(x.map(|v| v as f32))
            }
        }
        Type::BOOL => Box::new(match p {
            Param::Null => None,
            Param::Int(x) => Some(*x != 0),
            _ => bail!("expected a boolean"),
        }),
        Type::JSONB | Type::JSON => Box::new(as_json()?),
        Type::BYTEA => Box::new(match p {
            Param::Null => None,
            Param::Blob(b) => Some(b.clone()),
            _ => bail!("expected bytes for a bytea column"),
        }),
        _ => Box::new(text()),
    })
}

fn pg_query(
    c: &mut postgres::Client,
    cache: &mut std::collections::HashMap<String, postgres::Statement>,
    sql: &str,
    params: &[Param],
) -> Result<Vec<Row>> {
    let st = pg_statement(c, cache, sql)?;
    let boxed = pg_params(params, st.params())?;
    let refs: Vec<&(dyn ToSql + Sync)> = boxed.iter().map(|b| b.as_ref()).collect();
    let rows = c.query(&st, &refs)?;
    let columns: Vec<String> = st.columns().iter().map(|c| c.name().to_string()).collect();
    let mut out = Vec::with_capacity(rows.len());
    for r in rows {
        let mut values = Vec::with_capacity(columns.len());
        for (i, col) in st.columns().iter().enumerate() {
            values.push(
                pg_value(&r, i, col.type_())
                    .with_context(|| format!("column {} ({})", col.name(), col.type_()))?,
            );
        }
        out.push(Row {
            columns: columns.clone(),
            values,
        });
    }
    Ok(out)
}

/// A pgvector value, read from its binary form (dimensions as a big-endian u16, an unused
/// u16, then that many big-endian f32s).
struct PgVector(Vec<f32>);

impl PgVector {
    /// pgvector's text form: `[0.9,0.1,0]`.
    fn text(&self) -> String {
        let parts: Vec<String> = self.0.iter().map(|x| x.to_string()).collect();
        format!("[{}]", parts.join(","))
    }
}

impl<'a> postgres::types::FromSql<'a> for PgVector {
    fn from_sql(
        _: &Type,
        raw: &'a [u8],
    ) -> std::result::Result<Self, Box<dyn std::error::Error + Sync + Send>> {
        let dim = raw
            .get(..2)
            .map(|b| usize::from(u16::from_be_bytes([b[0], b[1]])))
            .ok_or("a pgvector value shorter than its header")?;
        let body = raw.get(4..).unwrap_or_default();
        if body.len() != dim * 4 {
            return Err(format!(
                "a pgvector value of {dim} dimensions with {} bytes of data",
                body.len()
            )
            .into());
        }
        Ok(PgVector(
            body.chunks_exact(4)
                .map(|c| f32::from_be_bytes([c[0], c[1], c[2], c[3]]))
                .collect(),
        ))
    }
    fn accepts(t: &Type) -> bool {
        t.name() == "vector"
    }
}

fn pg_value(r: &postgres::Row, i: usize, t: &Type) -> Result<Value> {
    let num = |x: Option<f64>| {
        x.and_then(serde_json::Number::from_f64)
            .map_or(Value::Null, Value::Number)
    };
    Ok(match *t {
        Type::INT8 => r
            .try_get::<_, Option<i64>>(i)?
            .map_or(Value::Null, Value::from),
        Type::INT4 => r
            .try_get::<_, Option<i32>>(i)?
            .map_or(Value::Null, Value::from),
        Type::INT2 => r
            .try_get::<_, Option<i16>>(i)?
            .map_or(Value::Null, Value::from),
        Type::FLOAT8 => num(r.try_get::<_, Option<f64>>(i)?),
        Type::FLOAT4 => num(r.try_get::<_, Option<f32>>(i)?.map(f64::from)),
        Type::BOOL => r
            .try_get::<_, Option<bool>>(i)?
            .map_or(Value::Null, Value::from),
        Type::JSONB | Type::JSON => r.try_get::<_, Option<Value>>(i)?.unwrap_or(Value::Null),
        Type::BYTEA => r
            .try_get::<_, Option<Vec<u8>>>(i)?
            .map_or(Value::Null, |b| Value::String(hex::encode(b))),
        Type::TEXT | Type::VARCHAR | Type::NAME | Type::BPCHAR => r
            .try_get::<_, Option<String>>(i)?
            .map_or(Value::Null, Value::String),
        // pgvector's column (schema 2): shown in pgvector's own text form
        _ if t.name() == "vector" => r
            .try_get::<_, Option<PgVector>>(i)?
            .map_or(Value::Null, |v| Value::String(v.text())),
        _ => {
            return Err(anyhow!(
                "cannot show this type; cast it in the query (::text, ::float8 or ::bigint)"
            ))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_numbered_outside_quotes() {
        assert_eq!(
            dollar_placeholders("SELECT ? , '?' , \"a?\" , ?"),
            "SELECT $1 , '?' , \"a?\" , $2"
        );
    }

    #[test]
    fn locations_and_redaction() {
        assert_eq!(
            Location::parse("postgres://u:pw@h:5/db"),
            Location::Postgres("postgres://u:pw@h:5/db".into())
        );
        assert_eq!(
            Location::parse("sqlite://runs/r.db"),
            Location::Sqlite("runs/r.db".into())
        );
        assert_eq!(Location::parse("r.db"), Location::Sqlite("r.db".into()));
        assert_eq!(
            redact_password("postgres://u:pw@h:5/db"),
            "postgres://u:***@h:5/db"
        );
        assert_eq!(redact_password("postgres://u@h/db"), "postgres://u@h/db");
        assert_eq!(
            redact_password("postgres://h/db?password=pw&sslmode=disable"),
            "postgres://h/db?password=***&sslmode=disable"
        );
        assert_eq!(
            json_without_nul(&serde_json::json!({"a\u{0}": ["x\u{0}y"]})),
            serde_json::json!({"a\u{FFFD}": ["x\u{FFFD}y"]})
        );
    }

    #[test]
    fn sqlite_rows_parse_json_columns_and_keep_text() {
        let dir = tempfile::tempdir().unwrap();
        let mut db = Db::open(&Location::Sqlite(dir.path().join("r.db")), true, false).unwrap();
        db.batch("CREATE TABLE t (a TEXT, j JSON_TEXT, x DOUBLE PRECISION, n BIGINT)")
            .unwrap();
        db.execute(
            "INSERT INTO t VALUES (?, ?, ?, ?)",
            &[
                "{\"k\":1}".into(),
                serde_json::json!({"k": 1}).into(),
                0.5.into(),
                Param::Null,
            ],
        )
        .unwrap();
        let rows = db.query("SELECT * FROM t", &[]).unwrap();
        assert_eq!(rows[0].get("a"), &Value::String("{\"k\":1}".into()));
        assert_eq!(rows[0].get("j"), &serde_json::json!({"k": 1}));
        assert_eq!(rows[0].real("x"), Some(0.5));
        assert_eq!(rows[0].get("n"), &Value::Null);
    }

    #[test]
    fn a_failed_transaction_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let mut db = Db::open(&Location::Sqlite(dir.path().join("r.db")), true, false).unwrap();
        db.batch("CREATE TABLE t (a TEXT)").unwrap();
        let r: Result<()> = db.transaction(|db| {
            db.execute("INSERT INTO t VALUES (?)", &["x".into()])?;
            bail!("stop")
        });
        assert!(r.is_err());
        assert!(db.query("SELECT * FROM t", &[]).unwrap().is_empty());
    }

    #[test]
    fn a_missing_file_is_named_and_not_created() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("none.db");
        let e = Db::open(&Location::Sqlite(p.clone()), false, false)
            .err()
            .unwrap();
        assert!(format!("{e:#}").contains("does not exist"), "{e:#}");
        assert!(!p.exists());
    }
}
