"""Shared helper for the designer generators: import the reference's designer module from a
checkout given on the command line, with its unused heavy imports stubbed."""
import os
import sys
import types


def load_reference_designer(ref):
    ref = os.path.abspath(ref)
    if not os.path.isfile(os.path.join(ref, "src", "designer.py")):
        sys.exit(f"error: {ref} has no src/designer.py (not a MemSkill checkout?)")
    sys.path.insert(0, ref)
    # Imported at package import time by the reference, never used by the designer code.
    for name in ["wandb"]:
        sys.modules.setdefault(name, types.ModuleType(name))
    import src.designer as designer  # noqa: E402

    return designer
