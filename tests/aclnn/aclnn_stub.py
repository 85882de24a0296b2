"""The generated section of ``sigmoid_backward/aclnn/__init__.pyi``.

The aclnn module defines its constants at run time from the enums of
``aclnn/_constants.py``; its type stub declares them for type checkers, in
a section made by :func:`generate`.  After changing an enum, rewrite it:

    python tests/aclnn/aclnn_stub.py

``tests/aclnn/test_aclnn_stub.py`` fails when the section, the stub's ``__all__``
or any signature drifts from the module.
"""
import re
from pathlib import Path

from sigmoid_backward import aclnn

ROOT = Path(__file__).resolve().parents[2]
SOURCE_STUB = ROOT / "src" / "sigmoid_backward" / "aclnn" / "__init__.pyi"
BEGIN = "# --- generated from the enums of _constants.py: do not edit by hand ----------\n"
END = "# --- end of the generated section ---------------------------------------------\n"
ENUMS = (aclnn.aclnnStatus, aclnn.aclDataType, aclnn.aclFormat)


def generate():
    """The stub's generated section, from the enums as they are."""
    lines = []
    for enum in ENUMS:
        lines.append(f"class {enum.__name__}(enum.IntEnum):")
        lines += [f"    {name} = {int(member)}" for name, member in enum.__members__.items()]
        lines.append("")
    lines.append("# As in C, every constant is also a module-level name.")
    for enum in ENUMS:
        lines += [f"{name}: Final = {enum.__name__}.{name}" for name in enum.__members__]
    lines.append("")
    lines.append("__all__ += [")
    for enum in ENUMS:
        names = [f'"{name}",' for name in enum.__members__]
        line = "   "
        for name in names:
            if len(line) + 1 + len(name) > 88:
                lines.append(line)
                line = "   "
            line += " " + name
        lines.append(line)
    lines.append("]")
    return "\n".join(lines) + "\n"


def section(text):
    match = re.search(re.escape(BEGIN) + "(.*?)" + re.escape(END), text, re.S)
    assert match, "the stub has lost its generated-section markers"
    return match.group(1)


def rewrite():
    """Rewrite the generated section of the source stub from the enums."""
    text = SOURCE_STUB.read_text()
    new = re.sub(re.escape(BEGIN) + ".*?" + re.escape(END),
                 lambda _: BEGIN + generate() + END, text, flags=re.S)
    SOURCE_STUB.write_text(new)
    print(f"{SOURCE_STUB}: {'rewritten' if new != text else 'already up to date'}")


if __name__ == "__main__":
    rewrite()
