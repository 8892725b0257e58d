//! Issue 11: the PPO / bias / policy options resolve to the reference's values by default, the
//! reproduction configs set them explicitly, and bad values are rejected naming the key.

use memskill_controller::{BiasReeval, PlForm, PolicyInit};
use memskill_trainer::config::Config;
use std::path::Path;

#[test]
fn defaults_are_the_reference() {
    let c = Config::from_toml_str("", &[], "test").unwrap();
    assert_eq!(c.ppo.ppo_epochs, 4); // config.py / --ppo-epochs default
    assert_eq!(c.ppo.plackett_luce, PlForm::Clamped);
    assert_eq!(c.policy.init, PolicyInit::TorchDefault);
    assert_eq!(c.bias.bias_steps, 50); // config.py / --new-action-bias-steps default
    assert_eq!(c.bias.reeval, BiasReeval::Current);
    assert!((c.bias.delta_max() as f64 - (0.3f64 * 0.99 / (0.01 * 0.7)).ln()).abs() < 1e-5);
}

/// Issue 11, fix 3: the reference scripts train with --new-action-bias-steps 25 and
/// --ppo-epochs 2.
#[test]
fn reproduction_configs_use_the_script_values() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    for name in ["locomo", "longmemeval", "hotpotqa", "alfworld"] {
        let c = Config::load(&root.join(format!("configs/{name}.toml")), &[]).unwrap();
        assert_eq!(c.bias.bias_steps, 25, "{name}");
        assert_eq!(c.ppo.ppo_epochs, 2, "{name}");
        assert_eq!(c.ppo.plackett_luce, PlForm::Clamped, "{name}");
        assert_eq!(c.policy.init, PolicyInit::TorchDefault, "{name}");
        assert_eq!(c.bias.reeval, BiasReeval::Current, "{name}");
    }
}

#[test]
fn bad_values_name_the_key() {
    for (set, key) in [
        ("ppo.plackett_luce=\"softmax\"", "plackett_luce"),
        ("policy.init=\"xavier\"", "init"),
        ("bias.reeval=\"never\"", "reeval"),
        ("bias.p_min=1.5", "bias.p_min"),
        ("bias.p_ref=0.0", "bias.p_ref"),
        ("ppo.lr=-1.0", "ppo.lr"),
    ] {
        let e = Config::from_toml_str("", &[set.to_string()], "test").unwrap_err();
        let msg = format!("{e:#}");
        assert!(msg.contains(key), "{set}: {msg}");
    }
}
