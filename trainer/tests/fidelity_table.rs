//! FIDELITY.md cannot drift from the reproduction configs: every row of a
//! "`configs/<name>.toml`" section that names one of our keys and its value (both in
//! backticks) must match the value that config resolves to (after defaults), and every
//! section must name an existing config.

use memskill_trainer::Config;
use std::path::{Path, PathBuf};

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("workspace root")
        .to_path_buf()
}

/// The text between the first pair of backticks of a table cell, if the cell is one
/// backticked item.
fn backticked(cell: &str) -> Option<&str> {
    let c = cell.trim();
    let inner = c.strip_prefix('`')?.strip_suffix('`')?;
    (!inner.contains('`')).then_some(inner)
}

fn lookup<'a>(v: &'a toml::Value, dotted: &str) -> Option<&'a toml::Value> {
    dotted.split('.').try_fold(v, |cur, k| cur.get(k))
}

/// Parses a TOML value written in a table cell (`3`, `"bank"`, `true`, `[1, 2]`).
fn parse_value(s: &str) -> Result<toml::Value, String> {
    let t: toml::Table = toml::from_str(&format!("v = {s}")).map_err(|e| e.to_string())?;
    Ok(t["v"].clone())
}

fn same(a: &toml::Value, b: &toml::Value) -> bool {
    match (a, b) {
        (toml::Value::Float(x), toml::Value::Integer(y))
        | (toml::Value::Integer(y), toml::Value::Float(x)) => (*x - *y as f64).abs() < 1e-12,
        // f32 fields (learning rates, coefficients) round-trip as the nearest f32
        (toml::Value::Float(x), toml::Value::Float(y)) => {
            (x - y).abs() <= 1e-6 * y.abs().max(1e-30)
        }
        _ => a == b,
    }
}

#[test]
fn fidelity_table_matches_the_reproduction_configs() {
    let root = repo_root();
    let text = std::fs::read_to_string(root.join("FIDELITY.md")).expect("FIDELITY.md exists");
    let mut current: Option<(String, toml::Value)> = None;
    let mut checked = 0usize;
    let mut sections = 0usize;
    let mut errors = Vec::new();
    for (lineno, line) in text.lines().enumerate() {
        let lineno = lineno + 1;
        if line.starts_with('#') {
            current = None;
            if let Some(start) = line.find("`configs/") {
                let rest = &line[start + 1..];
                let end = rest.find('`').expect("closing backtick in heading");
                let rel = &rest[..end];
                let cfg = Config::load(&root.join(rel), &[])
                    .unwrap_or_else(|e| panic!("FIDELITY.md:{lineno}: {rel}: {e:#}"));
                let v = toml::Value::try_from(&cfg).expect("config serialises");
                current = Some((rel.to_string(), v));
                sections += 1;
            }
            continue;
        }
        let Some((rel, resolved)) = &current else {
            continue;
        };
        if !line.starts_with('|') {
            continue;
        }
        let cells: Vec<&str> = line.trim().trim_matches('|').split('|').collect();
        if cells.len() < 5 {
            continue;
        }
        let (Some(key), Some(val)) = (backticked(cells[2]), backticked(cells[3])) else {
            continue;
        };
        if !key.contains('.') || key.contains(' ') {
            continue;
        }
        checked += 1;
        let want = match parse_value(val) {
            Ok(w) => w,
            Err(e) => {
                errors.push(format!(
                    "FIDELITY.md:{lineno}: value `{val}` is not TOML: {e}"
                ));
                continue;
            }
        };
        match lookup(resolved, key) {
            None => errors.push(format!("FIDELITY.md:{lineno}: {rel} has no key `{key}`")),
            Some(got) if !same(got, &want) => errors.push(format!(
                "FIDELITY.md:{lineno}: {rel} `{key}` = {got} but the table says {want}"
            )),
            Some(_) => {}
        }
    }
    assert!(
        sections >= 4,
        "FIDELITY.md names {sections} config sections, want the 4 benchmarks"
    );
    assert!(checked >= 40, "only {checked} key rows checked");
    assert!(
        errors.is_empty(),
        "{} mismatches:\n{}",
        errors.len(),
        errors.join("\n")
    );
}
