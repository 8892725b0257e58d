//! Speed check of the local GGUF backend (dependencies are built at opt-level 3 even in dev):
//! `cargo run -p memskill-local --example chat -- "prompt" [requantize]`, where the optional
//! second argument is the `requantize` option (`auto`, `off`, `q8_0`, `q4_0`).

use memskill_core::{ChatRequest, Llm, Message};
use memskill_local::{default_smollm2_path, LocalConfig, LocalGguf};

fn main() {
    let prompt = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "Alice moved to Paris in May. Where does Alice live?".into());
    let requantize = std::env::args().nth(2);
    let t = std::time::Instant::now();
    let m = match LocalGguf::load(&LocalConfig {
        model_path: default_smollm2_path(),
        requantize,
        ..LocalConfig::default()
    }) {
        Ok(m) => {
            eprintln!(
                "loaded in {:.2}s, {}, {} candle threads",
                t.elapsed().as_secs_f64(),
                m.load_info(),
                candle_core::utils::get_num_threads()
            );
            m
        }
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    };
    for run in 0..3 {
        let req = ChatRequest::new(vec![Message::user(prompt.clone())]).with_max_tokens(64);
        match m.chat(&req) {
            Ok(r) => {
                let t = m.last_timing();
                if run == 0 {
                    println!("{}", r.text);
                }
                eprintln!(
                    "run {run}: prompt {} tok, completion {} tok, prefill {:.1} tok/s, decode {:.1} tok/s",
                    t.prompt_tokens,
                    t.completion_tokens,
                    t.prefill_tok_s(),
                    t.decode_tok_s()
                );
            }
            Err(e) => {
                eprintln!("error: {e}");
                std::process::exit(1);
            }
        }
    }
}
