//! The shape of a Qwen3(-Embedding) model and its reading from `config.json`, in both the
//! transformers 4 layout (top-level `rope_theta`, `rope_scaling`, `use_sliding_window`) and the
//! transformers 5 one (`rope_parameters` holding `rope_theta` and `rope_type`, `layer_types`
//! naming each layer's attention).

use memskill_core::EncoderError;
use serde_json::Value;

/// The shape of a Qwen3(-Embedding) model: the `config.json` fields an embedding needs.
#[derive(Debug, Clone, PartialEq, serde::Deserialize, serde::Serialize)]
pub struct Qwen3Shape {
    pub vocab_size: usize,
    pub hidden_size: usize,
    pub intermediate_size: usize,
    pub num_hidden_layers: usize,
    pub num_attention_heads: usize,
    pub num_key_value_heads: usize,
    pub head_dim: usize,
    pub max_position_embeddings: usize,
    pub rope_theta: f64,
    pub rms_norm_eps: f64,
}

impl Qwen3Shape {
    /// Reads the shape from `config.json` text (`what` names the file in errors). Refuses what
    /// the forward does not compute: sliding-window layers, rotary scaling other than the
    /// default, attention biases, an activation other than SiLU.
    pub fn from_config_json(text: &str, what: &str) -> Result<Self, EncoderError> {
        let v: Value =
            serde_json::from_str(text).map_err(|e| EncoderError(format!("{what}: {e}")))?;
        let bad = |msg: String| EncoderError(format!("{what}: {msg}"));
        let int = |key: &str| -> Result<Option<usize>, EncoderError> {
            match v.get(key) {
                None | Some(Value::Null) => Ok(None),
                Some(x) => x
                    .as_u64()
                    .map(|n| Some(n as usize))
                    .ok_or_else(|| bad(format!("field {key}: expected a non-negative integer"))),
            }
        };
        let need = |key: &str| int(key)?.ok_or_else(|| bad(format!("missing field `{key}`")));
        let (hidden, heads) = (need("hidden_size")?, need("num_attention_heads")?);
        let layers = need("num_hidden_layers")?;
        let shape = Self {
            vocab_size: need("vocab_size")?,
            hidden_size: hidden,
            intermediate_size: need("intermediate_size")?,
            num_hidden_layers: layers,
            num_attention_heads: heads,
            num_key_value_heads: int("num_key_value_heads")?.unwrap_or(heads),
            head_dim: int("head_dim")?.unwrap_or(hidden / heads.max(1)),
            max_position_embeddings: need("max_position_embeddings")?,
            rope_theta: rope_theta(&v).map_err(bad)?,
            rms_norm_eps: v
                .get("rms_norm_eps")
                .and_then(Value::as_f64)
                .unwrap_or(1e-6),
        };
        full_attention_only(&v, layers).map_err(bad)?;
        if v.get("attention_bias").and_then(Value::as_bool) == Some(true) {
            return Err(bad("attention_bias = true is not supported".into()));
        }
        match v.get("hidden_act").and_then(Value::as_str) {
            None | Some("silu") | Some("swish") => {}
            Some(other) => return Err(bad(format!("hidden_act {other:?} is not silu"))),
        }
        Ok(shape)
    }

    /// Every tensor of the model with its shape, in checkpoint naming (no `model.` prefix).
    pub fn tensors(&self) -> Vec<(String, Vec<usize>)> {
        let (h, q, kv, i) = (
            self.hidden_size,
            self.num_attention_heads * self.head_dim,
            self.num_key_value_heads * self.head_dim,
            self.intermediate_size,
        );
        let mut v = vec![("embed_tokens.weight".to_string(), vec![self.vocab_size, h])];
        for l in 0..self.num_hidden_layers {
            let p = format!("layers.{l}");
            v.push((format!("{p}.input_layernorm.weight"), vec![h]));
            v.push((format!("{p}.mlp.down_proj.weight"), vec![h, i]));
            v.push((format!("{p}.mlp.gate_proj.weight"), vec![i, h]));
            v.push((format!("{p}.mlp.up_proj.weight"), vec![i, h]));
            v.push((format!("{p}.post_attention_layernorm.weight"), vec![h]));
            v.push((format!("{p}.self_attn.k_norm.weight"), vec![self.head_dim]));
            v.push((format!("{p}.self_attn.k_proj.weight"), vec![kv, h]));
            v.push((format!("{p}.self_attn.o_proj.weight"), vec![h, q]));
            v.push((format!("{p}.self_attn.q_norm.weight"), vec![self.head_dim]));
            v.push((format!("{p}.self_attn.q_proj.weight"), vec![q, h]));
            v.push((format!("{p}.self_attn.v_proj.weight"), vec![kv, h]));
        }
        v.push(("norm.weight".to_string(), vec![h]));
        v
    }
}

/// `rope_theta` at the top level (transformers 4) or inside `rope_parameters` (transformers 5);
/// the rotary type (`rope_parameters.rope_type`, or `rope_scaling`'s) must be the default.
fn rope_theta(v: &Value) -> Result<f64, String> {
    let params = v.get("rope_parameters").filter(|p| !p.is_null());
    for (key, p) in [
        ("rope_parameters", params),
        ("rope_scaling", v.get("rope_scaling")),
    ] {
        let Some(p) = p.filter(|p| !p.is_null()) else {
            continue;
        };
        let kind = p
            .get("rope_type")
            .or_else(|| p.get("type"))
            .and_then(Value::as_str);
        if !matches!(kind, None | Some("default")) {
            return Err(format!(
                "{key}: rotary type {:?} is not supported (only \"default\")",
                kind.unwrap_or_default()
            ));
        }
    }
    let theta = params
        .and_then(|p| p.get("rope_theta"))
        .or_else(|| v.get("rope_theta"));
    match theta {
        Some(t) => t
            .as_f64()
            .filter(|t| *t > 0.0)
            .ok_or_else(|| format!("rope_theta {t} is not a positive number")),
        None => Err(
            "missing field `rope_theta` (looked at the top level and in rope_parameters)".into(),
        ),
    }
}

/// Every layer is full (causal) attention: `layer_types` (transformers 5) lists only
/// `full_attention`, one per layer; without it, `use_sliding_window` is not true.
fn full_attention_only(v: &Value, layers: usize) -> Result<(), String> {
    match v.get("layer_types").filter(|t| !t.is_null()) {
        Some(types) => {
            let types = types
                .as_array()
                .ok_or_else(|| "layer_types: expected a list".to_string())?;
            if types.len() != layers {
                return Err(format!(
                    "layer_types lists {} layers, num_hidden_layers is {layers}",
                    types.len()
                ));
            }
            match types
                .iter()
                .position(|t| t.as_str() != Some("full_attention"))
            {
                Some(i) => Err(format!(
                    "layer_types[{i}] = {}: only full_attention layers are supported",
                    types[i]
                )),
                None => Ok(()),
            }
        }
        None if v.get("use_sliding_window").and_then(Value::as_bool) == Some(true) => {
            Err("use_sliding_window = true is not supported".into())
        }
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v4() -> Value {
        serde_json::json!({
            "model_type": "qwen3", "vocab_size": 100, "hidden_size": 16, "intermediate_size": 32,
            "num_hidden_layers": 2, "num_attention_heads": 2, "num_key_value_heads": 1,
            "head_dim": 8, "max_position_embeddings": 64, "rope_theta": 1000000.0,
            "rope_scaling": null, "rms_norm_eps": 1e-6, "use_sliding_window": false,
            "sliding_window": null, "max_window_layers": 2, "attention_bias": false,
            "hidden_act": "silu", "tie_word_embeddings": true
        })
    }

    /// What transformers 5 writes for the same model.
    fn v5() -> Value {
        let mut v = v4();
        let o = v.as_object_mut().unwrap();
        o.remove("rope_theta");
        o.remove("rope_scaling");
        o.insert(
            "rope_parameters".into(),
            serde_json::json!({"rope_theta": 1000000.0, "rope_type": "default"}),
        );
        o.insert(
            "layer_types".into(),
            serde_json::json!(["full_attention", "full_attention"]),
        );
        v
    }

    fn read(v: &Value) -> Result<Qwen3Shape, EncoderError> {
        Qwen3Shape::from_config_json(&v.to_string(), "config.json")
    }

    #[test]
    fn both_config_layouts_give_the_same_shape() {
        let a = read(&v4()).unwrap();
        assert_eq!(a.rope_theta, 1e6);
        assert_eq!((a.num_key_value_heads, a.head_dim), (1, 8));
        assert_eq!(read(&v5()).unwrap(), a);
    }

    #[test]
    fn unsupported_or_malformed_configs_are_named() {
        let err = |v: Value| read(&v).unwrap_err().0;
        let mut v = v5();
        v["layer_types"][1] = "sliding_attention".into();
        assert!(err(v).contains("layer_types[1]"));
        let mut v = v5();
        v["layer_types"] = serde_json::json!(["full_attention"]);
        assert!(err(v).contains("lists 1 layers"));
        let mut v = v5();
        v["rope_parameters"]["rope_type"] = "yarn".into();
        assert!(err(v).contains("\"yarn\""));
        let mut v = v5();
        v["rope_parameters"]
            .as_object_mut()
            .unwrap()
            .remove("rope_theta");
        let e = err(v);
        assert!(e.contains("config.json") && e.contains("rope_theta"), "{e}");
        let mut v = v4();
        v["use_sliding_window"] = true.into();
        assert!(err(v).contains("use_sliding_window"));
        let mut v = v4();
        v["hidden_size"] = "wide".into();
        assert!(err(v).contains("field hidden_size"));
        assert!(read(&serde_json::json!({}))
            .unwrap_err()
            .0
            .contains("missing field"));
    }
}
