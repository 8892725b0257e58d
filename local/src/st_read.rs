//! Safetensors tensors read straight into `f32` buffers, a few MiB at a time: the file is
//! neither memory-mapped nor read whole, so loading a model costs its `f32` weights plus one
//! small buffer (a bf16 / f16 file is converted as it is read; both copies never coexist).

use memskill_core::EncoderError;
use std::collections::HashMap;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

/// Bytes read per step.
const CHUNK: usize = 4 << 20;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Dtype {
    F32,
    Bf16,
    F16,
}

impl Dtype {
    fn parse(s: &str) -> Option<Self> {
        match s {
            "F32" => Some(Dtype::F32),
            "BF16" => Some(Dtype::Bf16),
            "F16" => Some(Dtype::F16),
            _ => None,
        }
    }
    fn size(self) -> usize {
        match self {
            Dtype::F32 => 4,
            Dtype::Bf16 | Dtype::F16 => 2,
        }
    }
}

#[derive(Debug, Clone)]
struct Entry {
    file: usize,
    dtype: Dtype,
    shape: Vec<usize>,
    /// Absolute byte range in the file.
    start: u64,
    end: u64,
}

/// The tensors of one or more safetensors files, by name.
pub struct SafeTensors {
    files: Vec<(PathBuf, File)>,
    entries: HashMap<String, Entry>,
}

fn err(path: &Path, msg: impl std::fmt::Display) -> EncoderError {
    EncoderError(format!("{}: {msg}", path.display()))
}

/// The header of one file: `(name, dtype, shape, start, end)` with absolute offsets.
fn read_header(path: &Path, f: &mut File) -> Result<Vec<(String, Entry)>, EncoderError> {
    let len = f.metadata().map_err(|e| err(path, e))?.len();
    let mut n = [0u8; 8];
    f.read_exact(&mut n)
        .map_err(|e| err(path, format!("safetensors header: {e}")))?;
    let n = u64::from_le_bytes(n);
    if n > len.saturating_sub(8) || n > 100 << 20 {
        return Err(err(
            path,
            format!("safetensors header of {n} bytes in a {len}-byte file"),
        ));
    }
    let mut head = vec![0u8; n as usize];
    f.read_exact(&mut head)
        .map_err(|e| err(path, format!("safetensors header: {e}")))?;
    let v: serde_json::Value =
        serde_json::from_slice(&head).map_err(|e| err(path, format!("safetensors header: {e}")))?;
    let obj = v
        .as_object()
        .ok_or_else(|| err(path, "safetensors header is not a JSON object"))?;
    let base = 8 + n;
    let mut out = Vec::with_capacity(obj.len());
    for (name, t) in obj.iter().filter(|(k, _)| k.as_str() != "__metadata__") {
        let bad = |what: &str| err(path, format!("tensor {name}: {what}"));
        let dtype = t.get("dtype").and_then(|d| d.as_str()).unwrap_or("?");
        let shape: Vec<usize> = t
            .get("shape")
            .and_then(|s| s.as_array())
            .ok_or_else(|| bad("no shape"))?
            .iter()
            .map(|d| d.as_u64().map(|d| d as usize))
            .collect::<Option<_>>()
            .ok_or_else(|| bad("shape is not a list of integers"))?;
        let off: Vec<u64> = t
            .get("data_offsets")
            .and_then(|s| s.as_array())
            .and_then(|a| a.iter().map(|d| d.as_u64()).collect())
            .ok_or_else(|| bad("no data_offsets"))?;
        let [a, b] = off[..] else {
            return Err(bad("data_offsets is not [start, end]"));
        };
        let (Some(start), Some(end)) = (base.checked_add(a), base.checked_add(b)) else {
            return Err(bad("data_offsets overflow"));
        };
        // Tensors of other dtypes (e.g. integer buffers) are listed but unreadable as f32.
        let dtype = match Dtype::parse(dtype) {
            Some(d) => d,
            None => continue,
        };
        let bytes = shape
            .iter()
            .try_fold(1usize, |p, &d| p.checked_mul(d))
            .and_then(|c| c.checked_mul(dtype.size()));
        if a > b || end > len || Some((b - a) as usize) != bytes {
            return Err(bad(
                "data_offsets do not match its shape, dtype and the file size",
            ));
        }
        out.push((
            name.clone(),
            Entry {
                file: 0,
                dtype,
                shape,
                start,
                end,
            },
        ));
    }
    Ok(out)
}

impl SafeTensors {
    /// Reads the headers of `paths` (a sharded model lists several files).
    pub fn open(paths: &[PathBuf]) -> Result<Self, EncoderError> {
        let mut files = Vec::with_capacity(paths.len());
        let mut entries = HashMap::new();
        for (i, p) in paths.iter().enumerate() {
            let mut f = File::open(p).map_err(|e| err(p, e))?;
            for (name, mut e) in read_header(p, &mut f)? {
                e.file = i;
                entries.insert(name, e);
            }
            files.push((p.clone(), f));
        }
        Ok(Self { files, entries })
    }

    /// Bytes of all its (f32 / bf16 / f16) tensors once converted to f32.
    pub fn f32_bytes(&self) -> u64 {
        self.entries
            .values()
            .map(|e| 4 * e.shape.iter().product::<usize>() as u64)
            .sum()
    }

    /// Whether `name` is present (as an f32 / bf16 / f16 tensor).
    pub fn contains(&self, name: &str) -> bool {
        self.entries.contains_key(name)
    }

    /// Appends tensor `name` (which must have `shape`) to `dst` as `f32`.
    pub fn read_into(
        &self,
        name: &str,
        shape: &[usize],
        dst: &mut Vec<f32>,
    ) -> Result<(), EncoderError> {
        let what = || {
            self.files
                .iter()
                .map(|(p, _)| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        };
        let e = self.entries.get(name).ok_or_else(|| {
            EncoderError(format!("{}: no tensor {name} (f32, bf16 or f16)", what()))
        })?;
        let (path, file) = &self.files[e.file];
        if e.shape != shape {
            return Err(err(
                path,
                format!("tensor {name} has shape {:?}, expected {shape:?}", e.shape),
            ));
        }
        let mut f = file;
        f.seek(SeekFrom::Start(e.start)).map_err(|x| err(path, x))?;
        dst.reserve_exact((e.end - e.start) as usize / e.dtype.size());
        let mut buf = vec![0u8; CHUNK.min((e.end - e.start) as usize)];
        let mut left = (e.end - e.start) as usize;
        while left > 0 {
            let n = left.min(buf.len());
            f.read_exact(&mut buf[..n])
                .map_err(|x| err(path, format!("tensor {name}: {x}")))?;
            convert(e.dtype, &buf[..n], dst);
            left -= n;
        }
        Ok(())
    }
}

/// Little-endian `bytes` of `dtype` appended to `dst` as f32 (chunks hold whole elements).
fn convert(dtype: Dtype, bytes: &[u8], dst: &mut Vec<f32>) {
    match dtype {
        Dtype::F32 => dst.extend(
            bytes
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])),
        ),
        Dtype::Bf16 => dst.extend(
            bytes
                .chunks_exact(2)
                .map(|b| half::bf16::from_bits(u16::from_le_bytes([b[0], b[1]])).to_f32()),
        ),
        Dtype::F16 => dst.extend(
            bytes
                .chunks_exact(2)
                .map(|b| half::f16::from_bits(u16::from_le_bytes([b[0], b[1]])).to_f32()),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(path: &Path, header: &serde_json::Value, data: &[u8]) {
        let h = header.to_string();
        let mut bytes = (h.len() as u64).to_le_bytes().to_vec();
        bytes.extend_from_slice(h.as_bytes());
        bytes.extend_from_slice(data);
        std::fs::write(path, bytes).unwrap();
    }

    #[test]
    fn reads_f32_bf16_f16_and_names_bad_input() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("m.safetensors");
        let vals = [1.5f32, -2.0, 0.25];
        let mut data: Vec<u8> = vals.iter().flat_map(|v| v.to_le_bytes()).collect();
        data.extend(
            vals.iter()
                .flat_map(|v| half::bf16::from_f32(*v).to_le_bytes()),
        );
        data.extend(
            vals.iter()
                .flat_map(|v| half::f16::from_f32(*v).to_le_bytes()),
        );
        let header = serde_json::json!({
            "__metadata__": {"format": "pt"},
            "a": {"dtype": "F32", "shape": [3], "data_offsets": [0, 12]},
            "b": {"dtype": "BF16", "shape": [1, 3], "data_offsets": [12, 18]},
            "c": {"dtype": "F16", "shape": [3], "data_offsets": [18, 24]},
        });
        write(&p, &header, &data);
        let st = SafeTensors::open(std::slice::from_ref(&p)).unwrap();
        let mut out = Vec::new();
        st.read_into("a", &[3], &mut out).unwrap();
        st.read_into("b", &[1, 3], &mut out).unwrap();
        st.read_into("c", &[3], &mut out).unwrap();
        assert_eq!(out, [vals, vals, vals].concat());
        assert_eq!(st.f32_bytes(), 36);
        let e = st.read_into("a", &[4], &mut out).unwrap_err().0;
        assert!(e.contains("tensor a has shape [3]"), "{e}");
        let e = st.read_into("zz", &[3], &mut out).unwrap_err().0;
        assert!(
            e.contains("no tensor zz") && e.contains("m.safetensors"),
            "{e}"
        );
        // Offsets that run past the file are refused when the header is read.
        let bad = serde_json::json!({"a": {"dtype": "F32", "shape": [9], "data_offsets": [0, 36]}});
        write(&p, &bad, &data[..12]);
        let e = SafeTensors::open(std::slice::from_ref(&p)).err().unwrap().0;
        assert!(e.contains("tensor a") && e.contains("data_offsets"), "{e}");
        std::fs::write(&p, b"\x05").unwrap();
        let e = SafeTensors::open(&[p]).err().unwrap().0;
        assert!(e.contains("safetensors header"), "{e}");
    }
}
