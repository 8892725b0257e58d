//! The one lenient reader of JSON written by an LLM, plus the few Python value semantics the
//! reference applies to the values it reads (`str(v)`, `int(v)`, `str.strip()`). Two ways to
//! read, one per caller, because the two readers they replaced differed (kept as they were):
//! - [`lenient_json`] (the executor's replies): repairs broken JSON and reads the whole reply
//!   as one value; it does not look for JSON inside prose or code fences.
//! - [`json_candidates`] (the designer's refinement answer): repairs nothing (standard JSON
//!   only) but finds it anywhere: in fenced blocks, the whole text, or starting at any `{` /
//!   `[` with whatever follows ignored; the caller takes the first candidate of the shape it
//!   wants.
//!
//! The reference runs replies through the `json-repair` package before `json.loads`. We do not
//! port that package; [`lenient_json`] accepts standard JSON plus the repairs LLM replies
//! usually need, done the way that package does them: trailing commas, single-quoted strings
//! (a quote right before a letter or digit is an apostrophe), unquoted keys and bare-word
//! values, Python literals (`True`, `False`, `None`), `//` and `/* */` comments, missing commas
//! between members, unclosed containers at the end, raw newlines inside strings, and several
//! top-level values (read as a list of them; a value with the previous one's structure that is
//! not comma-separated from it replaces it). The differential fixture `parse_actions` checks
//! these cases against the reference. Known residual difference: a single-quoted string with
//! an apostrophe that is followed by the string's closing quote and more members (json-repair
//! then runs the string on past its end; we close it at the quote).

use serde_json::{Map, Number, Value};

/// JSON values in `text` a caller may pick from, in order: the body of each fenced block
/// (```` ``` ```` to ```` ``` ````, the fence line's language tag skipped), then the whole text,
/// then the value starting at every `{` / `[` position with whatever follows ignored. Standard
/// JSON only (no repairs); candidates that do not parse are left out.
pub fn json_candidates(text: &str) -> Vec<Value> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("```") {
        let after = &rest[start + 3..];
        let body_start = after.find('\n').map_or(0, |i| i + 1);
        let Some(end) = after[body_start..].find("```") else {
            break;
        };
        let body = &after[body_start..body_start + end];
        if let Ok(v) = serde_json::from_str::<Value>(body.trim()) {
            out.push(v);
        }
        rest = &after[body_start + end + 3..];
    }
    if let Ok(v) = serde_json::from_str::<Value>(text.trim()) {
        out.push(v);
    }
    for (i, c) in text.char_indices() {
        if c == '{' || c == '[' {
            let mut it = serde_json::Deserializer::from_str(&text[i..]).into_iter::<Value>();
            if let Some(Ok(v)) = it.next() {
                out.push(v);
            }
        }
    }
    out
}

/// Python `str.isspace()`: Unicode White_Space plus U+001C..U+001F.
pub fn is_py_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// Python `str.strip()` with no argument.
pub fn py_strip(s: &str) -> &str {
    s.trim_matches(is_py_space)
}

/// Python `str.splitlines()` (without the line ends).
pub fn py_splitlines(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut it = s.char_indices().peekable();
    while let Some((i, c)) = it.next() {
        let is_break = matches!(
            c,
            '\n' | '\r'
                | '\u{0b}'
                | '\u{0c}'
                | '\u{1c}'
                | '\u{1d}'
                | '\u{1e}'
                | '\u{85}'
                | '\u{2028}'
                | '\u{2029}'
        );
        if is_break {
            out.push(&s[start..i]);
            let mut end = i + c.len_utf8();
            if c == '\r' {
                if let Some(&(j, '\n')) = it.peek() {
                    it.next();
                    end = j + 1;
                }
            }
            start = end;
        }
    }
    if start < s.len() {
        out.push(&s[start..]);
    }
    out
}

/// The value of a Unicode decimal digit (general category Nd), as Python's `int()` reads it.
/// Decimal digits come in runs of ten consecutive code points starting at zero.
pub fn decimal_digit_value(c: char) -> Option<u32> {
    if let Some(d) = c.to_digit(10) {
        return Some(d);
    }
    if !is_decimal(c) {
        return None;
    }
    // walk back to the start of the run of decimal digits
    let mut start = c as u32;
    while let Some(p) = start.checked_sub(1).and_then(char::from_u32) {
        if is_decimal(p) {
            start -= 1;
        } else {
            break;
        }
    }
    Some((c as u32 - start) % 10)
}

fn is_decimal(c: char) -> bool {
    use std::sync::OnceLock;
    static RE: OnceLock<regex::Regex> = OnceLock::new();
    let re = RE.get_or_init(|| regex::Regex::new(r"^\d$").expect("static regex"));
    let mut buf = [0u8; 4];
    re.is_match(c.encode_utf8(&mut buf))
}

/// Python `int(s)` of a string: surrounding whitespace, an optional sign, decimal digits
/// (any script) with single underscores between them. Saturates far outside `i64`.
pub fn py_int_str(s: &str) -> Option<i128> {
    let t = py_strip(s);
    let (neg, body) = match t.chars().next()? {
        '-' => (true, &t[1..]),
        '+' => (false, &t[1..]),
        _ => (false, t),
    };
    if body.is_empty() || body.starts_with('_') || body.ends_with('_') || body.contains("__") {
        return None;
    }
    let mut v: i128 = 0;
    for c in body.chars() {
        if c == '_' {
            continue;
        }
        let d = decimal_digit_value(c)?;
        v = v.saturating_mul(10).saturating_add(d as i128);
    }
    Some(if neg { -v } else { v })
}

/// Python `int(v)` of a JSON value: ints, floats (truncated; not NaN/inf), booleans, strings.
pub fn py_int(v: &Value) -> Option<i128> {
    match v {
        Value::Bool(b) => Some(*b as i128),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                Some(i as i128)
            } else if let Some(u) = n.as_u64() {
                Some(u as i128)
            } else {
                let f = n.as_f64()?;
                f.is_finite().then(|| f.trunc() as i128)
            }
        }
        Value::String(s) => py_int_str(s),
        _ => None,
    }
}

/// Python `repr(float)`: shortest round-trip digits, exponent form outside [1e-4, 1e16).
pub fn py_float_repr(f: f64) -> String {
    if f.is_nan() {
        return "nan".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "inf".into() } else { "-inf".into() };
    }
    let a = f.abs();
    if a != 0.0 && !(1e-4..1e16).contains(&a) {
        let s = format!("{f:e}"); // e.g. 1.5e-5, 1e20
        let (mant, exp) = s.split_once('e').unwrap_or((&s, "0"));
        let (sign, digits) = match exp.strip_prefix('-') {
            Some(d) => ('-', d),
            None => ('+', exp),
        };
        let digits = if digits.len() < 2 {
            format!("0{digits}")
        } else {
            digits.to_string()
        };
        return format!("{mant}e{sign}{digits}");
    }
    let s = format!("{f}");
    if s.contains('.') {
        s
    } else {
        format!("{s}.0")
    }
}

fn py_str_repr(s: &str) -> String {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::new();
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if (c as u32) < 0x20 || (0x7f..0xa0).contains(&(c as u32)) => {
                out.push_str(&format!("\\x{:02x}", c as u32))
            }
            c => out.push(c),
        }
    }
    out.push(quote);
    out
}

/// Python `repr()` of a JSON value as `json.loads` returns it.
pub fn py_repr(v: &Value) -> String {
    match v {
        Value::String(s) => py_str_repr(s),
        Value::Array(a) => format!("[{}]", a.iter().map(py_repr).collect::<Vec<_>>().join(", ")),
        Value::Object(o) => format!(
            "{{{}}}",
            o.iter()
                .map(|(k, v)| format!("{}: {}", py_str_repr(k), py_repr(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        other => py_str(other),
    }
}

/// Python `str()` of a JSON value as `json.loads` returns it.
pub fn py_str(v: &Value) -> String {
    match v {
        Value::Null => "None".into(),
        Value::Bool(true) => "True".into(),
        Value::Bool(false) => "False".into(),
        Value::Number(n) => {
            if n.is_i64() || n.is_u64() {
                n.to_string()
            } else {
                py_float_repr(n.as_f64().unwrap_or(f64::NAN))
            }
        }
        Value::String(s) => s.clone(),
        _ => py_repr(v),
    }
}

struct Reader<'a> {
    s: &'a [char],
    i: usize,
}

impl Reader<'_> {
    fn peek(&self) -> Option<char> {
        self.s.get(self.i).copied()
    }

    fn skip_ws(&mut self) {
        loop {
            match self.peek() {
                Some(c) if c.is_whitespace() => self.i += 1,
                Some('/') if self.s.get(self.i + 1) == Some(&'/') => {
                    while let Some(c) = self.peek() {
                        if c == '\n' {
                            break;
                        }
                        self.i += 1;
                    }
                }
                Some('/') if self.s.get(self.i + 1) == Some(&'*') => {
                    self.i += 2;
                    while self.i < self.s.len()
                        && !(self.s[self.i] == '*' && self.s.get(self.i + 1) == Some(&'/'))
                    {
                        self.i += 1;
                    }
                    self.i = (self.i + 2).min(self.s.len());
                }
                _ => return,
            }
        }
    }

    fn value(&mut self, depth: usize) -> Option<Value> {
        if depth > 200 {
            return None;
        }
        self.skip_ws();
        match self.peek()? {
            '{' => Some(self.object(depth)),
            '[' => Some(self.array(depth)),
            q @ ('"' | '\'') => {
                self.i += 1;
                Some(Value::String(self.string(q)))
            }
            c if c == '-' || c.is_ascii_digit() => Some(self.number_or_word()),
            _ => Some(self.bare_word()),
        }
    }

    fn string(&mut self, q: char) -> String {
        let mut out = String::new();
        while let Some(c) = self.peek() {
            self.i += 1;
            // a quote right before a letter or digit is an apostrophe ("'Dave's sister'")
            if c == q && !self.peek().is_some_and(char::is_alphanumeric) {
                return out;
            }
            if c == '\\' {
                let Some(e) = self.peek() else { break };
                self.i += 1;
                match e {
                    'n' => out.push('\n'),
                    't' => out.push('\t'),
                    'r' => out.push('\r'),
                    'b' => out.push('\u{8}'),
                    'f' => out.push('\u{c}'),
                    'u' => {
                        let hex: String = self.s[self.i..(self.i + 4).min(self.s.len())]
                            .iter()
                            .collect();
                        match u32::from_str_radix(&hex, 16).ok() {
                            Some(cp) if hex.len() == 4 => {
                                self.i += 4;
                                // surrogate pairs
                                if (0xD800..0xDC00).contains(&cp)
                                    && self.s.get(self.i) == Some(&'\\')
                                    && self.s.get(self.i + 1) == Some(&'u')
                                {
                                    let lo: String = self.s
                                        [self.i + 2..(self.i + 6).min(self.s.len())]
                                        .iter()
                                        .collect();
                                    if let Ok(lo) = u32::from_str_radix(&lo, 16) {
                                        if (0xDC00..0xE000).contains(&lo) {
                                            self.i += 6;
                                            let cp2 =
                                                0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                                            out.extend(char::from_u32(cp2));
                                            continue;
                                        }
                                    }
                                }
                                out.push(char::from_u32(cp).unwrap_or('\u{fffd}'));
                            }
                            _ => out.push('u'),
                        }
                    }
                    other => out.push(other),
                }
                continue;
            }
            out.push(c);
        }
        out
    }

    fn number_or_word(&mut self) -> Value {
        let start = self.i;
        while let Some(c) = self.peek() {
            if c.is_ascii_digit() || matches!(c, '-' | '+' | '.' | 'e' | 'E') {
                self.i += 1;
            } else {
                break;
            }
        }
        let text: String = self.s[start..self.i].iter().collect();
        // a number must end at a delimiter; otherwise it is a bare word ("2nd floor")
        let ends_clean = matches!(self.peek(), None | Some(',' | '}' | ']'))
            || self.peek().is_some_and(char::is_whitespace);
        if ends_clean {
            if let Some(n) = parse_number(&text) {
                return Value::Number(n);
            }
        }
        self.i = start;
        self.bare_word()
    }

    fn bare_word(&mut self) -> Value {
        let start = self.i;
        while let Some(c) = self.peek() {
            let comment = c == '/' && matches!(self.s.get(self.i + 1), Some('/' | '*'));
            if matches!(c, ',' | '}' | ']' | '\n') || comment {
                break;
            }
            self.i += 1;
        }
        if self.i == start {
            // a stray delimiter: consume it so that reading always advances
            self.i += 1;
            return Value::Null;
        }
        let w: String = self.s[start..self.i].iter().collect();
        match w.trim() {
            "true" | "True" => Value::Bool(true),
            "false" | "False" => Value::Bool(false),
            "null" | "None" => Value::Null,
            t => Value::String(t.to_string()),
        }
    }

    fn key(&mut self) -> Option<String> {
        self.skip_ws();
        match self.peek()? {
            q @ ('"' | '\'') => {
                self.i += 1;
                Some(self.string(q))
            }
            _ => {
                let start = self.i;
                while let Some(c) = self.peek() {
                    if matches!(c, ':' | '}' | ',') {
                        break;
                    }
                    self.i += 1;
                }
                let k: String = self.s[start..self.i].iter().collect();
                Some(k.trim().to_string())
            }
        }
    }

    fn object(&mut self, depth: usize) -> Value {
        self.i += 1; // '{'
        let mut m = Map::new();
        loop {
            self.skip_ws();
            match self.peek() {
                None => break,
                Some('}') => {
                    self.i += 1;
                    break;
                }
                Some(',') => {
                    self.i += 1;
                    continue;
                }
                _ => {}
            }
            let before = self.i;
            let Some(k) = self.key() else { break };
            self.skip_ws();
            if self.peek() == Some(':') {
                self.i += 1;
                let v = self.value(depth + 1).unwrap_or(Value::Null);
                m.insert(k, v);
            } else {
                m.insert(k, Value::String(String::new()));
            }
            if self.i == before {
                self.i += 1;
            }
        }
        Value::Object(m)
    }

    fn array(&mut self, depth: usize) -> Value {
        self.i += 1; // '['
        let mut a = Vec::new();
        loop {
            self.skip_ws();
            match self.peek() {
                None => break,
                Some(']') => {
                    self.i += 1;
                    break;
                }
                Some(',') => {
                    self.i += 1;
                    continue;
                }
                Some('}') => {
                    // a brace closing an outer object: the array was left open
                    break;
                }
                _ => {}
            }
            let before = self.i;
            match self.value(depth + 1) {
                Some(v) => a.push(v),
                None => break,
            }
            if self.i == before {
                self.i += 1;
            }
        }
        Value::Array(a)
    }
}

fn parse_number(t: &str) -> Option<Number> {
    if t.contains(['.', 'e', 'E']) {
        let f: f64 = t.parse().ok()?;
        Number::from_f64(f)
    } else if let Ok(i) = t.parse::<i64>() {
        Some(Number::from(i))
    } else if let Ok(u) = t.parse::<u64>() {
        Some(Number::from(u))
    } else {
        Number::from_f64(t.parse::<f64>().ok()?)
    }
}

/// Read `text` as JSON, repairing what LLM replies usually get wrong (see the module docs).
/// `None` when it holds no value at all.
pub fn lenient_json(text: &str) -> Option<Value> {
    if let Ok(v) = serde_json::from_str::<Value>(text) {
        return Some(v);
    }
    let chars: Vec<char> = text.chars().collect();
    let mut r = Reader { s: &chars, i: 0 };
    let mut values: Vec<Value> = Vec::new();
    loop {
        r.skip_ws();
        // skip text between top-level containers
        while let Some(c) = r.peek() {
            if c == '{' || c == '[' {
                break;
            }
            r.i += 1;
        }
        if r.peek().is_none() {
            break;
        }
        let comma_separated = chars[..r.i]
            .iter()
            .rev()
            .find(|c| !c.is_whitespace())
            .is_some_and(|&c| c == ',');
        let Some(v) = r.value(0) else { break };
        if is_empty_container(&v) && !values.is_empty() {
            continue;
        }
        // as json-repair: a value repeating the previous one's structure (not comma-separated)
        // replaces it (a streamed update); an empty previous value is replaced too
        if let Some(last) = values.last() {
            if (!comma_separated && same_structure(last, &v)) || is_empty_container(last) {
                values.pop();
            }
        }
        values.push(v);
    }
    match values.len() {
        0 => None,
        1 => values.pop(),
        _ => Some(Value::Array(values)),
    }
}

fn is_empty_container(v: &Value) -> bool {
    match v {
        Value::Object(o) => o.is_empty(),
        Value::Array(a) => a.is_empty(),
        _ => false,
    }
}

/// Same kinds all the way down, same keys, same list lengths (leaf values not compared).
fn same_structure(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| same_structure(v, w)))
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(v, w)| same_structure(v, w))
        }
        (Value::Number(x), Value::Number(y)) => x.is_f64() == y.is_f64(),
        (Value::String(_), Value::String(_))
        | (Value::Bool(_), Value::Bool(_))
        | (Value::Null, Value::Null) => true,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn candidates_come_from_fences_then_the_whole_text_then_each_opening_bracket() {
        let text = "Here:\n```json\n{\"a\": 1}\n```\nand [2, 3] then {'bad': 1}";
        assert_eq!(
            json_candidates(text),
            vec![json!({"a": 1}), json!({"a": 1}), json!([2, 3])],
            "the fenced body, then `{{` inside the fence, then `[`; nothing repaired"
        );
        assert_eq!(
            json_candidates(" [1, {\"b\": null}] "),
            vec![
                json!([1, {"b": null}]),
                json!([1, {"b": null}]),
                json!({"b": null})
            ]
        );
        assert!(json_candidates("no json {here").is_empty());
        // the lenient reader repairs what the candidates leave out
        assert_eq!(lenient_json("{'bad': 1}"), Some(json!({"bad": 1})));
    }

    #[test]
    fn repairs_common_llm_json_mistakes() {
        assert_eq!(lenient_json("{\"a\": 1,}"), Some(json!({"a": 1})));
        assert_eq!(
            lenient_json("{'action': 'INSERT', 'memory_item': 'it\\'s'}"),
            Some(json!({"action": "INSERT", "memory_item": "it's"}))
        );
        assert_eq!(
            lenient_json("{action: \"DELETE\", memory_index: 2}"),
            Some(json!({"action": "DELETE", "memory_index": 2}))
        );
        assert_eq!(
            lenient_json("{\"x\": True, \"y\": None // c\n}"),
            Some(json!({"x": true, "y": null}))
        );
        assert_eq!(lenient_json("{\"a\": [1, 2}"), Some(json!({"a": [1, 2]})));
        assert_eq!(
            lenient_json("{\"a\": \"b\" \"c\": 1}"),
            Some(json!({"a": "b", "c": 1}))
        );
        assert_eq!(
            lenient_json("{\"a\":1} and {\"b\":2}"),
            Some(json!([{"a": 1}, {"b": 2}]))
        );
        // a repeated structure replaces the previous value
        assert_eq!(
            lenient_json("{\"a\": 1}\n{\"a\": 2}"),
            Some(json!({"a": 2}))
        );
        assert_eq!(
            lenient_json("{'a': 'Dave's sister', 'b': 1}"),
            Some(json!({"a": "Dave's sister", "b": 1}))
        );
        assert_eq!(
            lenient_json("{\"action\": INSERT, \"memory_item\": hello world}"),
            Some(json!({"action": "INSERT", "memory_item": "hello world"}))
        );
        assert_eq!(lenient_json(""), None);
    }

    #[test]
    fn python_value_semantics() {
        assert_eq!(py_int(&json!(" 3 ")), Some(3));
        assert_eq!(py_int(&json!("1_0")), Some(10));
        assert_eq!(py_int(&json!("1__0")), None);
        assert_eq!(py_int(&json!("2.0")), None);
        assert_eq!(py_int(&json!(2.9)), Some(2));
        assert_eq!(py_int(&json!(true)), Some(1));
        assert_eq!(py_int(&json!("-1")), Some(-1));
        assert_eq!(py_int(&json!("\u{0663}")), Some(3));
        assert_eq!(py_int(&json!([1])), None);
        assert_eq!(py_str(&json!(null)), "None");
        assert_eq!(py_str(&json!(1.0)), "1.0");
        assert_eq!(py_str(&json!(1e20)), "1e+20");
        assert_eq!(
            py_str(&json!(["a", 1, {"b": false}])),
            "['a', 1, {'b': False}]"
        );
        assert_eq!(py_splitlines("a\r\nb\rc\n"), vec!["a", "b", "c"]);
        assert_eq!(py_strip("\u{1c} x \n"), "x");
    }
}
