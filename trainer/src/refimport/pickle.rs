//! A small, safe reader of Python pickles (protocols 2 to 5), enough for the `data.pkl` of a
//! `torch.save` checkpoint: it builds a generic value graph and never runs anything. A class
//! reference (`GLOBAL` / `STACK_GLOBAL`) becomes an opaque [`Node::Global`]; calling it
//! (`REDUCE`, `NEWOBJ`) and setting its state (`BUILD`) become an opaque [`Node::Object`]
//! holding the callable, its arguments and its state. Only `collections.OrderedDict()` is
//! understood, as a dict (state dicts are ordered dicts).
//!
//! Values live in an arena and the memo holds arena indices, so a value referenced many times
//! is stored once (no copy blow-up) and a container filled after it was memoised is seen
//! filled through every reference, as in Python. Memory is linear in the input: every length
//! is checked against the bytes left before anything is allocated. An opcode outside the
//! supported set is an error naming it and its byte offset.

use std::collections::HashMap;

/// An index into [`Pickle::nodes`].
pub type Id = usize;

/// One value of the graph.
#[derive(Debug, Clone, PartialEq)]
pub enum Node {
    None,
    Bool(bool),
    Int(i64),
    /// An integer wider than 64 bits (its byte length): kept opaque.
    WideInt(usize),
    Float(f64),
    Str(String),
    Bytes(Vec<u8>),
    List(Vec<Id>),
    Tuple(Vec<Id>),
    /// Also sets (their items, in order).
    Set(Vec<Id>),
    Dict(Vec<(Id, Id)>),
    /// A class or function reference, never resolved.
    Global {
        module: String,
        name: String,
    },
    /// `callable(*args)` with the state a `BUILD` gave it, never run.
    Object {
        callable: Id,
        args: Id,
        state: Option<Id>,
    },
    /// A persistent id (torch: a tensor storage reference).
    PersId(Id),
}

/// A parse error: what went wrong and at which byte offset of the pickle.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("pickle byte {offset}: {msg}")]
pub struct PickleError {
    pub offset: usize,
    pub msg: String,
}

/// A parsed pickle: the value graph and its root.
#[derive(Debug, Clone)]
pub struct Pickle {
    pub nodes: Vec<Node>,
    pub root: Id,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Item {
    Mark,
    Val(Id),
}

struct Parser<'a> {
    b: &'a [u8],
    pos: usize,
    /// Offset of the opcode being run (for errors).
    at: usize,
    nodes: Vec<Node>,
    stack: Vec<Item>,
    memo: HashMap<u32, Id>,
}

/// The name pickletools gives an opcode byte (for error messages).
fn opcode_name(op: u8) -> String {
    let n = match op {
        b'I' => "INT",
        b'L' => "LONG",
        b'F' => "FLOAT",
        b'S' => "STRING",
        b'V' => "UNICODE",
        b'P' => "PERSID",
        b'g' => "GET",
        b'p' => "PUT",
        b'i' => "INST",
        b'o' => "OBJ",
        0x82..=0x84 => "EXT1/EXT2/EXT4",
        0x96 => "BYTEARRAY8",
        0x97 => "NEXT_BUFFER",
        0x98 => "READONLY_BUFFER",
        _ => "",
    };
    if n.is_empty() {
        format!("unknown opcode 0x{op:02x}")
    } else {
        format!("unsupported opcode {n} (0x{op:02x})")
    }
}

impl<'a> Parser<'a> {
    fn err<T>(&self, msg: impl Into<String>) -> Result<T, PickleError> {
        Err(PickleError {
            offset: self.at,
            msg: msg.into(),
        })
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], PickleError> {
        if n > self.b.len() - self.pos {
            return self.err(format!(
                "needs {n} more bytes, {} left (truncated pickle)",
                self.b.len() - self.pos
            ));
        }
        let s = &self.b[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    fn u8(&mut self) -> Result<u8, PickleError> {
        Ok(self.take(1)?[0])
    }

    fn u32(&mut self) -> Result<u32, PickleError> {
        let s = self.take(4)?;
        Ok(u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
    }

    fn u64(&mut self) -> Result<u64, PickleError> {
        let s = self.take(8)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(s);
        Ok(u64::from_le_bytes(a))
    }

    fn len_of(&mut self, width: u8) -> Result<usize, PickleError> {
        let n = match width {
            1 => self.u8()? as u64,
            4 => self.u32()? as u64,
            _ => self.u64()?,
        };
        usize::try_from(n).or_else(|_| self.err("length does not fit in memory"))
    }

    fn line(&mut self) -> Result<String, PickleError> {
        let rest = &self.b[self.pos..];
        let Some(end) = rest.iter().position(|&c| c == b'\n') else {
            return self.err("GLOBAL name without a newline");
        };
        let s = std::str::from_utf8(&rest[..end])
            .or_else(|_| self.err("GLOBAL name is not UTF-8"))?
            .to_string();
        self.pos += end + 1;
        Ok(s)
    }

    fn push(&mut self, n: Node) {
        self.nodes.push(n);
        self.stack.push(Item::Val(self.nodes.len() - 1));
    }

    fn pop(&mut self) -> Result<Id, PickleError> {
        match self.stack.pop() {
            Some(Item::Val(id)) => Ok(id),
            Some(Item::Mark) => self.err("found a MARK where a value was expected"),
            None => self.err("stack underflow"),
        }
    }

    fn top(&self) -> Result<Id, PickleError> {
        match self.stack.last() {
            Some(Item::Val(id)) => Ok(*id),
            _ => self.err("no value on the stack"),
        }
    }

    fn pop_mark(&mut self) -> Result<Vec<Id>, PickleError> {
        let Some(m) = self.stack.iter().rposition(|i| *i == Item::Mark) else {
            return self.err("no MARK on the stack");
        };
        let items = self.stack.split_off(m + 1);
        self.stack.pop();
        Ok(items
            .into_iter()
            .filter_map(|i| match i {
                Item::Val(id) => Some(id),
                Item::Mark => None,
            })
            .collect())
    }

    fn str_of(&mut self, width: u8) -> Result<(), PickleError> {
        let n = self.len_of(width)?;
        let s = std::str::from_utf8(self.take(n)?)
            .or_else(|_| self.err("string is not UTF-8"))?
            .to_string();
        self.push(Node::Str(s));
        Ok(())
    }

    fn bytes_of(&mut self, width: u8) -> Result<(), PickleError> {
        let n = self.len_of(width)?;
        let s = self.take(n)?.to_vec();
        self.push(Node::Bytes(s));
        Ok(())
    }

    fn long(&mut self, width: u8) -> Result<(), PickleError> {
        let n = if width == 1 {
            self.u8()? as usize
        } else {
            let n = self.u32()? as i32;
            usize::try_from(n).or_else(|_| self.err("negative LONG4 length"))?
        };
        let s = self.take(n)?;
        if n > 8 {
            self.push(Node::WideInt(n));
            return Ok(());
        }
        let mut v: i64 = 0;
        for (i, &c) in s.iter().enumerate() {
            v |= (c as i64) << (8 * i);
        }
        if n > 0 && n < 8 && s[n - 1] & 0x80 != 0 {
            v -= 1i64 << (8 * n);
        }
        self.push(Node::Int(v));
        Ok(())
    }

    fn add_items(&mut self, id: Id, items: Vec<Id>) -> Result<(), PickleError> {
        match &mut self.nodes[id] {
            Node::List(v) | Node::Set(v) => {
                v.extend(items);
                Ok(())
            }
            other => {
                let what = format!("APPEND(S)/ADDITEMS on a non-list ({other:?})");
                self.err(what)
            }
        }
    }

    fn set_items(&mut self, id: Id, kv: Vec<Id>) -> Result<(), PickleError> {
        if !kv.len().is_multiple_of(2) {
            return self.err("SETITEMS with an odd number of values");
        }
        match &mut self.nodes[id] {
            Node::Dict(d) => {
                d.extend(kv.chunks_exact(2).map(|p| (p[0], p[1])));
                Ok(())
            }
            _ => self.err("SETITEM(S) on a non-dict"),
        }
    }

    /// `callable(*args)`: `collections.OrderedDict()` is a dict; anything else stays opaque.
    fn call(&mut self, callable: Id, args: Id) {
        let ordered = matches!(&self.nodes[callable],
            Node::Global { module, name } if module == "collections" && name == "OrderedDict")
            && matches!(&self.nodes[args], Node::Tuple(a) if a.is_empty());
        if ordered {
            self.push(Node::Dict(Vec::new()));
        } else {
            self.push(Node::Object {
                callable,
                args,
                state: None,
            });
        }
    }

    /// `BUILD`: the state of an opaque object; a dict subclass's attributes (an ordered
    /// dict's `_metadata`) are dropped.
    fn build(&mut self) -> Result<(), PickleError> {
        let st = self.pop()?;
        let obj = self.top()?;
        match &mut self.nodes[obj] {
            Node::Object { state, .. } => {
                *state = Some(st);
                Ok(())
            }
            Node::Dict(_) => Ok(()),
            _ => self.err("BUILD on a value that is not an object"),
        }
    }

    fn memo_put(&mut self, key: u32) -> Result<(), PickleError> {
        let id = self.top()?;
        self.memo.insert(key, id);
        Ok(())
    }

    fn memo_get(&mut self, key: u32) -> Result<(), PickleError> {
        match self.memo.get(&key) {
            Some(&id) => {
                self.stack.push(Item::Val(id));
                Ok(())
            }
            None => self.err(format!("memo key {key} was never stored")),
        }
    }

    /// Runs one opcode; true at `STOP`.
    fn step(&mut self) -> Result<bool, PickleError> {
        self.at = self.pos;
        let op = self.u8()?;
        match op {
            0x80 => {
                let v = self.u8()?;
                if !(2..=5).contains(&v) {
                    return self.err(format!("pickle protocol {v} is not supported (2 to 5)"));
                }
            }
            0x95 => {
                self.u64()?;
            }
            b'.' => return Ok(true),
            b'(' => self.stack.push(Item::Mark),
            b'0' => {
                self.pop()?;
            }
            b'1' => {
                self.pop_mark()?;
            }
            b'}' => self.push(Node::Dict(Vec::new())),
            b']' => self.push(Node::List(Vec::new())),
            b')' => self.push(Node::Tuple(Vec::new())),
            0x8f => self.push(Node::Set(Vec::new())),
            b'd' => {
                let kv = self.pop_mark()?;
                self.push(Node::Dict(Vec::new()));
                let id = self.top()?;
                self.set_items(id, kv)?;
            }
            b'l' => {
                let v = self.pop_mark()?;
                self.push(Node::List(v));
            }
            b't' => {
                let v = self.pop_mark()?;
                self.push(Node::Tuple(v));
            }
            0x91 => {
                let v = self.pop_mark()?;
                self.push(Node::Set(v));
            }
            0x85..=0x87 => {
                let n = (op - 0x84) as usize;
                let mut v = Vec::with_capacity(n);
                for _ in 0..n {
                    v.push(self.pop()?);
                }
                v.reverse();
                self.push(Node::Tuple(v));
            }
            b's' => {
                let v = self.pop()?;
                let k = self.pop()?;
                let d = self.top()?;
                self.set_items(d, vec![k, v])?;
            }
            b'u' => {
                let kv = self.pop_mark()?;
                let d = self.top()?;
                self.set_items(d, kv)?;
            }
            b'a' => {
                let v = self.pop()?;
                let l = self.top()?;
                self.add_items(l, vec![v])?;
            }
            b'e' | 0x90 => {
                let v = self.pop_mark()?;
                let l = self.top()?;
                self.add_items(l, v)?;
            }
            _ => return self.step_scalar(op),
        }
        Ok(false)
    }

    /// The opcodes that push scalars, names, objects and memo entries.
    fn step_scalar(&mut self, op: u8) -> Result<bool, PickleError> {
        match op {
            b'X' => self.str_of(4)?,
            0x8c => self.str_of(1)?,
            0x8d => self.str_of(8)?,
            b'C' | b'U' => self.bytes_of(1)?,
            b'B' => self.bytes_of(4)?,
            b'T' => self.bytes_of(4)?,
            0x8e => self.bytes_of(8)?,
            b'J' => {
                let v = self.u32()? as i32;
                self.push(Node::Int(v as i64));
            }
            b'K' => {
                let v = self.u8()?;
                self.push(Node::Int(v as i64));
            }
            b'M' => {
                let s = self.take(2)?;
                self.push(Node::Int(u16::from_le_bytes([s[0], s[1]]) as i64));
            }
            0x8a => self.long(1)?,
            0x8b => self.long(4)?,
            b'G' => {
                let s = self.take(8)?;
                let mut a = [0u8; 8];
                a.copy_from_slice(s);
                self.push(Node::Float(f64::from_be_bytes(a)));
            }
            b'N' => self.push(Node::None),
            0x88 => self.push(Node::Bool(true)),
            0x89 => self.push(Node::Bool(false)),
            b'q' => {
                let k = self.u8()? as u32;
                self.memo_put(k)?;
            }
            b'r' => {
                let k = self.u32()?;
                self.memo_put(k)?;
            }
            0x94 => {
                let k = self.memo.len() as u32;
                self.memo_put(k)?;
            }
            b'h' => {
                let k = self.u8()? as u32;
                self.memo_get(k)?;
            }
            b'j' => {
                let k = self.u32()?;
                self.memo_get(k)?;
            }
            _ => return self.step_object(op),
        }
        Ok(false)
    }

    fn step_object(&mut self, op: u8) -> Result<bool, PickleError> {
        match op {
            b'c' => {
                let module = self.line()?;
                let name = self.line()?;
                self.push(Node::Global { module, name });
            }
            0x93 => {
                let name = self.pop()?;
                let module = self.pop()?;
                match (&self.nodes[module], &self.nodes[name]) {
                    (Node::Str(m), Node::Str(n)) => {
                        let (module, name) = (m.clone(), n.clone());
                        self.push(Node::Global { module, name });
                    }
                    _ => return self.err("STACK_GLOBAL needs two strings"),
                }
            }
            b'R' | 0x81 => {
                let args = self.pop()?;
                let callable = self.pop()?;
                self.call(callable, args);
            }
            0x92 => {
                let _kwargs = self.pop()?;
                let args = self.pop()?;
                let callable = self.pop()?;
                self.call(callable, args);
            }
            b'b' => self.build()?,
            b'Q' => {
                let id = self.pop()?;
                self.push(Node::PersId(id));
            }
            _ => return self.err(opcode_name(op)),
        }
        Ok(false)
    }
}

impl Pickle {
    /// Parses a whole pickle (up to its `STOP`).
    pub fn parse(bytes: &[u8]) -> Result<Pickle, PickleError> {
        let mut p = Parser {
            b: bytes,
            pos: 0,
            at: 0,
            nodes: Vec::new(),
            stack: Vec::new(),
            memo: HashMap::new(),
        };
        while !p.step()? {}
        let root = p.pop()?;
        Ok(Pickle {
            nodes: p.nodes,
            root,
        })
    }

    pub fn node(&self, id: Id) -> &Node {
        &self.nodes[id]
    }

    /// The value of `key` in the dict `id` (string keys; the last one wins, as in Python).
    pub fn get(&self, id: Id, key: &str) -> Option<Id> {
        match self.node(id) {
            Node::Dict(kv) => kv
                .iter()
                .rev()
                .find(|(k, _)| matches!(self.node(*k), Node::Str(s) if s == key))
                .map(|(_, v)| *v),
            _ => None,
        }
    }

    /// The (string key, value) pairs of the dict `id`, in order; None when it is no dict.
    pub fn entries(&self, id: Id) -> Option<Vec<(&str, Id)>> {
        match self.node(id) {
            Node::Dict(kv) => Some(
                kv.iter()
                    .filter_map(|(k, v)| match self.node(*k) {
                        Node::Str(s) => Some((s.as_str(), *v)),
                        _ => None,
                    })
                    .collect(),
            ),
            _ => None,
        }
    }

    pub fn str(&self, id: Id) -> Option<&str> {
        match self.node(id) {
            Node::Str(s) => Some(s),
            _ => None,
        }
    }

    /// An integer (also a numpy `int64` / `int32` scalar).
    pub fn int(&self, id: Id) -> Option<i64> {
        match self.node(id) {
            Node::Int(v) => Some(*v),
            Node::Bool(b) => Some(*b as i64),
            _ => match self.numpy_scalar(id)? {
                (c, b) if c == "i8" && b.len() == 8 => Some(i64::from_le_bytes(b.try_into().ok()?)),
                (c, b) if c == "i4" && b.len() == 4 => {
                    Some(i32::from_le_bytes(b.try_into().ok()?) as i64)
                }
                _ => None,
            },
        }
    }

    /// A number (also a numpy `float64` / `float32` scalar or an integer).
    pub fn float(&self, id: Id) -> Option<f64> {
        match self.node(id) {
            Node::Float(v) => Some(*v),
            Node::Int(v) => Some(*v as f64),
            _ => match self.numpy_scalar(id)? {
                (c, b) if c == "f8" && b.len() == 8 => Some(f64::from_le_bytes(b.try_into().ok()?)),
                (c, b) if c == "f4" && b.len() == 4 => {
                    Some(f32::from_le_bytes(b.try_into().ok()?) as f64)
                }
                _ => self.int(id).map(|v| v as f64),
            },
        }
    }

    /// Raw bytes: a bytes value, or protocol 2's `_codecs.encode(text, "latin1")`.
    pub fn bytes(&self, id: Id) -> Option<Vec<u8>> {
        match self.node(id) {
            Node::Bytes(b) => Some(b.clone()),
            Node::Object { callable, args, .. }
                if self.global(*callable).as_deref() == Some("_codecs.encode") =>
            {
                let text = self.str(*self.items(*args)?.first()?)?;
                text.chars().map(|c| u8::try_from(c as u32).ok()).collect()
            }
            _ => None,
        }
    }

    /// A numpy scalar, `numpy.core.multiarray.scalar(dtype(code), raw)`: its dtype code and
    /// raw (little-endian, as numpy writes on the machines that run the reference) bytes.
    fn numpy_scalar(&self, id: Id) -> Option<(String, Vec<u8>)> {
        let Node::Object { callable, args, .. } = self.node(id) else {
            return None;
        };
        let f = self.global(*callable)?;
        if f != "numpy.core.multiarray.scalar" && f != "numpy._core.multiarray.scalar" {
            return None;
        }
        let a = self.items(*args)?;
        let Node::Object { args: dtype, .. } = self.node(*a.first()?) else {
            return None;
        };
        let code = self.str(*self.items(*dtype)?.first()?)?.to_string();
        Some((code, self.bytes(*a.get(1)?)?))
    }

    pub fn bool(&self, id: Id) -> Option<bool> {
        match self.node(id) {
            Node::Bool(b) => Some(*b),
            Node::Int(v) => Some(*v != 0),
            _ => None,
        }
    }

    /// The items of a list, tuple or set.
    pub fn items(&self, id: Id) -> Option<&[Id]> {
        match self.node(id) {
            Node::List(v) | Node::Tuple(v) | Node::Set(v) => Some(v),
            _ => None,
        }
    }

    /// `module.name` of a global.
    pub fn global(&self, id: Id) -> Option<String> {
        match self.node(id) {
            Node::Global { module, name } => Some(format!("{module}.{name}")),
            _ => None,
        }
    }

    /// A short description of a value's type (for errors).
    pub fn kind(&self, id: Id) -> String {
        match self.node(id) {
            Node::None => "None".into(),
            Node::Bool(_) => "bool".into(),
            Node::Int(_) | Node::WideInt(_) => "int".into(),
            Node::Float(_) => "float".into(),
            Node::Str(_) => "str".into(),
            Node::Bytes(_) => "bytes".into(),
            Node::List(_) => "list".into(),
            Node::Tuple(_) => "tuple".into(),
            Node::Set(_) => "set".into(),
            Node::Dict(_) => "dict".into(),
            Node::Global { .. } => "global".into(),
            Node::PersId(_) => "persistent id".into(),
            Node::Object { callable, .. } => format!(
                "object {}",
                self.global(*callable).unwrap_or_else(|| "?".into())
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Protocol 2 bytes of `{'a': [1, -2, 300, 2**40, 1.5, None, True], 'b': 'x'}` with a shared
    /// list referenced through the memo, an OrderedDict and an opaque object, written by hand
    /// following pickletools' opcode table.
    fn sample() -> Vec<u8> {
        let mut b = vec![0x80, 2, b'}', b'q', 0, b'(']; // PROTO 2, EMPTY_DICT, BINPUT 0, MARK
        b.extend([b'X', 1, 0, 0, 0, b'a', b']', b'q', 1, b'(']);
        b.extend([b'K', 1]); // 1
        b.extend([b'J']);
        b.extend((-2i32).to_le_bytes());
        b.extend([b'M', 0x2c, 0x01]); // 300
        b.extend([0x8a, 6, 0, 0, 0, 0, 0, 1]); // 2**40
        b.push(b'G');
        b.extend(1.5f64.to_be_bytes());
        b.extend([b'N', 0x88, b'e']); // None, True, APPENDS
        b.extend([0x8c, 1, b'b', 0x8c, 1, b'x']); // 'b': 'x'
        b.extend([0x8c, 1, b'c', b'h', 1]); // 'c': the same list (BINGET 1)
        b.extend([0x8c, 1, b'o']); // 'o': OrderedDict() with one item
        b.extend(b"ccollections\nOrderedDict\n)R");
        b.extend([0x8c, 1, b'k', b'K', 7, b's']);
        b.extend([0x8c, 1, b'z']); // 'z': opaque os.system('x') object, never run
        b.extend(b"cos\nsystem\n");
        b.extend([0x8c, 1, b'x', 0x85, b'R', b'u', b'.']);
        b
    }

    #[test]
    fn reads_scalars_containers_memo_and_opaque_objects() {
        let p = Pickle::parse(&sample()).unwrap();
        let a = p.get(p.root, "a").unwrap();
        let items: Vec<&Node> = p.items(a).unwrap().iter().map(|&i| p.node(i)).collect();
        assert_eq!(
            items,
            vec![
                &Node::Int(1),
                &Node::Int(-2),
                &Node::Int(300),
                &Node::Int(1 << 40),
                &Node::Float(1.5),
                &Node::None,
                &Node::Bool(true)
            ]
        );
        assert_eq!(p.str(p.get(p.root, "b").unwrap()), Some("x"));
        // the memoised list is the same node, filled
        assert_eq!(p.get(p.root, "c"), Some(a));
        let o = p.get(p.root, "o").unwrap();
        assert_eq!(p.int(p.get(o, "k").unwrap()), Some(7));
        let z = p.get(p.root, "z").unwrap();
        assert_eq!(p.kind(z), "object os.system");
    }

    /// Corrupted pickles give errors or values, never a panic.
    #[test]
    fn mutated_pickles_never_panic() {
        use rand::{Rng, SeedableRng};
        let base = sample();
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
        for _ in 0..3000 {
            let mut b = base.clone();
            for _ in 0..rng.random_range(1..4) {
                let i = rng.random_range(0..b.len());
                b[i] = rng.random();
            }
            let cut = rng.random_range(0..=b.len());
            let _ = Pickle::parse(&b[..cut]);
            let _ = Pickle::parse(&b);
        }
    }

    /// numpy scalars as the reference's checkpoints hold them (rewards from `np.mean`):
    /// `pickle.dumps([np.float64(0.25), np.float32(1.5), np.int64(-3)], protocol=2)`.
    #[test]
    fn numpy_scalars_read_as_numbers() {
        let hex_text = "80025d710028636e756d70792e5f636f72652e6d756c746961727261790a7363616c61720a7101636e756d70790a64747970650a71025802000000663871038988877104527105284b0358010000003c71064e4e4e4affffffff4affffffff4b0074710762635f636f646563730a656e636f64650a71085809000000000000000000c3903f710958060000006c6174696e31710a86710b52710c86710d52710e6801680258020000006634710f8988877110527111284b0368064e4e4e4affffffff4affffffff4b0074711262680858050000000000c3803f7113680a86711452711586711652711768016802580200000069387118898887711952711a284b0368064e4e4e4affffffff4affffffff4b0074711b6268085810000000c3bdc3bfc3bfc3bfc3bfc3bfc3bfc3bf711c680a86711d52711e86711f527120652e";
        let p = Pickle::parse(&hex::decode(hex_text).unwrap()).unwrap();
        let v: Vec<Option<f64>> = p
            .items(p.root)
            .unwrap()
            .iter()
            .map(|&i| p.float(i))
            .collect();
        assert_eq!(v, vec![Some(0.25), Some(1.5), Some(-3.0)]);
        assert_eq!(p.int(p.items(p.root).unwrap()[2]), Some(-3));
    }

    #[test]
    fn negative_long1_and_truncation_and_unknown_opcodes_are_reported() {
        let p = Pickle::parse(&[0x80, 2, 0x8a, 1, 0xff, b'.']).unwrap();
        assert_eq!(p.int(p.root), Some(-1));
        let e = Pickle::parse(&[0x80, 2, b'X', 0xff, 0xff, 0xff, 0x7f, b'a']).unwrap_err();
        assert!(e.msg.contains("truncated") && e.offset == 2, "{e}");
        let e = Pickle::parse(&[0x80, 2, b'N', b'i', b'.']).unwrap_err();
        assert_eq!(e.offset, 3);
        assert!(e.to_string().contains("INST"), "{e}");
        let e = Pickle::parse(&[0x80, 2, 0xfe]).unwrap_err();
        assert!(e.to_string().contains("0xfe") && e.offset == 2, "{e}");
        assert!(Pickle::parse(&[0x80, 2, b'h', 3, b'.']).is_err());
        assert!(Pickle::parse(&[0x80, 2]).is_err());
        assert!(Pickle::parse(&[0x80, 2, b'K', 1, b'a', b'.']).is_err());
    }
}
