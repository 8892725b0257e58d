//! Mutation fuzzing of every reader of untrusted input: the executor's action parser, the
//! designer's JSON reader, the SKILL.md reader and folder importer, the config loader and
//! each dataset loader. Inputs are seeded from real files (fixtures, configs, exports) and
//! mutated (bit flips, byte and token insertions, deletions, truncations, splices, repeats);
//! a reader may reject an input, never panic.
//!
//! The budget is `MEMSKILL_FUZZ_ITERS` mutations per target (default 200, so the test
//! suite stays fast); `scripts/reliability.sh` runs it at scale. Each target prints one
//! line `fuzz <target>: <executions> executions, <panics> panics` for the script's table.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn iters() -> usize {
    std::env::var("MEMSKILL_FUZZ_ITERS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200)
}

/// Tokens that matter to the readers, inserted whole.
const TOKENS: &[&str] = &[
    "ACTION:",
    "INSERT",
    "UPDATE",
    "DELETE",
    "NOOP",
    "MEMORY_INDEX:",
    "UPDATED_MEMORY:",
    "MEMORY_ITEM:",
    "\n",
    "{",
    "}",
    "[",
    "]",
    "\"",
    ":",
    ",",
    "---\n",
    "name:",
    "description:",
    "null",
    "NaN",
    "-1",
    "1e309",
    "18446744073709551616",
    "\u{0}",
    "\u{feff}",
    "é",
    "😀",
    "\\u0000",
    "\\ud800",
    "=",
    "[[",
    "]]",
    "'''",
    "\"\"\"",
    "inf",
    "true",
    "9999999999",
];

fn mutate(rng: &mut ChaCha8Rng, seeds: &[Vec<u8>]) -> Vec<u8> {
    let mut v = seeds[rng.random_range(0..seeds.len())].clone();
    for _ in 0..rng.random_range(1..=8) {
        let len = v.len();
        match rng.random_range(0..8) {
            0 if len > 0 => {
                let i = rng.random_range(0..len);
                v[i] ^= 1 << rng.random_range(0..8);
            }
            1 => {
                let i = rng.random_range(0..=len);
                v.insert(i, rng.random());
            }
            2 => {
                let i = rng.random_range(0..=len);
                let t = TOKENS[rng.random_range(0..TOKENS.len())].as_bytes();
                v.splice(i..i, t.iter().copied());
            }
            3 if len > 0 => {
                let a = rng.random_range(0..len);
                let b = (a + rng.random_range(1..=64)).min(len);
                v.drain(a..b);
            }
            4 => v.truncate(rng.random_range(0..=len)),
            5 if len > 0 => {
                // repeat a chunk (deep nesting, long lines)
                let a = rng.random_range(0..len);
                let b = (a + rng.random_range(1..=32)).min(len);
                let chunk: Vec<u8> = v[a..b].to_vec();
                for _ in 0..rng.random_range(1..=20) {
                    v.splice(a..a, chunk.iter().copied());
                }
            }
            6 => {
                // splice in a piece of another seed
                let o = &seeds[rng.random_range(0..seeds.len())];
                if !o.is_empty() {
                    let a = rng.random_range(0..o.len());
                    let b = (a + rng.random_range(1..=128)).min(o.len());
                    let i = rng.random_range(0..=len);
                    v.splice(i..i, o[a..b].iter().copied());
                }
            }
            _ if len > 1 => {
                let i = rng.random_range(0..len);
                let j = rng.random_range(0..len);
                v.swap(i, j);
            }
            _ => {}
        }
    }
    v
}

/// Run `target` on `iters()` mutants of `seeds` (and on the seeds themselves); returns the
/// panics with the input that caused each.
fn fuzz(name: &str, seeds: Vec<Vec<u8>>, target: impl Fn(&[u8])) -> usize {
    assert!(!seeds.is_empty(), "{name}: no seeds");
    let mut rng = ChaCha8Rng::seed_from_u64(name.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ b as u64).wrapping_mul(0x100_0000_01b3)
    }));
    let n = iters();
    let mut panics = Vec::new();
    // the panic hook is process-wide: one target at a time swaps it
    static HOOK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _guard = HOOK.lock().unwrap_or_else(|p| p.into_inner());
    let prev = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let inputs = seeds
        .clone()
        .into_iter()
        .chain((0..n).map(|_| mutate(&mut rng, &seeds)));
    let mut executions = 0usize;
    for input in inputs {
        executions += 1;
        if catch_unwind(AssertUnwindSafe(|| target(&input))).is_err() {
            panics.push(String::from_utf8_lossy(&input[..input.len().min(300)]).to_string());
        }
    }
    std::panic::set_hook(prev);
    println!(
        "fuzz {name}: {executions} executions, {} panics",
        panics.len()
    );
    assert!(
        panics.is_empty(),
        "{name}: panicked on {:#?}",
        &panics[..panics.len().min(3)]
    );
    executions
}

fn files(dir: &Path, ext: &str) -> Vec<Vec<u8>> {
    let mut v: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == ext))
        .collect();
    v.sort();
    v.iter().map(|p| std::fs::read(p).unwrap()).collect()
}

#[test]
fn fuzz_action_parser() {
    let seeds: Vec<Vec<u8>> = [
        "ACTION: INSERT\nMEMORY_ITEM: Alex moved to Tokyo on 3 May.\n",
        "ACTION: UPDATE\nMEMORY_INDEX: 1\nUPDATED_MEMORY: Alex lives in Tokyo.\n\nACTION: DELETE\nMEMORY_INDEX: 0\n",
        "ACTION: NOOP\n",
        "<think>plan</think>\n```\nACTION: INSERT\nMEMORY_ITEM: a\n```",
        "[{\"action\": \"INSERT\", \"memory\": \"x\"}, {\"action\": \"DELETE\", \"index\": 2}]",
    ]
    .iter()
    .map(|s| s.as_bytes().to_vec())
    .collect();
    fuzz("action-parser", seeds, |b| {
        let text = String::from_utf8_lossy(b);
        for n in [0, 1, 5] {
            let _ = memskill_executor::parse_actions(&text, n, None);
            let _ = memskill_executor::parse_response(&text, n);
        }
    });
}

#[test]
fn fuzz_designer_json_reader() {
    let seeds: Vec<Vec<u8>> = [
        r#"{"action": "refine", "skill": "capture-facts", "changes": {"description": "d", "instruction_template": "t"}}"#,
        r#"[{"action": "add_new", "new_skill": {"name": "track-dates", "description": "d", "instruction_template": "t"}}, {"action": "no_change"}]"#,
        "Here is my answer:\n```json\n{\"changes\": [{\"action\": \"refine\", \"skill\": \"a\"}]}\n```",
        r#"{"edits": [{"type": "add", "name": "x", "description": "y", "content": "z", "reason": "r"}]}"#,
    ]
    .iter()
    .map(|s| s.as_bytes().to_vec())
    .collect();
    fuzz("designer-json", seeds, |b| {
        let _ = memskill_designer::parse_changes(&String::from_utf8_lossy(b));
    });
}

#[test]
fn fuzz_skill_md_reader_and_importer() {
    // seeds: an exported bank's SKILL.md files
    let d = tempfile::tempdir().unwrap();
    let bank = memskill_core::SkillBank::seed();
    memskill_designer::export_bank(&bank, &d.path().join("bank"), false).unwrap();
    let mut seeds = Vec::new();
    for e in std::fs::read_dir(d.path().join("bank")).unwrap() {
        let p = e.unwrap().path().join("SKILL.md");
        if p.exists() {
            seeds.push(std::fs::read(p).unwrap());
        }
    }
    let n = seeds.len();
    let dir = d.path().join("bank");
    let victim = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path().join("SKILL.md")))
        .find(|p| p.exists())
        .unwrap();
    fuzz("skill-md", seeds, |b| {
        let text = String::from_utf8_lossy(b);
        let _ = memskill_designer::read_skill_md(&text, Path::new("fuzz/SKILL.md"));
        // the whole importer, on a bank folder with this SKILL.md in it
        std::fs::write(&victim, b).unwrap();
        let _ = memskill_designer::import_bank(&dir);
    });
    assert!(n >= 4);
}

#[test]
fn fuzz_config_loader() {
    let seeds = files(&root().join("configs"), "toml");
    fuzz("config", seeds, |b| {
        let _ = memskill_trainer::config::Config::from_toml_str(
            &String::from_utf8_lossy(b),
            &[],
            "fuzz.toml",
        );
    });
}

fn fuzz_dataset(name: &str, kind: memskill_datasets::DatasetKind, prefix: &str) {
    let fx = root().join("datasets").join("tests").join("fixtures");
    let mut seeds: Vec<Vec<u8>> = std::fs::read_dir(&fx)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with(prefix))
        .map(|p| std::fs::read(p).unwrap())
        .collect();
    seeds.sort();
    let d = tempfile::tempdir().unwrap();
    let path = d.path().join(format!("{name}.json"));
    let opts = memskill_datasets::LoadOptions::default();
    fuzz(name, seeds, |b| {
        std::fs::write(&path, b).unwrap();
        let _ = memskill_datasets::load(kind, &path, &opts);
    });
}

#[test]
fn fuzz_locomo_loader() {
    fuzz_dataset("locomo", memskill_datasets::DatasetKind::Locomo, "locomo_");
}

#[test]
fn fuzz_longmemeval_loader() {
    fuzz_dataset(
        "longmemeval",
        memskill_datasets::DatasetKind::LongMemEval,
        "longmemeval_",
    );
}

#[test]
fn fuzz_hotpotqa_loader() {
    fuzz_dataset(
        "hotpotqa",
        memskill_datasets::DatasetKind::HotpotQa,
        "hotpotqa_",
    );
}

/// The entries of a zip, in order.
fn zip_entries(bytes: &[u8]) -> Vec<(String, Vec<u8>)> {
    use std::io::Read;
    let mut z = zip::ZipArchive::new(std::io::Cursor::new(bytes)).unwrap();
    (0..z.len())
        .map(|i| {
            let mut f = z.by_index(i).unwrap();
            let mut b = Vec::new();
            f.read_to_end(&mut b).unwrap();
            (f.name().unwrap().into_owned(), b)
        })
        .collect()
}

/// Issue 46, case 1: the reference-checkpoint reader (pickle graph, tensor views, the
/// operation bank) on mutated `data.pkl`s inside the fixture's real zip (its storages
/// kept), and on hand-built hostile tensors.
#[test]
fn fuzz_reference_checkpoint_reader() {
    use memskill_trainer::refimport::torch::craft;
    let p = root().join("trainer/tests/fixtures/fidelity/reference_checkpoint.json");
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap();
    let real = hex::decode(v["cases"][0]["input"]["checkpoint_hex"].as_str().unwrap()).unwrap();
    let entries = zip_entries(&real);
    let pkl_name = entries
        .iter()
        .find(|e| e.0.ends_with("/data.pkl"))
        .unwrap()
        .0
        .clone();
    let mut seeds = vec![entries.iter().find(|e| e.0 == pkl_name).unwrap().1.clone()];
    for (w, shape, stride) in [
        (1, vec![2, 2], vec![2, 1]),
        (3, vec![1 << 40], vec![1]),
        (0, vec![100_000_000], vec![0]),
    ] {
        seeds.push(craft::tensor_pickle(w, 4, 0, &shape, &stride));
    }
    fuzz("reference-checkpoint", seeds, |pkl| {
        use std::io::Write;
        let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
        let opt = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Stored);
        for (name, bytes) in &entries {
            w.start_file(name.as_str(), opt).unwrap();
            w.write_all(if *name == pkl_name { pkl } else { bytes })
                .unwrap();
        }
        let zipped = w.finish().unwrap().into_inner();
        let _ = memskill_trainer::refimport::ReferenceCheckpoint::parse(&zipped, "fuzz.pt");
        let _ =
            memskill_trainer::refimport::torch::TorchFile::open(&craft::zip(pkl, &[1.0; 4]), "c")
                .map(|tf| tf.tensor(tf.pickle.root, "t"));
    });
}
