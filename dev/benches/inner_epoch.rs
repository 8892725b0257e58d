//! `cargo bench -p memskill-dev --bench inner_epoch`: one inner epoch against a local
//! OpenAI-compatible server with a fixed latency, versus the critical-path ideal.
//! Environment: BENCH_LATENCY_MS (1000), BENCH_BATCH (4), BENCH_SPANS (4).

fn env(k: &str, d: u64) -> u64 {
    std::env::var(k)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(d)
}

fn main() {
    let (lat, batch, spans) = (
        env("BENCH_LATENCY_MS", 1000),
        env("BENCH_BATCH", 4),
        env("BENCH_SPANS", 4),
    );
    match memskill_dev::bench::bench_inner_epoch(lat, batch as usize, spans as usize) {
        Ok(r) => println!("{}", r.report()),
        Err(e) => {
            eprintln!("error: {e:#}");
            std::process::exit(1);
        }
    }
}
