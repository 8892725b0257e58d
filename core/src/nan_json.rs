//! JSON has no NaN: serde_json writes a NaN float as `null` and will not read `null` back
//! into a float. A number that could not be measured (a stage whose batches all failed, an
//! eval mode with no scorable case) is NaN in memory; these `#[serde(with = ...)]` /
//! `deserialize_with` helpers write it as `null` and read `null` back as NaN, so it survives
//! a round trip.

use serde::{Deserialize, Deserializer, Serializer};

/// An `f64` that may be NaN.
pub mod float {
    use super::*;
    pub fn serialize<S: Serializer>(x: &f64, s: S) -> Result<S::Ok, S::Error> {
        if x.is_nan() {
            s.serialize_none()
        } else {
            s.serialize_f64(*x)
        }
    }
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
        Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::NAN))
    }
}

/// An `f32` that may be NaN (read side; serde_json already writes NaN as `null`).
pub mod float32 {
    use super::*;
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<f32, D::Error> {
        Ok(Option::<f32>::deserialize(d)?.unwrap_or(f32::NAN))
    }
}

/// A `Vec<f64>` whose entries may be NaN.
pub mod floats {
    use super::*;
    pub fn serialize<S: Serializer>(xs: &[f64], s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(xs.iter().map(|x| (!x.is_nan()).then_some(*x)))
    }
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<f64>, D::Error> {
        let v = Vec::<Option<f64>>::deserialize(d)?;
        Ok(v.into_iter().map(|x| x.unwrap_or(f64::NAN)).collect())
    }
}
