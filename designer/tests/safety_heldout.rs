//! Held-out safety set: injection-style skill texts are rejected, ordinary ones pass.

use memskill_designer::safety_scan;

fn lines(path: &str) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(String::from)
        .collect()
}

#[test]
fn injections_rejected_ordinary_pass() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/safety");
    let bad = lines(&format!("{dir}/injections.txt"));
    let good = lines(&format!("{dir}/benign.txt"));
    assert!(bad.len() >= 25 && good.len() >= 25);
    let missed: Vec<&String> = bad.iter().filter(|t| safety_scan(t).is_ok()).collect();
    let flagged: Vec<(String, String)> = good
        .iter()
        .filter_map(|t| safety_scan(t).err().map(|r| (t.clone(), r)))
        .collect();
    assert!(missed.is_empty(), "injections not caught: {missed:#?}");
    assert!(flagged.is_empty(), "ordinary skills flagged: {flagged:#?}");
    // Every rule is exercised by the injection set.
    for rule in memskill_designer::safety_rules() {
        let tag = format!("`{}`", rule.id);
        assert!(
            bad.iter()
                .any(|t| safety_scan(t).err().is_some_and(|r| r.contains(&tag))),
            "rule {} unused",
            rule.id
        );
    }
    // The seed bank passes.
    for s in memskill_core::SkillBank::seed().skills() {
        assert!(
            safety_scan(&s.instructions).is_ok() && safety_scan(&s.description).is_ok(),
            "{}",
            s.name
        );
    }
}
