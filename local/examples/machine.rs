//! The machine probe `memskill bench llm` prints beside decode speed, alone:
//! `cargo run -p memskill-local --example machine [THREADS]` (dev profile: optimised, as the
//! bench binary is).

fn main() {
    let threads = std::env::args()
        .nth(1)
        .and_then(|t| t.parse().ok())
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    println!("{}", memskill_local::membench::measure(threads).describe());
}
