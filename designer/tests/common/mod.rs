#![allow(dead_code)]
//! Shared test helpers: a scripted designer LLM and synthetic hard cases.

use std::collections::VecDeque;
use std::sync::Mutex;

use memskill_core::{ChatRequest, ChatResponse, Llm, LlmError, Usage};
use memskill_designer::HardCase;

/// Answers from a fixed list, in order; records every request.
pub struct ScriptedLlm {
    pub answers: Mutex<VecDeque<String>>,
    pub requests: Mutex<Vec<ChatRequest>>,
}

impl ScriptedLlm {
    pub fn new(answers: &[&str]) -> Self {
        Self {
            answers: Mutex::new(answers.iter().map(|s| s.to_string()).collect()),
            requests: Mutex::new(Vec::new()),
        }
    }
}

impl Llm for ScriptedLlm {
    fn id(&self) -> String {
        "scripted".into()
    }
    fn chat(&self, req: &ChatRequest) -> Result<ChatResponse, LlmError> {
        self.requests.lock().unwrap().push(req.clone());
        let text = self
            .answers
            .lock()
            .unwrap()
            .pop_front()
            .ok_or_else(|| LlmError::Other("script exhausted".into()))?;
        Ok(ChatResponse {
            text,
            usage: Usage::default(),
            latency_ms: 0,
            cached: false,
            truncated: false,
        })
    }
}

pub fn hard_case(i: usize) -> HardCase {
    HardCase {
        query_id: format!("q{i}"),
        question: format!("When did person {} visit city {}?", i % 4, i),
        gold: format!("{} May 2023", i + 1),
        category: "2".into(),
        prediction: "I don't know".into(),
        score: (i % 3) as f64 * 0.1,
        retrieved: vec![
            format!("Person {} likes travelling.", i % 4),
            "x".repeat(1000),
        ],
        sample_id: "conv-1".into(),
        step: (i % 5) as u64,
        fail_count: 1 + (i % 3) as u32,
        evidence: String::new(),
    }
}
