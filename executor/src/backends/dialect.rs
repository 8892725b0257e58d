//! Structured-output dialects: the request field through which an OpenAI-compatible server
//! takes a reply's JSON schema. The servers differ (see docs/servers.md, "Structured outputs",
//! for which takes which):
//!
//! - `json_schema`: `response_format: {"type": "json_schema", "json_schema": {"name", "schema",
//!   "strict": true}}` (OpenAI, vLLM, SGLang, llama.cpp's llama-server, Ollama's `/v1`);
//! - `json_object_schema`: `response_format: {"type": "json_object", "schema": {...}}`
//!   (llama-cpp-python's server, llama-server);
//! - `guided_json`: a top-level `guided_json: {...}` (vLLM's extra body field);
//! - `ollama_format`: a top-level `format: {...}` (Ollama's native request field).
//!
//! `auto` sends `json_schema` first and, while an endpoint's dialect is unknown, moves to the
//! next one when an answer rejects the format ([`rejects_format`]); [`Trial`] keeps one
//! request's rejections. Everything here is pure: the backend owns the memory of what each
//! endpoint took.

use memskill_core::{LlmError, ResponseSchema};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

/// `structured_dialect`: how a request's JSON schema is sent.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum StructuredDialect {
    /// Find the endpoint's dialect: `json_schema` first, the next on a format rejection,
    /// the one that worked remembered per endpoint.
    #[default]
    Auto,
    JsonSchema,
    JsonObjectSchema,
    GuidedJson,
    OllamaFormat,
}

impl StructuredDialect {
    /// The dialects sent on the wire, in the order `auto` tries them.
    pub const CONCRETE: [StructuredDialect; 4] = [
        StructuredDialect::JsonSchema,
        StructuredDialect::JsonObjectSchema,
        StructuredDialect::GuidedJson,
        StructuredDialect::OllamaFormat,
    ];

    /// The config value.
    pub fn name(self) -> &'static str {
        match self {
            StructuredDialect::Auto => "auto",
            StructuredDialect::JsonSchema => "json_schema",
            StructuredDialect::JsonObjectSchema => "json_object_schema",
            StructuredDialect::GuidedJson => "guided_json",
            StructuredDialect::OllamaFormat => "ollama_format",
        }
    }

    /// Put `rs` into the request `body` (a JSON object) in this dialect; `auto` writes the
    /// dialect it tries first.
    pub fn apply(self, body: &mut Value, rs: &ResponseSchema) {
        let schema = rs.schema.clone();
        match self {
            StructuredDialect::Auto | StructuredDialect::JsonSchema => {
                body["response_format"] = json!({
                    "type": "json_schema",
                    "json_schema": {"name": rs.name, "schema": schema, "strict": true},
                })
            }
            StructuredDialect::JsonObjectSchema => {
                // llama-cpp-python writes a string's `maxLength` as that many nested optional
                // groups; past a few hundred its own grammar parser fails ("failed to parse
                // grammar") and the server process dies. Long bounds are left out (the reply's
                // lengths are still checked when it is read); short ones are kept.
                let mut schema = schema;
                drop_long_max_lengths(&mut schema, GRAMMAR_MAX_LENGTH);
                body["response_format"] = json!({"type": "json_object", "schema": schema})
            }
            StructuredDialect::GuidedJson => body["guided_json"] = schema,
            StructuredDialect::OllamaFormat => body["format"] = schema,
        }
    }

    /// The dialect and schema of a request body, the inverse of [`Self::apply`] (but for the
    /// long `maxLength` bounds that `json_object_schema` leaves out) (a dialect
    /// without a schema name gets `name`). `Ok(None)`: a free request; an error names the
    /// field that is malformed.
    pub fn read(body: &Value, name: &str) -> Result<Option<(Self, ResponseSchema)>, String> {
        let object = |v: &Value, field: &str| {
            if v.is_object() {
                Ok(v.clone())
            } else {
                Err(format!("{field} is not a JSON object"))
            }
        };
        let named = |schema: Value, n: &str| ResponseSchema {
            name: n.to_string(),
            schema,
        };
        let rf = &body["response_format"];
        match rf["type"].as_str() {
            Some("json_schema") => {
                let js = &rf["json_schema"];
                let n = js["name"]
                    .as_str()
                    .ok_or("response_format.json_schema.name is missing")?;
                let s = object(&js["schema"], "response_format.json_schema.schema")?;
                return Ok(Some((StructuredDialect::JsonSchema, named(s, n))));
            }
            Some("json_object") if !rf["schema"].is_null() => {
                let s = object(&rf["schema"], "response_format.schema")?;
                return Ok(Some((StructuredDialect::JsonObjectSchema, named(s, name))));
            }
            _ => {}
        }
        if !body["guided_json"].is_null() {
            let s = object(&body["guided_json"], "guided_json")?;
            return Ok(Some((StructuredDialect::GuidedJson, named(s, name))));
        }
        if !body["format"].is_null() {
            let s = object(&body["format"], "format")?;
            return Ok(Some((StructuredDialect::OllamaFormat, named(s, name))));
        }
        Ok(None)
    }
}

impl std::fmt::Display for StructuredDialect {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The words of an error body that name a structured-output field.
const FORMAT_WORDS: [&str; 6] = [
    "response_format",
    "format",
    "schema",
    "json_schema",
    "json_object",
    "guided_json",
];

/// Whether an HTTP answer rejects the request's structured-output format: a 4xx other than
/// the ones about access, a missing route or model, size, time or rate (401, 403, 404, 408,
/// 413, 429), or a 5xx whose body names a format field as a word (`response_format`,
/// `format`, `schema`, `json_schema`, `json_object`, `guided_json`).
pub fn rejects_format(status: u16, body: &str) -> bool {
    match status {
        401 | 403 | 404 | 408 | 413 | 429 => false,
        400..=499 => true,
        500..=599 => body
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .any(|w| FORMAT_WORDS.iter().any(|f| w.eq_ignore_ascii_case(f))),
        _ => false,
    }
}

/// The structured-output formats one request has had rejected, and what to send next.
#[derive(Debug)]
pub struct Trial {
    mode: StructuredDialect,
    /// (endpoint index, dialect, the rejecting answer), in order.
    rejected: Vec<(usize, StructuredDialect, LlmError)>,
}

/// What to do after a format rejection.
#[derive(Debug)]
pub enum AfterRejection {
    /// Send the request again in this dialect (no retry is spent).
    Next(StructuredDialect),
    /// Give up: the configured dialect was rejected, or every dialect was.
    Fail(LlmError),
}

impl Trial {
    pub fn new(mode: StructuredDialect) -> Self {
        Self {
            mode,
            rejected: Vec::new(),
        }
    }

    /// The dialect to send to endpoint `index`, whose remembered dialect is `known`: the
    /// configured one, else the remembered one, else the first this request has not had
    /// rejected there.
    pub fn choose(&self, index: usize, known: Option<StructuredDialect>) -> StructuredDialect {
        if self.mode != StructuredDialect::Auto {
            return self.mode;
        }
        known.unwrap_or_else(|| self.untried(index).unwrap_or(StructuredDialect::JsonSchema))
    }

    fn untried(&self, index: usize) -> Option<StructuredDialect> {
        StructuredDialect::CONCRETE
            .into_iter()
            .find(|d| !self.rejected.iter().any(|(i, r, _)| *i == index && r == d))
    }

    /// Endpoint `index` rejected `dialect` with `error`.
    pub fn reject(
        &mut self,
        index: usize,
        dialect: StructuredDialect,
        error: LlmError,
    ) -> AfterRejection {
        self.rejected.push((index, dialect, error));
        if self.mode == StructuredDialect::Auto {
            if let Some(d) = self.untried(index) {
                return AfterRejection::Next(d);
            }
        }
        AfterRejection::Fail(self.failure(index))
    }

    /// The error of a request no dialect got through: the first rejection at `index` (for
    /// `auto`, the `json_schema` one, usually the telling one), its body extended with what
    /// each dialect got.
    fn failure(&self, index: usize) -> LlmError {
        let here: Vec<&(usize, StructuredDialect, LlmError)> = self
            .rejected
            .iter()
            .filter(|(i, _, _)| *i == index)
            .collect();
        let note = if self.mode == StructuredDialect::Auto {
            let each: Vec<String> = here
                .iter()
                .map(|(_, d, e)| format!("{d}: {}", status_of(e)))
                .collect();
            format!(
                " [structured_dialect = \"auto\": no dialect was accepted ({})]",
                each.join(", ")
            )
        } else {
            format!(
                " [sent with structured_dialect = \"{}\"; \"auto\" tries the other dialects]",
                self.mode
            )
        };
        match here.first().map(|(_, _, e)| e) {
            Some(LlmError::Http {
                endpoint,
                status,
                body,
            }) => LlmError::Http {
                endpoint: endpoint.clone(),
                status: *status,
                body: format!("{body}{note}"),
            },
            Some(e) => LlmError::Other(format!("{e}{note}")),
            None => LlmError::Other(format!("no structured-output attempt was made{note}")),
        }
    }
}

fn status_of(e: &LlmError) -> String {
    match e {
        LlmError::Http { status, .. } => format!("HTTP {status}"),
        other => other.to_string(),
    }
}

/// The longest `maxLength` sent in the `json_object_schema` dialect (llama-cpp-python).
pub const GRAMMAR_MAX_LENGTH: u64 = 256;

/// Remove every `maxLength` above `limit` from a JSON schema (recursively).
pub fn drop_long_max_lengths(v: &mut Value, limit: u64) {
    match v {
        Value::Object(m) => {
            if m.get("maxLength")
                .and_then(Value::as_u64)
                .is_some_and(|n| n > limit)
            {
                m.remove("maxLength");
            }
            m.values_mut().for_each(|x| drop_long_max_lengths(x, limit));
        }
        Value::Array(a) => a.iter_mut().for_each(|x| drop_long_max_lengths(x, limit)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn json_object_schema_leaves_out_long_max_lengths_only() {
        let rs = ResponseSchema {
            name: "x".into(),
            schema: json!({"type": "object", "properties": {
                "long": {"type": "string", "maxLength": 4000},
                "short": {"type": "string", "maxLength": 64},
                "items": {"type": "array", "items": [{"type": "string", "maxLength": 2000}]}}}),
        };
        let mut b = json!({});
        StructuredDialect::JsonObjectSchema.apply(&mut b, &rs);
        let s = &b["response_format"]["schema"]["properties"];
        assert!(s["long"].get("maxLength").is_none());
        assert_eq!(s["short"]["maxLength"], 64);
        assert!(s["items"]["items"][0].get("maxLength").is_none());
        // the other dialects send the schema as it is
        let mut b = json!({});
        StructuredDialect::JsonSchema.apply(&mut b, &rs);
        assert_eq!(b["response_format"]["json_schema"]["schema"], rs.schema);
    }
    use super::*;

    fn schema() -> ResponseSchema {
        ResponseSchema {
            name: "verdict".into(),
            schema: json!({"type": "object", "properties": {"ok": {"type": "boolean"}}}),
        }
    }

    #[test]
    fn each_dialect_has_its_request_shape_and_reads_back() {
        let rs = schema();
        let s = rs.schema.clone();
        for (d, want) in [
            (
                StructuredDialect::JsonSchema,
                json!({"response_format": {"type": "json_schema",
                    "json_schema": {"name": "verdict", "schema": s, "strict": true}}}),
            ),
            (
                StructuredDialect::JsonObjectSchema,
                json!({"response_format": {"type": "json_object", "schema": s}}),
            ),
            (StructuredDialect::GuidedJson, json!({"guided_json": s})),
            (StructuredDialect::OllamaFormat, json!({"format": s})),
        ] {
            let mut body = json!({});
            d.apply(&mut body, &rs);
            assert_eq!(body, want, "{d}");
            assert_eq!(
                StructuredDialect::read(&body, "verdict").unwrap(),
                Some((d, rs.clone()))
            );
            let back: StructuredDialect =
                serde_json::from_value(json!(d.name())).expect("the config value reads back");
            assert_eq!(back, d);
        }
        // auto writes the dialect it tries first
        let (mut a, mut j) = (json!({}), json!({}));
        StructuredDialect::Auto.apply(&mut a, &rs);
        StructuredDialect::JsonSchema.apply(&mut j, &rs);
        assert_eq!(a, j);
        // free requests and plain JSON mode carry no schema; malformed ones name the field
        let r = |v: Value| StructuredDialect::read(&v, "x");
        assert_eq!(r(json!({"model": "m"})).unwrap(), None);
        assert_eq!(
            r(json!({"response_format": {"type": "json_object"}})).unwrap(),
            None
        );
        assert!(r(json!({"guided_json": "x"}))
            .unwrap_err()
            .contains("guided_json"));
        assert!(r(
            json!({"response_format": {"type": "json_schema", "json_schema": {"schema": {}}}})
        )
        .unwrap_err()
        .contains("json_schema.name"));
    }

    #[test]
    fn format_rejections_are_told_from_other_failures() {
        // llama-cpp-python's answer to `json_schema`
        assert!(rejects_format(
            500,
            "response_format.type: Input should be 'text' or 'json_object'"
        ));
        assert!(rejects_format(400, "anything"));
        assert!(rejects_format(422, "unprocessable"));
        assert!(rejects_format(500, "bad Schema"));
        for (status, body) in [
            (500, "Internal Server Error"),
            (503, "no further information"),
            (502, "bad gateway"),
            (429, "response_format rate"),
            (401, "schema"),
            (404, "model not found"),
            (200, "format"),
        ] {
            assert!(!rejects_format(status, body), "{status} {body}");
        }
    }

    fn http(status: u16) -> LlmError {
        LlmError::Http {
            endpoint: "http://e/v1/chat/completions".into(),
            status,
            body: "response_format rejected".into(),
        }
    }

    #[test]
    fn auto_walks_the_dialects_once_per_endpoint_then_fails_with_the_first_answer() {
        use StructuredDialect::*;
        let mut t = Trial::new(Auto);
        assert_eq!(t.choose(0, None), JsonSchema);
        // a remembered dialect wins
        assert_eq!(t.choose(0, Some(GuidedJson)), GuidedJson);
        assert!(matches!(
            t.reject(0, JsonSchema, http(500)),
            AfterRejection::Next(JsonObjectSchema)
        ));
        assert_eq!(t.choose(0, None), JsonObjectSchema);
        // another endpoint starts from the beginning
        assert_eq!(t.choose(1, None), JsonSchema);
        assert!(matches!(
            t.reject(0, JsonObjectSchema, http(400)),
            AfterRejection::Next(GuidedJson)
        ));
        assert!(matches!(
            t.reject(0, GuidedJson, http(422)),
            AfterRejection::Next(OllamaFormat)
        ));
        match t.reject(0, OllamaFormat, http(400)) {
            AfterRejection::Fail(LlmError::Http { status, body, .. }) => {
                assert_eq!(status, 500, "the json_schema answer");
                assert!(
                    body.contains("json_schema: HTTP 500, json_object_schema: HTTP 400, guided_json: HTTP 422, ollama_format: HTTP 400"),
                    "{body}"
                );
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_configured_dialect_is_sent_as_is_and_fails_at_once() {
        let mut t = Trial::new(StructuredDialect::GuidedJson);
        assert_eq!(
            t.choose(0, Some(StructuredDialect::JsonSchema)),
            StructuredDialect::GuidedJson
        );
        match t.reject(0, StructuredDialect::GuidedJson, http(400)) {
            AfterRejection::Fail(e) => {
                let m = e.to_string();
                assert!(
                    m.contains("HTTP 400") && m.contains("structured_dialect = \"guided_json\""),
                    "{m}"
                );
            }
            other => panic!("{other:?}"),
        }
    }
}
