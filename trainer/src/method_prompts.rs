//! The prompt templates of the built-in Table 1 methods (`trainer/prompts/`): Chain-of-Notes
//! and ReadAgent ([`crate::readers`]) and MemoryBank ([`crate::memorybank`]), the contexts
//! they are rendered with, their start-up render with sample data, and their one LLM call. A leaf: it needs only
//! the core crate, so that the prompt set ([`crate::prompts`]) can list these templates
//! without depending on the methods.

use anyhow::Result;
use memskill_core::{ChatRequest, Llm, Message, PromptSet};
use serde::Serialize;

/// Every template of the built-in methods, layered like every crate's.
pub const PROMPT_TEMPLATES: &[(&str, &str)] = &[
    (
        "reader.notes.system.j2",
        include_str!("../prompts/reader.notes.system.j2"),
    ),
    (
        "reader.notes.user.j2",
        include_str!("../prompts/reader.notes.user.j2"),
    ),
    (
        "reader.paginate.system.j2",
        include_str!("../prompts/reader.paginate.system.j2"),
    ),
    (
        "reader.paginate.user.j2",
        include_str!("../prompts/reader.paginate.user.j2"),
    ),
    (
        "reader.gist.system.j2",
        include_str!("../prompts/reader.gist.system.j2"),
    ),
    (
        "reader.gist.user.j2",
        include_str!("../prompts/reader.gist.user.j2"),
    ),
    (
        "reader.lookup.system.j2",
        include_str!("../prompts/reader.lookup.system.j2"),
    ),
    (
        "reader.lookup.user.j2",
        include_str!("../prompts/reader.lookup.user.j2"),
    ),
    (
        "memorybank.day_summary.system.j2",
        include_str!("../prompts/memorybank.day_summary.system.j2"),
    ),
    (
        "memorybank.day_summary.user.j2",
        include_str!("../prompts/memorybank.day_summary.user.j2"),
    ),
    (
        "memorybank.day_portrait.system.j2",
        include_str!("../prompts/memorybank.day_portrait.system.j2"),
    ),
    (
        "memorybank.day_portrait.user.j2",
        include_str!("../prompts/memorybank.day_portrait.user.j2"),
    ),
    (
        "memorybank.overall_summary.system.j2",
        include_str!("../prompts/memorybank.overall_summary.system.j2"),
    ),
    (
        "memorybank.overall_summary.user.j2",
        include_str!("../prompts/memorybank.overall_summary.user.j2"),
    ),
    (
        "memorybank.overall_portrait.system.j2",
        include_str!("../prompts/memorybank.overall_portrait.system.j2"),
    ),
    (
        "memorybank.overall_portrait.user.j2",
        include_str!("../prompts/memorybank.overall_portrait.user.j2"),
    ),
];

/// One call of a built-in method (greedy, `max_tokens` reply budget): the reply's text, or
/// the call's error as text.
pub(crate) fn ask(
    llm: &dyn Llm,
    messages: Vec<Message>,
    max_tokens: u32,
) -> Result<String, String> {
    let req = ChatRequest::new(messages)
        .with_max_tokens(max_tokens)
        .with_temperature(0.0);
    llm.chat(&req).map(|r| r.text).map_err(|e| e.to_string())
}

/// Render `prefix`'s system and user templates with `ctx`; an error names the template.
pub(crate) fn render<S: Serialize>(
    prompts: &PromptSet,
    prefix: &str,
    ctx: S,
) -> Result<Vec<Message>> {
    prompts
        .render_chat(prefix, ctx)
        .map_err(|e| anyhow::anyhow!("prompt {prefix}: {e}"))
}

#[derive(Serialize)]
pub(crate) struct NotesCtx<'a> {
    pub(crate) question: &'a str,
    pub(crate) passages: Vec<&'a str>,
}

#[derive(Serialize)]
pub(crate) struct PaginateCtx<'a> {
    pub(crate) text: &'a str,
    pub(crate) labels: Vec<usize>,
}

#[derive(Serialize)]
pub(crate) struct GistCtx<'a> {
    pub(crate) page: &'a str,
    pub(crate) number: usize,
}

#[derive(Serialize)]
pub(crate) struct LookupCtx<'a> {
    pub(crate) question: &'a str,
    pub(crate) gists: &'a [String],
    pub(crate) max_pages: usize,
}

#[derive(Serialize)]
pub(crate) struct DayCtx<'a> {
    pub(crate) date: &'a str,
    pub(crate) text: &'a str,
}

#[derive(Serialize)]
pub(crate) struct OverallCtx<'a> {
    pub(crate) days: &'a [String],
}

/// Render every template of the built-in methods once with sample data (the start-up check
/// every crate's templates get).
pub fn sample_render(prompts: &PromptSet) -> Result<()> {
    render(
        prompts,
        "reader.notes",
        NotesCtx {
            question: "Where does Anna live?",
            passages: vec!["Anna: I moved to Lyon.", "Ben: nice weather."],
        },
    )?;
    render(
        prompts,
        "reader.paginate",
        PaginateCtx {
            text: "Anna: hi\n<1>\nBen: hello\n<2>\n",
            labels: vec![1, 2],
        },
    )?;
    render(
        prompts,
        "reader.gist",
        GistCtx {
            page: "Anna: I moved to Lyon.",
            number: 1,
        },
    )?;
    render(
        prompts,
        "reader.lookup",
        LookupCtx {
            question: "Where does Anna live?",
            gists: &["Anna moved to Lyon.".to_string()],
            max_pages: 5,
        },
    )?;

    let day = DayCtx {
        date: "8 May 2023",
        text: "Anna said, \"I moved to Lyon.\"",
    };
    render(prompts, "memorybank.day_summary", &day)?;
    render(prompts, "memorybank.day_portrait", &day)?;
    let days = ["8 May 2023: Anna moved to Lyon.".to_string()];
    render(
        prompts,
        "memorybank.overall_summary",
        OverallCtx { days: &days },
    )?;
    render(
        prompts,
        "memorybank.overall_portrait",
        OverallCtx { days: &days },
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_template_renders_with_sample_data() {
        super::sample_render(&crate::prompts::defaults().unwrap()).unwrap();
    }
}
