//! The shipped guard: its model is the one its data trains, the texts a memory system must
//! accept pass (the reference's released skills, the labelled ordinary texts of every
//! built-in fixture), the injection fixture is rejected, and the whole guard's in-sample
//! figures on the labelled sets stay above their floors.

use std::path::Path;

use memskill_guard::data::{self, Role};
use memskill_guard::learned::{self, Model};
use memskill_guard::{scan_skill, Guard};

#[test]
fn shipped_model_matches_its_data() {
    let fp = data::fingerprint(&data::source_dir()).unwrap();
    assert_eq!(
        learned::shipped().data_fingerprint,
        fp,
        "guard/model/guard.model was trained on other data than guard/data holds: run scripts/guard/train.sh"
    );
}

/// Retraining from the data gives the shipped file byte for byte (about 10 s).
#[test]
fn retraining_reproduces_the_shipped_model() {
    let dir = data::source_dir();
    let ex: Vec<_> = data::load(&dir, &[Role::Train, Role::Calibration])
        .unwrap()
        .into_iter()
        .flat_map(|(_, e)| e)
        .collect();
    let shipped = learned::shipped();
    let m = Model::train(&ex, shipped.tau, &data::fingerprint(&dir).unwrap());
    assert!(
        m.encode() == learned::SHIPPED_BYTES,
        "retraining differs from guard/model/guard.model: run scripts/guard/train.sh"
    );
}

#[test]
fn the_model_file_round_trips_and_refuses_garbage() {
    let m = learned::shipped();
    assert_eq!(&Model::decode(&m.encode()).unwrap(), m);
    assert!(Model::decode(b"nonsense").is_err());
    let mut cut = learned::SHIPPED_BYTES.to_vec();
    cut.truncate(cut.len() / 2);
    assert!(Model::decode(&cut).is_err());
    // a count larger than the file is refused before any allocation
    let mut big = learned::SHIPPED_BYTES[..16].to_vec();
    big.extend_from_slice(&u32::MAX.to_le_bytes());
    assert!(Model::decode(&big).is_err());
}

/// The paper's own released skill bank (both folders, 16 skills) passes as written; read
/// from the reference checkout at test time, never copied here.
#[test]
fn the_reference_released_skills_pass() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/reference/MemSkill/skills");
    let Ok(folders) = std::fs::read_dir(&root) else {
        println!("skipped: no reference checkout at {}", root.display());
        return;
    };
    let mut n = 0;
    for folder in folders.flatten() {
        for f in std::fs::read_dir(folder.path()).unwrap().flatten() {
            let p = f.path();
            if p.extension().is_none_or(|e| e != "md") {
                continue;
            }
            let text = std::fs::read_to_string(&p).unwrap();
            let name = p.file_stem().unwrap().to_string_lossy().replace('_', "-");
            let desc = text
                .split("## Description")
                .nth(1)
                .and_then(|t| t.split("\n## ").next())
                .unwrap_or(&text)
                .trim()
                .to_string();
            let f = scan_skill(&name, &desc, &text);
            assert!(f.is_none(), "{}: {}", p.display(), f.unwrap());
            n += 1;
        }
    }
    assert_eq!(n, 16, "the reference releases 16 skills");
}

/// Benign fixture lines the shipped guard still rejects, each with the reason: kept visible
/// here (the test fails when this list is wrong either way) rather than trained away.
const KNOWN_FALSE_REJECTIONS: &[(&str, &str)] = &[(
    "Record the token of appreciation Melanie gave Caroline after the charity run.",
    "the classifier reads 'record the token' as keeping a credential (p 0.93): 'token' in a \
     gift sense is rare in the labelled sets",
)];

#[test]
fn fixture_lines_meet_their_labels() {
    let d = data::source_dir();
    let mut rejected = Vec::new();
    let benign = std::fs::read_to_string(d.join("benign.txt")).unwrap();
    for line in benign.lines() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        if let Some(f) = Guard::shipped().scan_text(line) {
            println!("benign line rejected: {line:?}: {f}");
            rejected.push(line);
        }
    }
    let known: Vec<&str> = KNOWN_FALSE_REJECTIONS.iter().map(|k| k.0).collect();
    assert_eq!(
        rejected, known,
        "the benign lines the guard rejects changed"
    );
    for line in std::fs::read_to_string(d.join("injections.txt"))
        .unwrap()
        .lines()
    {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        assert!(
            Guard::shipped().scan_text(line).is_some(),
            "injection passed: {line:?}"
        );
    }
}

/// The guard on all labelled sets it ships with (in-sample for the classifier: a floor that
/// catches a rule or lexicon change that breaks many texts, not a generalisation figure;
/// the leave-one-author-out report is `scripts/guard/eval.sh`).
#[test]
fn in_sample_floors() {
    let sets = data::load(&data::source_dir(), &[Role::Train, Role::Calibration]).unwrap();
    let (mut un, mut ur, mut on, mut or) = (0usize, 0usize, 0usize, 0usize);
    let mut domain_rejected = Vec::new();
    for (entry, ex) in &sets {
        for e in ex.iter().filter(|e| e.kind == "skill") {
            let [n, d, i] = &e.fields;
            let r = scan_skill(n, d, i).is_some();
            if e.unsafe_ {
                un += 1;
                ur += r as usize;
            } else {
                on += 1;
                or += r as usize;
                if r && entry.role == Role::Calibration {
                    domain_rejected.push(e.text.clone());
                }
            }
        }
    }
    let (recall, fpr) = (ur as f64 / un as f64, or as f64 / on as f64);
    println!("in-sample: unsafe {ur}/{un} ({recall:.4}), ordinary {or}/{on} ({fpr:.4}); calibration rejected {}", domain_rejected.len());
    assert!(recall >= 0.985, "unsafe recall {recall:.4}");
    assert!(fpr <= 0.012, "ordinary false rejections {fpr:.4}");
    assert!(
        domain_rejected.is_empty(),
        "calibration texts rejected: {domain_rejected:#?}"
    );
}
