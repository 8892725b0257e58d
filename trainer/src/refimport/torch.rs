//! Reading a `torch.save` zip checkpoint: `<prefix>/data.pkl` (parsed by [`super::pickle`],
//! nothing executed) and the tensor storages `<prefix>/data/<key>` it refers to.

use std::collections::BTreeMap;
use std::io::{Cursor, Read};

use anyhow::{bail, Context, Result};

use super::pickle::{Id, Node, Pickle};

/// An opened checkpoint: the pickle graph and the raw storages by key.
pub struct TorchFile {
    pub pickle: Pickle,
    storages: BTreeMap<String, Vec<u8>>,
}

/// A float tensor: shape and row-major values.
#[derive(Debug, Clone, PartialEq)]
pub struct FloatTensor {
    pub shape: Vec<usize>,
    pub data: Vec<f32>,
}

impl TorchFile {
    /// Opens the zip bytes of a `torch.save` file (`what` names it in errors).
    pub fn open(bytes: &[u8], what: &str) -> Result<TorchFile> {
        let mut zip = zip::ZipArchive::new(Cursor::new(bytes)).with_context(|| {
            format!("{what}: not a torch zip checkpoint (torch.save since 1.6 writes a zip)")
        })?;
        let names: Vec<String> = zip
            .file_names()
            .filter_map(|n| n.ok().map(|n| n.into_owned()))
            .collect();
        let pkl = names
            .iter()
            .find(|n| n.ends_with("/data.pkl") && n.matches('/').count() == 1)
            .with_context(|| format!("{what}: the zip holds no <prefix>/data.pkl"))?
            .clone();
        let prefix = pkl.trim_end_matches("data.pkl").to_string();
        let budget = bytes.len() as u64;
        let mut read = |name: &str| -> Result<Vec<u8>> {
            let mut f = zip
                .by_name(name)
                .with_context(|| format!("{what}: reading {name}"))?;
            if f.size() > budget {
                bail!(
                    "{what}: {name} claims {} bytes, more than the file",
                    f.size()
                );
            }
            let mut out = Vec::with_capacity(f.size() as usize);
            f.read_to_end(&mut out)
                .with_context(|| format!("{what}: reading {name}"))?;
            Ok(out)
        };
        let pickle = Pickle::parse(&read(&pkl)?).with_context(|| format!("{what}: {pkl}"))?;
        let mut storages = BTreeMap::new();
        let data = format!("{prefix}data/");
        for n in &names {
            if let Some(key) = n.strip_prefix(&data) {
                if !key.is_empty() && !key.contains('/') {
                    storages.insert(key.to_string(), read(n)?);
                }
            }
        }
        Ok(TorchFile { pickle, storages })
    }

    /// The float tensor `id` (a `torch._utils._rebuild_tensor_v2` call, or a parameter
    /// wrapping one); `name` is used in errors.
    ///
    /// Bounded whatever the file claims: parameter wrappers are unwrapped in a loop (at most
    /// [`MAX_WRAPPERS`] deep, so a cycle or a million nested wrappers is an error, not a stack
    /// overflow), and the shape, offset and strides are checked with checked arithmetic
    /// against the elements the storage really holds before anything is allocated.
    pub fn tensor(&self, id: Id, name: &str) -> Result<FloatTensor> {
        let p = &self.pickle;
        let mut id = id;
        let mut depth = 0;
        let a = loop {
            let Node::Object { callable, args, .. } = p.node(id) else {
                bail!("{name}: expected a tensor, found {}", p.kind(id));
            };
            let func = p.global(*callable).unwrap_or_default();
            let a = p
                .items(*args)
                .with_context(|| format!("{name}: {func} without argument tuple"))?;
            if func != "torch._utils._rebuild_parameter" {
                if func != "torch._utils._rebuild_tensor_v2" || a.len() < 4 {
                    bail!("{name}: expected a tensor, found {}", p.kind(id));
                }
                break a;
            }
            depth += 1;
            if depth > MAX_WRAPPERS {
                bail!("{name}: parameters nested more than {MAX_WRAPPERS} deep (a cycle or a hostile file)");
            }
            id = *a
                .first()
                .with_context(|| format!("{name}: empty parameter"))?;
        };
        let (dtype, key) = self.storage_ref(a[0], name)?;
        let int = |i: Id| p.int(i).filter(|v| *v >= 0).map(|v| v as usize);
        let ints = |i: Id| -> Option<Vec<usize>> { p.items(i)?.iter().map(|&x| int(x)).collect() };
        let (offset, shape, stride) = match (int(a[1]), ints(a[2]), ints(a[3])) {
            (Some(o), Some(sh), Some(st)) if sh.len() == st.len() => (o, sh, st),
            _ => bail!("{name}: malformed tensor offset / size / stride"),
        };
        let raw = self
            .storages
            .get(&key)
            .with_context(|| format!("{name}: storage data/{key} is missing from the zip"))?;
        let values = decode(raw, &dtype).with_context(|| format!("{name}: storage {key}"))?;
        let numel = checked_extent(&shape, &stride, offset, values.len()).with_context(|| {
            format!(
                "{name}: shape {shape:?}, stride {stride:?}, offset {offset} against storage {key}"
            )
        })?;
        let mut data = Vec::with_capacity(numel);
        let mut index = vec![0usize; shape.len()];
        for _ in 0..numel {
            // In range: checked_extent bounded the largest reachable index.
            let at = offset + index.iter().zip(&stride).map(|(i, s)| i * s).sum::<usize>();
            data.push(values[at]);
            for d in (0..shape.len()).rev() {
                index[d] += 1;
                if index[d] < shape[d] {
                    break;
                }
                index[d] = 0;
            }
        }
        Ok(FloatTensor { shape, data })
    }

    /// (storage class, key) of a `('storage', torch.FloatStorage, key, location, numel)` id.
    fn storage_ref(&self, id: Id, name: &str) -> Result<(String, String)> {
        let p = &self.pickle;
        let bad = || format!("{name}: malformed storage reference");
        let Node::PersId(t) = p.node(id) else {
            bail!(bad());
        };
        let t = p.items(*t).with_context(bad)?;
        if t.len() < 3 || p.str(t[0]) != Some("storage") {
            bail!(bad());
        }
        let dtype = p.global(t[1]).with_context(bad)?;
        let key = p.str(t[2]).with_context(bad)?.to_string();
        Ok((dtype, key))
    }
}

/// How many `torch.nn.Parameter` wrappers a tensor may sit in (real checkpoints have one).
pub const MAX_WRAPPERS: usize = 8;

/// The element count of a tensor view, checked: the count, and the largest storage index
/// the view reaches (`offset + sum((size - 1) * stride)`), computed without overflow, the
/// count no larger than the storage (a checkpoint's tensors do not broadcast), and the
/// largest index inside the storage of `len` elements.
pub fn checked_extent(
    shape: &[usize],
    stride: &[usize],
    offset: usize,
    len: usize,
) -> Result<usize> {
    let overflow = || anyhow::anyhow!("the shape's element count overflows");
    let numel = shape
        .iter()
        .try_fold(1usize, |n, &d| n.checked_mul(d))
        .ok_or_else(overflow)?;
    if numel > len {
        bail!("claims {numel} elements, the storage holds {len}");
    }
    if numel == 0 {
        return Ok(0);
    }
    let last = shape
        .iter()
        .zip(stride)
        .try_fold(offset, |acc, (&d, &s)| {
            acc.checked_add((d - 1).checked_mul(s)?)
        })
        .ok_or_else(overflow)?;
    if last >= len {
        bail!("reaches element {last}, outside its storage of {len}");
    }
    Ok(numel)
}

/// Little-endian storage bytes as f32 (float32, float64 and 16-bit floats are accepted).
fn decode(raw: &[u8], dtype: &str) -> Result<Vec<f32>> {
    Ok(match dtype {
        "torch.FloatStorage" => raw
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect(),
        "torch.DoubleStorage" => raw
            .chunks_exact(8)
            .map(|c| {
                let mut a = [0u8; 8];
                a.copy_from_slice(c);
                f64::from_le_bytes(a) as f32
            })
            .collect(),
        "torch.BFloat16Storage" => raw
            .chunks_exact(2)
            .map(|c| f32::from_bits((u16::from_le_bytes([c[0], c[1]]) as u32) << 16))
            .collect(),
        other => bail!("unsupported tensor type {other} (float32, float64 or bfloat16 expected)"),
    })
}

/// Hand-built `torch.save` zips for tests and fuzzing: one float32 storage `0` and a pickle
/// whose root is a tensor wrapped in `wrappers` parameters.
#[doc(hidden)]
pub mod craft {
    use std::io::Write;

    fn text(out: &mut Vec<u8>, s: &str) {
        out.push(b'X');
        out.extend((s.len() as u32).to_le_bytes());
        out.extend(s.as_bytes());
    }

    fn int(out: &mut Vec<u8>, v: u64) {
        out.extend([0x8a, 8]);
        out.extend(v.to_le_bytes());
    }

    fn tuple(out: &mut Vec<u8>, vs: &[u64]) {
        out.push(b'(');
        for &v in vs {
            int(out, v);
        }
        out.push(b't');
    }

    /// The pickle of `_rebuild_tensor_v2(storage '0' of `numel` floats, offset, shape,
    /// stride)` inside `wrappers` `_rebuild_parameter` calls.
    pub fn tensor_pickle(
        wrappers: usize,
        numel: u64,
        offset: u64,
        shape: &[u64],
        stride: &[u64],
    ) -> Vec<u8> {
        let mut out = vec![0x80, 2];
        for _ in 0..wrappers {
            out.extend(b"ctorch._utils\n_rebuild_parameter\n(");
        }
        out.extend(b"ctorch._utils\n_rebuild_tensor_v2\n(");
        out.push(b'(');
        text(&mut out, "storage");
        out.extend(b"ctorch\nFloatStorage\n");
        text(&mut out, "0");
        text(&mut out, "cpu");
        int(&mut out, numel);
        out.extend(b"tQ");
        int(&mut out, offset);
        tuple(&mut out, shape);
        tuple(&mut out, stride);
        out.extend(b"tR");
        for _ in 0..wrappers {
            out.extend(b"tR");
        }
        out.push(b'.');
        out
    }

    /// A zip `archive/data.pkl` + `archive/data/0` (the given floats).
    pub fn zip(pickle: &[u8], storage: &[f32]) -> Vec<u8> {
        let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
        let opt = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Stored);
        w.start_file("archive/data.pkl", opt).unwrap();
        w.write_all(pickle).unwrap();
        w.start_file("archive/data/0", opt).unwrap();
        for v in storage {
            w.write_all(&v.to_le_bytes()).unwrap();
        }
        w.finish().unwrap().into_inner()
    }
}

#[cfg(test)]
mod tests {
    use super::craft::{tensor_pickle, zip};
    use super::*;

    fn read(wrappers: usize, offset: u64, shape: &[u64], stride: &[u64]) -> Result<FloatTensor> {
        let storage = [1.0f32, 2.0, 3.0, 4.0];
        let bytes = zip(&tensor_pickle(wrappers, 4, offset, shape, stride), &storage);
        let tf = TorchFile::open(&bytes, "t.pt")?;
        tf.tensor(tf.pickle.root, "w")
    }

    #[test]
    fn a_wrapped_tensor_reads_with_its_strides() {
        let t = read(1, 0, &[2, 2], &[1, 2]).unwrap();
        assert_eq!(t.shape, vec![2, 2]);
        assert_eq!(t.data, vec![1.0, 3.0, 2.0, 4.0]);
        assert_eq!(read(0, 1, &[3], &[1]).unwrap().data, vec![2.0, 3.0, 4.0]);
        assert_eq!(
            read(0, 0, &[0, 5], &[5, 1]).unwrap().data,
            Vec::<f32>::new()
        );
    }

    /// Issue 46, case 1: each hostile shape is an error naming the tensor, before any
    /// allocation the file's bytes do not back (so no abort, overflow panic or long run).
    #[test]
    fn hostile_shapes_and_nesting_are_errors_not_crashes() {
        let msg = |r: Result<FloatTensor>| format!("{:#}", r.unwrap_err());
        let deep = msg(read(1_000_000, 0, &[2], &[1]));
        assert!(deep.contains("nested more than 8"), "{deep}");
        let over = msg(read(0, 0, &[1 << 40, 1 << 40], &[1, 1]));
        assert!(over.contains("overflows"), "{over}");
        let huge = msg(read(0, 0, &[1 << 40], &[1]));
        assert!(
            huge.contains("claims 1099511627776 elements, the storage holds 4"),
            "{huge}"
        );
        let broadcast = msg(read(0, 0, &[100_000_000], &[0]));
        assert!(
            broadcast.contains("claims 100000000 elements"),
            "{broadcast}"
        );
        let outside = msg(read(0, 2, &[2, 2], &[2, 1]));
        assert!(
            outside.contains("reaches element 5, outside its storage of 4"),
            "{outside}"
        );
        let stride = msg(read(0, 0, &[2], &[u64::MAX >> 1]));
        assert!(
            stride.contains("overflows") || stride.contains("outside"),
            "{stride}"
        );
        assert!(deep.starts_with("w: "), "{deep}");
    }
}
