//! TensorBoard event files, written by hand: a file is a sequence of records (little-endian
//! u64 length, masked CRC-32C of the length, the bytes, masked CRC-32C of the bytes), each
//! record an `Event` protocol buffer. Only the fields TensorBoard reads for scalars, text
//! and the hparams session info are encoded. The encoders are pure; [`EventWriter`] is the
//! file edge. [`max_steps`] reads our own files back (to never write a step twice on resume).

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

// ---------------------------------------------------------------------------------------
// CRC-32C (Castagnoli), table-driven, and TensorBoard's masking.

const fn crc32c_table() -> [u32; 256] {
    let mut t = [0u32; 256];
    let mut i = 0;
    while i < 256 {
        let mut c = i as u32;
        let mut k = 0;
        while k < 8 {
            c = if c & 1 != 0 {
                (c >> 1) ^ 0x82F6_3B78
            } else {
                c >> 1
            };
            k += 1;
        }
        t[i] = c;
        i += 1;
    }
    t
}

static CRC32C: [u32; 256] = crc32c_table();

/// CRC-32C of `data`.
pub fn crc32c(data: &[u8]) -> u32 {
    let mut c = !0u32;
    for &b in data {
        c = CRC32C[((c ^ b as u32) & 0xff) as usize] ^ (c >> 8);
    }
    !c
}

/// The masked CRC TFRecord files store.
pub fn masked_crc(data: &[u8]) -> u32 {
    let c = crc32c(data);
    (c.rotate_right(15)).wrapping_add(0xa282_ead8)
}

/// One TFRecord around `data`.
pub fn record(data: &[u8]) -> Vec<u8> {
    let len = (data.len() as u64).to_le_bytes();
    let mut out = Vec::with_capacity(data.len() + 16);
    out.extend_from_slice(&len);
    out.extend_from_slice(&masked_crc(&len).to_le_bytes());
    out.extend_from_slice(data);
    out.extend_from_slice(&masked_crc(data).to_le_bytes());
    out
}

// ---------------------------------------------------------------------------------------
// Protocol buffer encoding (the few wire types the messages use).

fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn key(out: &mut Vec<u8>, field: u32, wire: u8) {
    varint(out, ((field as u64) << 3) | wire as u64);
}

fn bytes_field(out: &mut Vec<u8>, field: u32, b: &[u8]) {
    key(out, field, 2);
    varint(out, b.len() as u64);
    out.extend_from_slice(b);
}

fn double_field(out: &mut Vec<u8>, field: u32, v: f64) {
    key(out, field, 1);
    out.extend_from_slice(&v.to_le_bytes());
}

fn float_field(out: &mut Vec<u8>, field: u32, v: f32) {
    key(out, field, 5);
    out.extend_from_slice(&v.to_le_bytes());
}

fn varint_field(out: &mut Vec<u8>, field: u32, v: u64) {
    key(out, field, 0);
    varint(out, v);
}

/// An hparams value (`google.protobuf.Value`).
#[derive(Debug, Clone, PartialEq)]
pub enum HValue {
    Number(f64),
    Text(String),
    Bool(bool),
}

/// What one `Summary.Value` carries.
#[derive(Debug, Clone, PartialEq)]
pub enum Payload {
    Scalar(f32),
    /// The text plugin's string tensor (Markdown).
    Text(String),
    /// The hparams plugin's session start info.
    Hparams(BTreeMap<String, HValue>),
}

/// `SummaryMetadata { plugin_data { plugin_name, content } }`.
fn plugin_metadata(name: &str, content: &[u8]) -> Vec<u8> {
    let mut pd = Vec::new();
    bytes_field(&mut pd, 1, name.as_bytes());
    if !content.is_empty() {
        bytes_field(&mut pd, 2, content);
    }
    let mut md = Vec::new();
    bytes_field(&mut md, 1, &pd);
    md
}

/// `HParamsPluginData { version: 0, session_start_info { hparams: map } }`.
fn hparams_content(h: &BTreeMap<String, HValue>) -> Vec<u8> {
    let mut ssi = Vec::new();
    for (k, v) in h {
        let mut val = Vec::new();
        match v {
            HValue::Number(x) => double_field(&mut val, 2, *x),
            HValue::Text(s) => bytes_field(&mut val, 3, s.as_bytes()),
            HValue::Bool(b) => varint_field(&mut val, 4, *b as u64),
        }
        let mut entry = Vec::new();
        bytes_field(&mut entry, 1, k.as_bytes());
        bytes_field(&mut entry, 2, &val);
        bytes_field(&mut ssi, 1, &entry);
    }
    let mut out = Vec::new();
    varint_field(&mut out, 1, 0);
    bytes_field(&mut out, 3, &ssi);
    out
}

/// `Summary.Value` for one tag.
fn summary_value(tag: &str, p: &Payload) -> Vec<u8> {
    let mut v = Vec::new();
    bytes_field(&mut v, 1, tag.as_bytes());
    match p {
        Payload::Scalar(x) => float_field(&mut v, 2, *x),
        Payload::Text(s) => {
            // TensorProto { dtype: DT_STRING (7), tensor_shape: {} (scalar), string_val }
            let mut t = Vec::new();
            varint_field(&mut t, 1, 7);
            bytes_field(&mut t, 2, &[]);
            bytes_field(&mut t, 8, s.as_bytes());
            bytes_field(&mut v, 8, &t);
            bytes_field(&mut v, 9, &plugin_metadata("text", &[]));
        }
        Payload::Hparams(h) => {
            // TensorProto { dtype: DT_FLOAT (1), tensor_shape: {}, float_val: [0] }, as the
            // hparams plugin's own summaries carry.
            let mut t = Vec::new();
            varint_field(&mut t, 1, 1);
            bytes_field(&mut t, 2, &[]);
            bytes_field(&mut t, 5, &0f32.to_le_bytes());
            bytes_field(&mut v, 8, &t);
            bytes_field(&mut v, 9, &plugin_metadata("hparams", &hparams_content(h)));
        }
    }
    v
}

/// An `Event` with a summary of `values` at `step`.
pub fn summary_event(wall_time: f64, step: u64, values: &[(String, Payload)]) -> Vec<u8> {
    let mut summary = Vec::new();
    for (tag, p) in values {
        bytes_field(&mut summary, 1, &summary_value(tag, p));
    }
    let mut e = Vec::new();
    double_field(&mut e, 1, wall_time);
    varint_field(&mut e, 2, step);
    bytes_field(&mut e, 5, &summary);
    e
}

/// The first event of every file: `file_version = "brain.Event:2"`.
pub fn version_event(wall_time: f64) -> Vec<u8> {
    let mut e = Vec::new();
    double_field(&mut e, 1, wall_time);
    bytes_field(&mut e, 3, b"brain.Event:2");
    e
}

// ---------------------------------------------------------------------------------------
// Reading our own files back.

/// One protobuf field: (field number, wire type, varint value, bytes).
type Field<'a> = (u32, u8, u64, &'a [u8]);

/// Protobuf fields of one message: (field number, wire type, varint value or bytes).
fn fields(mut b: &[u8]) -> Option<Vec<Field<'_>>> {
    fn read_varint(b: &mut &[u8]) -> Option<u64> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let (&x, rest) = b.split_first()?;
            *b = rest;
            v |= ((x & 0x7f) as u64) << shift;
            if x < 0x80 {
                return Some(v);
            }
        }
        None
    }
    let mut out = Vec::new();
    while !b.is_empty() {
        let k = read_varint(&mut b)?;
        let (field, wire) = ((k >> 3) as u32, (k & 7) as u8);
        match wire {
            0 => out.push((field, 0, read_varint(&mut b)?, &[][..])),
            1 | 5 => {
                let n = if wire == 1 { 8 } else { 4 };
                let (v, rest) = b.split_at_checked(n)?;
                out.push((field, wire, 0, v));
                b = rest;
            }
            2 => {
                let n = usize::try_from(read_varint(&mut b)?).ok()?;
                let (v, rest) = b.split_at_checked(n)?;
                out.push((field, 2, 0, v));
                b = rest;
            }
            _ => return None,
        }
    }
    Some(out)
}

/// The (step, tags) of each event in a file's bytes; a torn or corrupt record ends the read
/// (what a crash can leave at the end of an append-only file).
pub fn read_events(bytes: &[u8]) -> Vec<(u64, Vec<String>)> {
    let mut out = Vec::new();
    let mut b = bytes;
    while b.len() >= 12 {
        let len_bytes = &b[..8];
        let n = u64::from_le_bytes(len_bytes.try_into().unwrap_or_default()) as usize;
        if u32::from_le_bytes(b[8..12].try_into().unwrap_or_default()) != masked_crc(len_bytes)
            || b.len() < 16 + n
        {
            break;
        }
        let data = &b[12..12 + n];
        if u32::from_le_bytes(b[12 + n..16 + n].try_into().unwrap_or_default()) != masked_crc(data)
        {
            break;
        }
        b = &b[16 + n..];
        let Some(fs) = fields(data) else { break };
        let step = fs.iter().find(|f| f.0 == 2 && f.1 == 0).map_or(0, |f| f.2);
        let mut tags = Vec::new();
        for (_, _, _, summary) in fs.iter().filter(|f| f.0 == 5 && f.1 == 2) {
            for (_, _, _, value) in fields(summary)
                .unwrap_or_default()
                .iter()
                .filter(|f| f.0 == 1)
            {
                if let Some(t) = fields(value).unwrap_or_default().iter().find(|f| f.0 == 1) {
                    tags.push(String::from_utf8_lossy(t.3).into_owned());
                }
            }
        }
        out.push((step, tags));
    }
    out
}

/// The group of a tag: the part before its first `/` (`train/reward` -> `train`); for an
/// evaluation, the part before its second (`eval/locomo-test/f1` -> `eval/locomo-test`).
pub fn tag_group(tag: &str) -> &str {
    let first = tag.find('/').unwrap_or(tag.len());
    if &tag[..first] == "eval" {
        if let Some(second) = tag[first + 1..].find('/') {
            return &tag[..first + 1 + second];
        }
    }
    &tag[..first]
}

/// The highest step written per tag group over every event file in `dir`.
pub fn max_steps(dir: &Path) -> Result<BTreeMap<String, u64>> {
    let mut out: BTreeMap<String, u64> = BTreeMap::new();
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Ok(out);
    };
    for entry in rd {
        let entry = entry.with_context(|| format!("listing {}", dir.display()))?;
        let name = entry.file_name();
        let meta = std::fs::symlink_metadata(entry.path())?;
        if !name.to_string_lossy().starts_with("events.out.tfevents.") || !meta.is_file() {
            continue;
        }
        let bytes = std::fs::read(entry.path())
            .with_context(|| format!("reading {}", entry.path().display()))?;
        for (step, tags) in read_events(&bytes) {
            for t in tags {
                let m = out.entry(tag_group(&t).to_string()).or_default();
                *m = (*m).max(step);
            }
        }
    }
    Ok(out)
}

// ---------------------------------------------------------------------------------------
// The file edge.

/// An open event file (append-only; each event is flushed as written).
pub struct EventWriter {
    file: File,
    path: PathBuf,
}

impl EventWriter {
    /// A new event file in `dir` (created), named as TensorBoard expects.
    pub fn create(dir: &Path) -> Result<Self> {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
            .map(|h| h.trim().replace(['/', '\\'], "_"))
            .unwrap_or_else(|_| "host".into());
        let mut n = 0;
        let (file, path) = loop {
            let path = dir.join(format!(
                "events.out.tfevents.{}.{host}.{}.{n}",
                now.as_secs(),
                std::process::id()
            ));
            match OpenOptions::new().write(true).create_new(true).open(&path) {
                Ok(f) => break (f, path),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && n < 1000 => n += 1,
                Err(e) => return Err(e).with_context(|| format!("creating {}", path.display())),
            }
        };
        let mut w = Self { file, path };
        w.write_event(&version_event(now.as_secs_f64()))?;
        Ok(w)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Append one event record and flush it.
    pub fn write_event(&mut self, event: &[u8]) -> Result<()> {
        self.file
            .write_all(&record(event))
            .and_then(|_| self.file.flush())
            .with_context(|| format!("writing {}", self.path.display()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc32c_matches_the_standard_check_value() {
        // The CRC-32C check value of "123456789" (RFC 3720, appendix B.4).
        assert_eq!(crc32c(b"123456789"), 0xE306_9283);
        assert_eq!(crc32c(b""), 0);
    }

    #[test]
    fn records_read_back_and_a_torn_tail_is_ignored() {
        let mut bytes = record(&version_event(1.0));
        let vals = vec![
            ("train/reward".to_string(), Payload::Scalar(0.5)),
            ("bank/skills".to_string(), Payload::Text("| a |".into())),
        ];
        bytes.extend(record(&summary_event(2.0, 7, &vals)));
        let h = BTreeMap::from([("ppo.lr".to_string(), HValue::Number(1e-3))]);
        bytes.extend(record(&summary_event(
            2.0,
            0,
            &[("_hparams_/session_start_info".into(), Payload::Hparams(h))],
        )));
        let full = read_events(&bytes);
        assert_eq!(full.len(), 3);
        assert_eq!(
            full[1],
            (
                7,
                vec!["train/reward".to_string(), "bank/skills".to_string()]
            )
        );
        // A crash in the middle of the last record: the complete ones still read.
        let torn = read_events(&bytes[..bytes.len() - 3]);
        assert_eq!(torn.len(), 2);
        // A flipped byte in a record's data fails its CRC and ends the read there.
        let mut bad = bytes.clone();
        let at = record(&version_event(1.0)).len() + 20;
        bad[at] ^= 1;
        assert_eq!(read_events(&bad).len(), 1);
    }

    #[test]
    fn max_steps_per_group_over_files() {
        let dir = tempfile::tempdir().unwrap();
        let mut w = EventWriter::create(dir.path()).unwrap();
        w.write_event(&summary_event(
            1.0,
            3,
            &[("train/reward".into(), Payload::Scalar(1.0))],
        ))
        .unwrap();
        let mut w2 = EventWriter::create(dir.path()).unwrap();
        assert_ne!(w.path(), w2.path());
        w2.write_event(&summary_event(
            1.0,
            5,
            &[("train/kl".into(), Payload::Scalar(1.0))],
        ))
        .unwrap();
        w2.write_event(&summary_event(
            1.0,
            2,
            &[("stage/reward".into(), Payload::Scalar(1.0))],
        ))
        .unwrap();
        let m = max_steps(dir.path()).unwrap();
        assert_eq!(m.get("train"), Some(&5));
        assert_eq!(m.get("stage"), Some(&2));
        assert!(max_steps(&dir.path().join("none")).unwrap().is_empty());
    }
}
