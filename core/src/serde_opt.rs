//! `deserialize_with` helper for optional config values written as text, where an empty
//! string means "absent" (a TOML file or a `--set key=""` cannot write a missing value).

/// `Option<T>` from a string: `""` (or a missing key) is `None`, anything else is parsed.
pub mod empty_is_none {
    use serde::{Deserialize, Deserializer};

    pub fn deserialize<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
    where
        D: Deserializer<'de>,
        T: std::str::FromStr,
        T::Err: std::fmt::Display,
    {
        match Option::<String>::deserialize(d)?.filter(|s| !s.is_empty()) {
            Some(s) => s.parse().map(Some).map_err(serde::de::Error::custom),
            None => Ok(None),
        }
    }
}
