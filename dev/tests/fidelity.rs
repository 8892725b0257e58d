//! The committed differential fixtures (generated from the reference implementation by
//! scripts/fidelity/diff.sh) agree with our implementation, component by component.

use std::path::Path;

#[test]
fn committed_reference_fixtures_agree() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../trainer/tests/fixtures/fidelity");
    let has_any = std::fs::read_dir(&dir)
        .map(|d| {
            d.filter_map(|e| e.ok())
                .any(|e| e.path().extension().is_some_and(|x| x == "json"))
        })
        .unwrap_or(false);
    if !has_any {
        panic!("no fidelity fixtures in {}", dir.display());
    }
    let reports = memskill_dev::fidelity::check_dir(&dir).expect("fixtures readable");
    let table = memskill_dev::fidelity::render_table(&reports);
    println!("{table}");
    for r in &reports {
        if let Some(why) = &r.skipped {
            eprintln!("{}: skipped: {why}", r.component);
            continue;
        }
        assert!(r.cases > 0, "{}: no cases", r.file);
        assert_eq!(
            r.agreeing, r.cases,
            "{} disagrees with the reference:\n{table}",
            r.component
        );
    }
}
