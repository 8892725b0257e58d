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
    pub fn tensor(&self, id: Id, name: &str) -> Result<FloatTensor> {
        let p = &self.pickle;
        let Node::Object { callable, args, .. } = p.node(id) else {
            bail!("{name}: expected a tensor, found {}", p.kind(id));
        };
        let func = p.global(*callable).unwrap_or_default();
        let a = p
            .items(*args)
            .with_context(|| format!("{name}: {func} without argument tuple"))?;
        if func == "torch._utils._rebuild_parameter" {
            let inner = *a
                .first()
                .with_context(|| format!("{name}: empty parameter"))?;
            return self.tensor(inner, name);
        }
        if func != "torch._utils._rebuild_tensor_v2" || a.len() < 4 {
            bail!("{name}: expected a tensor, found {}", p.kind(id));
        }
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
        let numel: usize = shape.iter().product();
        let mut data = Vec::with_capacity(numel);
        let mut index = vec![0usize; shape.len()];
        for _ in 0..numel {
            let at = offset + index.iter().zip(&stride).map(|(i, s)| i * s).sum::<usize>();
            data.push(*values.get(at).with_context(|| {
                format!(
                    "{name}: element {at} is outside its storage of {}",
                    values.len()
                )
            })?);
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
