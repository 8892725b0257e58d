//! Prompt templates: every prompt memskill sends is a named minijinja (Jinja2) template.
//!
//! A [`PromptSet`] maps template names (`executor.user.j2`, `answer.locomo.user.j2`, ...) to
//! their sources. Each crate that builds prompts ships its defaults (written in our own words)
//! as `(name, source)` pairs and renders through the set it is given; the trainer layers a
//! user's `prompts.dir` over the defaults, so a prompt ablation needs no recompilation.
//!
//! Conventions shared by all templates:
//! - One template per chat message: `<prompt>.system.j2` and `<prompt>.user.j2`. A message
//!   whose template renders to the empty string is left out (the reference sends a single user
//!   message for most prompts).
//! - Rendering is byte-exact: trailing newlines are kept, blocks are not trimmed, nothing is
//!   auto-escaped, and an undefined variable is an error (strict), so a template typo fails
//!   loudly instead of rendering an empty string.
//!
//! - Every render is bounded: at most [`TEMPLATE_FUEL`] template instructions (minijinja's
//!   fuel: nested loops over huge ranges stop with an error instead of running for ever) and
//!   at most [`TEMPLATE_OUTPUT_LIMIT`] bytes of output.
//!
//! This module is pure: it renders strings. Reading a folder of templates is the caller's job.

use std::collections::BTreeMap;
use std::sync::Arc;

use minijinja::{Environment, UndefinedBehavior};
use serde::Serialize;

/// The instruction budget of one render (a prompt over a thousand memories uses ~100k).
pub const TEMPLATE_FUEL: u64 = 20_000_000;
/// The largest rendered prompt, in bytes.
pub const TEMPLATE_OUTPUT_LIMIT: usize = 16 << 20;

/// Errors from building or rendering prompt templates.
#[derive(Debug, thiserror::Error)]
pub enum PromptError {
    #[error("prompt template {name}: {message}")]
    Template { name: String, message: String },
    #[error("prompt template {name} is not known (known: {known})")]
    Unknown { name: String, known: String },
}

/// A set of named prompt templates (defaults plus overrides), ready to render.
#[derive(Clone)]
pub struct PromptSet {
    sources: BTreeMap<String, String>,
    /// Which templates were replaced by an override (for run records).
    overridden: Vec<String>,
    env: Arc<Environment<'static>>,
}

impl std::fmt::Debug for PromptSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PromptSet")
            .field("templates", &self.sources.keys().collect::<Vec<_>>())
            .field("overridden", &self.overridden)
            .finish()
    }
}

impl Default for PromptSet {
    fn default() -> Self {
        PromptSet {
            sources: BTreeMap::new(),
            overridden: Vec::new(),
            env: Arc::new(new_env()),
        }
    }
}

fn new_env() -> Environment<'static> {
    let mut env = Environment::new();
    env.set_keep_trailing_newline(true);
    env.set_trim_blocks(false);
    env.set_lstrip_blocks(false);
    env.set_auto_escape_callback(|_| minijinja::AutoEscape::None);
    env.set_undefined_behavior(UndefinedBehavior::Strict);
    env.set_fuel(Some(TEMPLATE_FUEL));
    env
}

/// The output of one render, refusing to grow past `limit` bytes.
struct Bounded {
    buf: Vec<u8>,
    limit: usize,
}

impl std::io::Write for Bounded {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        if self.buf.len() + b.len() > self.limit {
            return Err(std::io::Error::other("output limit"));
        }
        self.buf.extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn template_err(name: &str, e: minijinja::Error) -> PromptError {
    // minijinja's Display shows the kind and the message; add the line when known.
    let mut message = e.to_string();
    if let Some(line) = e.line() {
        if !message.contains("line") {
            message = format!("{message} (line {line})");
        }
    }
    PromptError::Template {
        name: name.to_string(),
        message,
    }
}

impl PromptSet {
    /// A set holding the given default templates. Panics never: a default that does not parse
    /// is reported as an error naming it.
    pub fn with_defaults(defaults: &[(&str, &str)]) -> Result<Self, PromptError> {
        let mut set = PromptSet::default();
        set.add_defaults(defaults)?;
        Ok(set)
    }

    /// Adds default templates (a crate's built-in prompts). A name already present is kept
    /// (an override added earlier wins over a default added later).
    pub fn add_defaults(&mut self, defaults: &[(&str, &str)]) -> Result<(), PromptError> {
        for (name, src) in defaults {
            if self.sources.contains_key(*name) {
                continue;
            }
            self.sources.insert(name.to_string(), src.to_string());
        }
        self.rebuild()
    }

    /// Replaces (or adds) one template; used for a user's `prompts.dir`. The template is
    /// parsed now, so a syntax error names the file before any LLM call.
    pub fn set_override(&mut self, name: &str, src: &str) -> Result<(), PromptError> {
        self.sources.insert(name.to_string(), src.to_string());
        if !self.overridden.iter().any(|n| n == name) {
            self.overridden.push(name.to_string());
        }
        self.rebuild()
    }

    fn rebuild(&mut self) -> Result<(), PromptError> {
        let mut env = new_env();
        for (name, src) in &self.sources {
            env.add_template_owned(name.clone(), src.clone())
                .map_err(|e| template_err(name, e))?;
        }
        self.env = Arc::new(env);
        Ok(())
    }

    /// Whether a template of this name exists.
    pub fn contains(&self, name: &str) -> bool {
        self.sources.contains_key(name)
    }

    /// Template names, sorted.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.sources.keys().map(String::as_str)
    }

    /// Names of the templates replaced by overrides, in the order they were set.
    pub fn overridden(&self) -> &[String] {
        &self.overridden
    }

    /// The source of one template.
    pub fn source(&self, name: &str) -> Option<&str> {
        self.sources.get(name).map(String::as_str)
    }

    /// A content hash over every template (name and source), for cache keys and run records.
    pub fn content_hash(&self) -> String {
        let mut buf = String::new();
        for (name, src) in &self.sources {
            buf.push_str(name);
            buf.push('\0');
            buf.push_str(src);
            buf.push('\0');
        }
        crate::sha256_hex(buf.as_bytes())
    }

    /// Renders one template with a serialisable context.
    pub fn render<S: Serialize>(&self, name: &str, ctx: S) -> Result<String, PromptError> {
        let tmpl = self
            .env
            .get_template(name)
            .map_err(|_| PromptError::Unknown {
                name: name.to_string(),
                known: self.sources.keys().cloned().collect::<Vec<_>>().join(", "),
            })?;
        let mut out = Bounded {
            buf: Vec::new(),
            limit: TEMPLATE_OUTPUT_LIMIT,
        };
        match tmpl.render_captured_to(ctx, &mut out) {
            Ok(_) => Ok(String::from_utf8_lossy(&out.buf).into_owned()),
            Err(e) if e.kind() == minijinja::ErrorKind::WriteFailure => {
                Err(PromptError::Template {
                    name: name.to_string(),
                    message: format!(
                        "the rendered prompt grew past the limit of {TEMPLATE_OUTPUT_LIMIT} bytes"
                    ),
                })
            }
            Err(e) if e.kind() == minijinja::ErrorKind::OutOfFuel => Err(PromptError::Template {
                name: name.to_string(),
                message: format!(
                    "the template ran out of its {TEMPLATE_FUEL} steps (an endless or huge loop?)"
                ),
            }),
            Err(e) => Err(template_err(name, e)),
        }
    }

    /// Renders `<prefix>.system.j2` and `<prefix>.user.j2` into chat messages, leaving out a
    /// message that renders empty or whose template does not exist (at least one must exist).
    pub fn render_chat<S: Serialize>(
        &self,
        prefix: &str,
        ctx: S,
    ) -> Result<Vec<crate::Message>, PromptError> {
        let ctx = minijinja::Value::from_serialize(&ctx);
        let sys_name = format!("{prefix}.system.j2");
        let user_name = format!("{prefix}.user.j2");
        if !self.contains(&sys_name) && !self.contains(&user_name) {
            return Err(PromptError::Unknown {
                name: user_name,
                known: self.sources.keys().cloned().collect::<Vec<_>>().join(", "),
            });
        }
        let mut out = Vec::new();
        if self.contains(&sys_name) {
            let s = self.render(&sys_name, &ctx)?;
            if !s.is_empty() {
                out.push(crate::Message::system(s));
            }
        }
        if self.contains(&user_name) {
            let u = self.render(&user_name, &ctx)?;
            if !u.is_empty() {
                out.push(crate::Message::user(u));
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn renders_byte_exact_with_trailing_newline() {
        let set = PromptSet::with_defaults(&[(
            "a.user.j2",
            "Hi {{ name }}.\n\n{% for m in mems %}{{ loop.index0 }}. {{ m }}\n{% endfor %}",
        )])
        .unwrap();
        let s = set
            .render("a.user.j2", json!({"name": "<b>", "mems": ["x", "y"]}))
            .unwrap();
        assert_eq!(s, "Hi <b>.\n\n0. x\n1. y\n");
    }

    #[test]
    fn undefined_variable_is_an_error_naming_the_template() {
        let set = PromptSet::with_defaults(&[("a.user.j2", "{{ missing }}")]).unwrap();
        let e = set.render("a.user.j2", json!({})).unwrap_err().to_string();
        assert!(e.contains("a.user.j2"), "{e}");
    }

    #[test]
    fn syntax_error_in_override_names_it() {
        let mut set = PromptSet::with_defaults(&[("a.user.j2", "ok")]).unwrap();
        let e = set
            .set_override("a.user.j2", "{% if %}")
            .unwrap_err()
            .to_string();
        assert!(e.contains("a.user.j2"), "{e}");
    }

    #[test]
    fn override_wins_and_empty_system_is_dropped() {
        let mut set = PromptSet::default();
        set.set_override("p.system.j2", "").unwrap();
        set.add_defaults(&[("p.system.j2", "SYS"), ("p.user.j2", "U {{ x }}")])
            .unwrap();
        let msgs = set.render_chat("p", json!({"x": 1})).unwrap();
        assert_eq!(msgs.len(), 1);
        assert_eq!(msgs[0].content, "U 1");
        assert_eq!(set.overridden(), &["p.system.j2".to_string()]);
    }

    #[test]
    fn endless_loops_and_huge_outputs_stop_with_an_error() {
        let set = PromptSet::with_defaults(&[
            (
                "loops.user.j2",
                "{% for a in range(10000) %}{% for b in range(10000) %}{% for c in range(10000) %}{% endfor %}{% endfor %}{% endfor %}",
            ),
            (
                "big.user.j2",
                "{% for a in range(100000) %}{{ 'x' * 1000 }}{% endfor %}",
            ),
            ("fine.user.j2", "{% for a in range(1000) %}{{ a }}{% endfor %}"),
        ])
        .unwrap();
        let e = set
            .render("loops.user.j2", json!({}))
            .unwrap_err()
            .to_string();
        assert!(e.contains("loops.user.j2") && e.contains("steps"), "{e}");
        let e = set
            .render("big.user.j2", json!({}))
            .unwrap_err()
            .to_string();
        assert!(e.contains("big.user.j2") && e.contains("limit"), "{e}");
        assert_eq!(set.render("fine.user.j2", json!({})).unwrap().len(), 2890);
    }

    #[test]
    fn unknown_template_is_an_error() {
        let set = PromptSet::default();
        assert!(set.render("nope.j2", json!({})).is_err());
        assert!(set.render_chat("nope", json!({})).is_err());
    }
}
