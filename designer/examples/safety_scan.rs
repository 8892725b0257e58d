//! Scan texts, one per line on stdin, with the safety layer and print those it stops.
//!
//! `cargo run -p memskill-designer --example safety_scan -- memory < texts.txt` applies the
//! memory filter's scan; `-- sensitivity` the memory filter's sensitivity levels (prints
//! every text that is not public); `-- skill` (the default) the skill scan. The last line
//! counts.

use std::io::BufRead;

fn main() {
    let mode = std::env::args().nth(1).unwrap_or_else(|| "skill".into());
    if !matches!(mode.as_str(), "skill" | "memory" | "sensitivity") {
        eprintln!("usage: safety_scan [skill|memory|sensitivity] < texts (one per line)");
        std::process::exit(2);
    }
    let (mut n, mut stopped) = (0usize, 0usize);
    for line in std::io::stdin().lock().lines() {
        let Ok(line) = line else {
            eprintln!("error: stdin is not UTF-8 text");
            std::process::exit(1);
        };
        if line.trim().is_empty() {
            continue;
        }
        n += 1;
        let verdict = if mode == "memory" {
            memskill_designer::scan_memory(&line).map(|f| f.to_string())
        } else if mode == "sensitivity" {
            match memskill_designer::memory_sensitivity(&line) {
                (_, None) => None,
                (level, Some(rule)) => Some(format!("{level}: {rule}")),
            }
        } else {
            memskill_designer::safety_scan(&line).err()
        };
        if let Some(why) = verdict {
            stopped += 1;
            println!("{why}\t{line}");
        }
    }
    println!("{stopped} of {n} texts stopped ({mode} scan)");
}
