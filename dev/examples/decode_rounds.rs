//! Decode speed of the local SmolLM2 asset from its own Q4_1 blocks against the same file
//! requantized to Q8_0 (the previous default), interleaved round by round, with the
//! machine's bandwidth: `cargo run -p memskill-dev --example decode_rounds [rounds]`.

use memskill_executor::{default_smollm2_path, LocalConfig, LocalGguf};

fn main() {
    let rounds: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(5);
    let load = |requantize: Option<&str>| {
        LocalGguf::load(&LocalConfig {
            model_path: default_smollm2_path(),
            requantize: requantize.map(String::from),
            ..LocalConfig::default()
        })
        .unwrap_or_else(|e| {
            eprintln!("error: {e}");
            std::process::exit(1)
        })
    };
    let native = load(None);
    let q8 = load(Some("q8_0"));
    eprintln!("native: {}\nq8_0: {}", native.load_info(), q8.load_info());
    let ids: Vec<u32> = (0..680u32).map(|i| 100 + i * 389 % 40000).collect();
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!("{}", memskill_dev::membench::measure(threads).describe());
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for m in [&native, &q8] {
        m.bench_generate(&ids, 4).expect("warm-up");
    }
    for r in 0..rounds {
        let t = native.bench_generate(&ids, 128).expect("native");
        let u = q8.bench_generate(&ids, 128).expect("q8_0");
        a.push(t.decode_tok_s());
        b.push(u.decode_tok_s());
        println!(
            "round {r}: native Q4_1 {:.1} tok/s, requantized Q8_0 {:.1} tok/s, ratio {:.2}",
            a[r],
            b[r],
            a[r] / b[r]
        );
    }
    let med = |v: &[f64]| {
        let mut s = v.to_vec();
        s.sort_by(f64::total_cmp);
        (s[0], s[s.len() / 2], s[s.len() - 1])
    };
    let ratios: Vec<f64> = a.iter().zip(&b).map(|(x, y)| x / y).collect();
    println!(
        "decode tok/s min/median/max: native {:?}, q8_0 {:?}; ratio {:?}",
        med(&a),
        med(&b),
        med(&ratios)
    );
}
