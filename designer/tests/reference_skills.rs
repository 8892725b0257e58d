//! The reference's released skill banks (`skills/conversational_skills`,
//! `skills/embodied_task_skills` of the MemSkill checkout; read at test time, never copied
//! here) import as they are, pass the guard, round-trip through an export, and read as the
//! reference holds its skills in memory: where a released file is one of the reference's
//! initial operations unchanged, its description and instructions equal the strings of the
//! checkout's `prompts/operation_templates.py` byte for byte.

use std::path::PathBuf;
use std::process::Command;

use memskill_core::ActionKind;
use memskill_designer::export::{bank_diff, export_bank, import_bank, load_bank};

fn reference() -> Option<PathBuf> {
    let root = std::env::var_os("MEMSKILL_REFERENCE").map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/reference/MemSkill"),
        PathBuf::from,
    );
    if root.join("skills").is_dir() {
        Some(root)
    } else {
        println!("skipped: no reference checkout at {}", root.display());
        None
    }
}

/// The checkout's initial operations, as its own Python defines them: name -> (description,
/// instruction_template, update_type).
fn initial_operations(root: &PathBuf) -> Option<serde_json::Value> {
    let code = "import json, sys; sys.path.insert(0, sys.argv[1]); \
                from prompts.operation_templates import get_initial_operations as g; \
                print(json.dumps(g(include_noop=True)))";
    let out = Command::new("python3")
        .args(["-c", code])
        .arg(root)
        .output();
    match out {
        Ok(o) if o.status.success() => Some(serde_json::from_slice(&o.stdout).unwrap()),
        Ok(o) => {
            println!(
                "skipped the byte check: {}",
                String::from_utf8_lossy(&o.stderr)
            );
            None
        }
        Err(e) => {
            println!("skipped the byte check: python3: {e}");
            None
        }
    }
}

#[test]
fn the_released_banks_import_validate_and_round_trip() {
    let Some(root) = reference() else { return };
    let ops = initial_operations(&root);
    let mut unchanged = Vec::new();
    for (folder, n) in [("conversational_skills", 9), ("embodied_task_skills", 7)] {
        let dir = root.join("skills").join(folder);
        let bank = import_bank(&dir).unwrap_or_else(|e| panic!("{folder}: {e}"));
        assert_eq!(bank.len(), n, "{folder}");
        for s in bank.skills() {
            println!("{folder}: {} ({})", s.name, s.action);
            assert!(!s.name.contains('_'));
            assert_eq!(s.provenance.len(), 1);
            assert!(s.provenance[0].starts_with(&format!("imported:reference:{folder}/")));
            assert!(s.instructions.starts_with("Skill: "));
            assert!(s.instructions.ends_with(" only.\n"));
        }
        assert_eq!(bank.get("delete").unwrap().action, ActionKind::Delete);
        assert_eq!(bank.get("noop").unwrap().action, ActionKind::Noop);
        // load_bank (what run.skill_bank uses) reads the folder the same way
        assert_eq!(bank_diff(&bank, &load_bank(&dir).unwrap()), "");
        let out = tempfile::tempdir().unwrap();
        export_bank(&bank, &out.path().join("x"), false).unwrap();
        let back = import_bank(&out.path().join("x")).unwrap();
        assert_eq!(
            bank_diff(&bank, &back),
            "",
            "{folder}: the export round trip"
        );
        assert_eq!(
            back.get("delete").unwrap().provenance,
            bank.get("delete").unwrap().provenance
        );
        let Some(ops) = &ops else { continue };
        for s in bank.skills() {
            let Some(op) = ops.get(s.name.as_str()) else {
                continue;
            };
            if op["description"] != s.description.as_str() {
                continue; // evolved from the initial operation
            }
            assert_eq!(
                s.instructions, op["instruction_template"],
                "{folder}/{}",
                s.name
            );
            assert_eq!(s.action.as_str(), op["update_type"]);
            unchanged.push(format!("{folder}/{}", s.name));
        }
    }
    if ops.is_some() {
        println!("byte-equal to the reference's initial operations: {unchanged:?}");
        assert!(unchanged.len() >= 4, "{unchanged:?}");
    }
}

#[test]
fn a_folder_of_unrelated_markdown_is_not_taken_for_a_bank() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("notes.md"), "# Notes\n\nnothing here\n").unwrap();
    let e = import_bank(d.path()).unwrap_err().to_string();
    assert!(e.contains("Action type"), "{e}");
    std::fs::write(
        d.path().join("bad_one.md"),
        "# Bad\n\n## Description\n\nd\n\nAction type: SOMETIMES only.\n",
    )
    .unwrap();
    let e = import_bank(d.path()).unwrap_err().to_string();
    assert!(e.contains("bad_one.md") && e.contains("line 7"), "{e}");
}
