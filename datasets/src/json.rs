//! Reading JSON / JSONL files and walking `serde_json::Value`s with a path, so that every
//! type or presence error names the exact field (`[3].qa[12].category`).

use std::path::Path;

use serde_json::Value;

use crate::DatasetError;

/// Largest data file the loaders read (2 GiB); callers may check a lower limit first with
/// [`check_data_file`].
pub const DEFAULT_MAX_FILE_BYTES: u64 = 2048 << 20;

/// Checks, before reading, that `path` exists, is a regular file (not a directory, FIFO,
/// device or socket: `/dev/zero` or a FIFO would never end or block) and holds at most
/// `max_bytes` bytes.
pub fn check_data_file(path: &Path, max_bytes: u64) -> Result<(), DatasetError> {
    let file = path.display().to_string();
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(DatasetError::NotFound { file })
        }
        Err(source) => return Err(DatasetError::Io { file, source }),
    };
    if meta.is_dir() {
        return Err(DatasetError::IsDirectory { file });
    }
    if !meta.is_file() {
        return Err(DatasetError::NotRegular { file });
    }
    if meta.len() > max_bytes {
        return Err(DatasetError::TooLarge {
            file,
            size: meta.len(),
            limit: max_bytes,
        });
    }
    Ok(())
}

/// Reads a file into a string with precise errors for missing / directory / non-regular /
/// oversized / empty files.
pub(crate) fn read_text(path: &Path) -> Result<String, DatasetError> {
    use std::io::Read;
    let file = path.display().to_string();
    check_data_file(path, DEFAULT_MAX_FILE_BYTES)?;
    let mut text = String::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(DEFAULT_MAX_FILE_BYTES + 1).read_to_string(&mut text))
        .map_err(|source| DatasetError::Io {
            file: file.clone(),
            source,
        })?;
    if text.len() as u64 > DEFAULT_MAX_FILE_BYTES {
        return Err(DatasetError::TooLarge {
            file,
            size: text.len() as u64,
            limit: DEFAULT_MAX_FILE_BYTES,
        });
    }
    if text.trim().is_empty() {
        return Err(DatasetError::Empty { file });
    }
    Ok(text)
}

fn json_error(file: &str, e: &serde_json::Error) -> DatasetError {
    let msg = e.to_string();
    // serde_json appends " at line L column C"; we report those separately.
    let msg = match msg.rfind(" at line ") {
        Some(i) => msg[..i].to_string(),
        None => msg,
    };
    DatasetError::Json {
        file: file.to_string(),
        line: e.line(),
        column: e.column(),
        truncated: e.is_eof(),
        msg,
    }
}

/// Parses one JSON document (the whole file).
pub(crate) fn parse_document(path: &Path) -> Result<Value, DatasetError> {
    let text = read_text(path)?;
    let file = path.display().to_string();
    serde_json::from_str(&text).map_err(|e| json_error(&file, &e))
}

/// Parses a file that is either one JSON array of records, one JSON object (one record), or
/// JSON Lines (one record per line; blank lines ignored). Returns `(path prefix, record)` pairs:
/// `[i]` for array elements, `line N` for JSONL records.
pub(crate) fn parse_records(path: &Path) -> Result<Vec<(String, Value)>, DatasetError> {
    let text = read_text(path)?;
    let file = path.display().to_string();
    let mut values = Vec::new();
    let mut stream = serde_json::Deserializer::from_str(&text).into_iter::<Value>();
    loop {
        let start = stream.byte_offset();
        match stream.next() {
            None => break,
            Some(Ok(v)) => {
                // Line of the first non-whitespace byte of this value.
                let lead = text[start..]
                    .find(|c: char| !c.is_whitespace())
                    .map_or(start, |i| start + i);
                let line = text[..lead].matches('\n').count() + 1;
                values.push((line, v));
            }
            Some(Err(e)) => return Err(json_error(&file, &e)),
        }
    }
    if values.len() == 1 {
        let (line, v) = values.pop().unwrap_or((1, Value::Null));
        return Ok(match v {
            Value::Array(items) => items
                .into_iter()
                .enumerate()
                .map(|(i, v)| (format!("[{i}]"), v))
                .collect(),
            other => vec![(format!("line {line}"), other)],
        });
    }
    Ok(values
        .into_iter()
        .map(|(line, v)| (format!("line {line}"), v))
        .collect())
}

/// The records of an in-memory document: an array's elements (`[i]`), or the value itself.
pub(crate) fn records_of(v: &Value) -> Vec<(String, Value)> {
    match v {
        Value::Array(items) => items
            .iter()
            .enumerate()
            .map(|(i, v)| (format!("[{i}]"), v.clone()))
            .collect(),
        other => vec![("line 1".to_string(), other.clone())],
    }
}

/// Name of a JSON value's type for error messages.
pub(crate) fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// A JSON value together with its file and path, for precise errors.
#[derive(Clone, Copy)]
pub(crate) struct Node<'a> {
    pub v: &'a Value,
    pub file: &'a str,
    pub path: &'a str,
}

/// An owned path: nodes borrow their path, so children are built through this helper.
pub(crate) fn child_path(parent: &str, key: &str) -> String {
    if parent.is_empty() {
        key.to_string()
    } else {
        format!("{parent}.{key}")
    }
}

pub(crate) fn index_path(parent: &str, i: usize) -> String {
    format!("{parent}[{i}]")
}

impl<'a> Node<'a> {
    pub fn new(v: &'a Value, file: &'a str, path: &'a str) -> Self {
        Node { v, file, path }
    }

    pub fn wrong(&self, expected: &'static str) -> DatasetError {
        DatasetError::WrongType {
            file: self.file.to_string(),
            path: self.display_path(),
            expected,
            found: type_name(self.v),
        }
    }

    pub fn invalid(&self, msg: impl Into<String>) -> DatasetError {
        DatasetError::Invalid {
            file: self.file.to_string(),
            path: self.display_path(),
            msg: msg.into(),
        }
    }

    pub fn display_path(&self) -> String {
        if self.path.is_empty() {
            "(top level)".to_string()
        } else {
            self.path.to_string()
        }
    }

    pub fn object(&self) -> Result<&'a serde_json::Map<String, Value>, DatasetError> {
        self.v.as_object().ok_or_else(|| self.wrong("object"))
    }

    pub fn array(&self) -> Result<&'a Vec<Value>, DatasetError> {
        self.v.as_array().ok_or_else(|| self.wrong("array"))
    }

    pub fn str(&self) -> Result<&'a str, DatasetError> {
        self.v.as_str().ok_or_else(|| self.wrong("string"))
    }

    pub fn int(&self) -> Result<i64, DatasetError> {
        self.v.as_i64().ok_or_else(|| self.wrong("integer"))
    }

    /// A string, or a number rendered as text (some gold answers are numbers).
    pub fn text(&self) -> Result<String, DatasetError> {
        match self.v {
            Value::String(s) => Ok(s.clone()),
            Value::Number(n) => Ok(n.to_string()),
            _ => Err(self.wrong("string or number")),
        }
    }
}

/// Looks up `key` in an object node; `None` when absent or null.
pub(crate) fn get<'a>(obj: &Node<'a>, key: &str) -> Result<Option<&'a Value>, DatasetError> {
    let map = obj.object()?;
    Ok(map.get(key).filter(|v| !v.is_null()))
}

/// Looks up a required `key`, with the error naming `path.key`.
pub(crate) fn require<'a>(obj: &Node<'a>, key: &str) -> Result<&'a Value, DatasetError> {
    get(obj, key)?.ok_or_else(|| DatasetError::MissingField {
        file: obj.file.to_string(),
        path: child_path(obj.path, key),
    })
}

/// Required string field.
pub(crate) fn req_str(obj: &Node<'_>, key: &str) -> Result<String, DatasetError> {
    let v = require(obj, key)?;
    let p = child_path(obj.path, key);
    Ok(Node::new(v, obj.file, &p).str()?.to_string())
}

/// Required string-or-number field rendered as text.
pub(crate) fn req_text(obj: &Node<'_>, key: &str) -> Result<String, DatasetError> {
    let v = require(obj, key)?;
    let p = child_path(obj.path, key);
    Node::new(v, obj.file, &p).text()
}

/// Optional string field (absent or null gives `None`).
pub(crate) fn opt_str(obj: &Node<'_>, key: &str) -> Result<Option<String>, DatasetError> {
    match get(obj, key)? {
        None => Ok(None),
        Some(v) => {
            let p = child_path(obj.path, key);
            Ok(Some(Node::new(v, obj.file, &p).str()?.to_string()))
        }
    }
}

/// A list of strings (elements checked one by one).
pub(crate) fn str_list(node: &Node<'_>) -> Result<Vec<String>, DatasetError> {
    let items = node.array()?;
    let mut out = Vec::with_capacity(items.len());
    for (i, v) in items.iter().enumerate() {
        let p = index_path(node.path, i);
        out.push(Node::new(v, node.file, &p).text()?);
    }
    Ok(out)
}

/// Rejects a second record with an id already seen, naming both places. `ids` yields
/// (JSON path of the record's id, id).
pub(crate) fn check_unique_ids<'a>(
    file: &str,
    ids: impl IntoIterator<Item = (String, &'a str)>,
) -> Result<(), DatasetError> {
    let mut seen: std::collections::HashMap<&str, String> = std::collections::HashMap::new();
    for (path, id) in ids {
        if let Some(first) = seen.get(id) {
            return Err(DatasetError::DuplicateId {
                file: file.to_string(),
                path,
                first: first.clone(),
                id: id.to_string(),
            });
        }
        seen.insert(id, path);
    }
    Ok(())
}
