"""SkillBank: load, save, export, import, validate, diff."""

import json

import pytest

import memskill
from memskill import SkillBank


def test_seed_save_load_roundtrip(tmp_path):
    bank = SkillBank.seed()
    assert len(bank) == 4 and "insert" in bank
    assert sorted(bank.names) == ["delete", "insert", "noop", "update"]
    p = tmp_path / "bank.json"
    bank.save(p)
    doc = json.loads(p.read_text())
    assert doc == bank.to_dict()
    again = SkillBank.load(p)
    assert again.content_hash == bank.content_hash
    assert bank.diff(again) == ""
    assert "4 skills" in repr(again) and "insert" in again.table()


def test_save_never_overwrites_without_force(tmp_path):
    p = tmp_path / "bank.json"
    p.write_text("keep me")
    with pytest.raises(memskill.MemskillError):
        SkillBank.seed().save(p)
    assert p.read_text() == "keep me"
    SkillBank.seed().save(p, force=True)
    assert SkillBank.load(p).names == SkillBank.seed().names


def test_export_validate_import_diff(tmp_path):
    bank = SkillBank.seed()
    out = tmp_path / "skills"
    bank.export(out)
    assert (out / "insert" / "SKILL.md").is_file()
    assert sorted(SkillBank.validate(out)) == sorted(bank.names)
    imported = SkillBank.import_dir(out)
    assert imported.names == bank.names
    # an edited export: diff names the changed skill
    md = out / "noop" / "SKILL.md"
    md.write_text(md.read_text() + "\nAlso keep the memory bank unchanged when unsure.\n")
    # the export's manifest names the edit; accept_edits takes it as it is
    with pytest.raises(memskill.MemskillError, match="does not match its hash"):
        SkillBank.import_dir(out)
    changed = SkillBank.import_dir(out, accept_edits=True)
    d = bank.diff(changed)
    assert "noop" in d and "insert" not in d
    # a directory export loads like a bank.json
    assert SkillBank.load(out).names == bank.names


def test_bank_errors(tmp_path):
    bad = tmp_path / "bank.json"
    bad.write_text("{not json")
    with pytest.raises(memskill.MemskillError, match="bank.json"):
        SkillBank.load(bad)
    with pytest.raises(memskill.MemskillError):
        SkillBank.validate(tmp_path / "nope")
