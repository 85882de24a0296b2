"""The documentation stands alone and stays true: its links resolve inside
the repository (the README's, also the index page's, by URL), its value
tables are the module's, and its example runs."""
import re
from pathlib import Path

import pytest

from sigmoid_backward import aclnn
from sigmoid_backward.aclnn import _soc

ROOT = Path(__file__).resolve().parents[2]
DOCS = sorted((ROOT / "docs").glob("*.md"))
PAGES = [ROOT / "README.md", ROOT / "CHANGELOG.md", *DOCS]
SEMANTICS = ROOT / "docs" / "semantics.md"
# A file (blob) or folder (tree) of this repository by URL: pyproject.toml's
# project URL, then its path on main.
REPOSITORY = re.compile(r"https://github\.com/sigmoid-backward/sigmoid-backward/(?:blob|tree)/main/"
                        r"(.*)")


def _slugs(path):
    """GitHub's anchors for the headings of a Markdown file."""
    slugs, seen, fenced = set(), {}, False
    for line in path.read_text().splitlines():
        if line.startswith("```"):
            fenced = not fenced
        if fenced or not line.startswith("#"):
            continue
        text = line.lstrip("#").strip().replace("`", "")
        slug = re.sub(r"[^\w\- ]", "", text.lower()).replace(" ", "-")
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        slugs.add(slug if n == 0 else f"{slug}-{n}")
    return slugs


def _links(path):
    """Inline links' targets, and reference-style links' definitions."""
    text = re.sub(r"```.*?```", "", path.read_text(), flags=re.S)
    return (re.findall(r"\]\(([^)\s]+)\)", text)
            + re.findall(r"^\[[^\]]+\]:\s*(\S+)", text, re.M))


def test_readme_links_are_absolute():
    """The README is also the index page's description, where a relative
    link leads nowhere: it links to the repository's files by URL (the
    project URL of pyproject.toml), which the test below maps back."""
    links = _links(ROOT / "README.md")
    assert links
    for link in links:
        assert link.startswith(("https://", "http://")), f"README.md: {link} is relative"
    assert any(REPOSITORY.fullmatch(link) for link in links)
    text = re.sub(r"```.*?```", "", (ROOT / "README.md").read_text(), flags=re.S)
    defined = set(re.findall(r"^\[([^\]]+)\]:", text, re.M))
    used = set(re.findall(r"\]\[([^\]]+)\]", text))
    assert used <= defined, f"README.md: undefined link labels {used - defined}"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_links_resolve_inside_the_repository(page):
    for link in _links(page):
        if in_repository := REPOSITORY.fullmatch(link):
            target, _, anchor = in_repository.group(1).partition("#")
            path = (ROOT / target).resolve()
        elif re.match(r"[a-z]+://", link):
            continue
        else:
            target, _, anchor = link.partition("#")
            path = (page.parent / target).resolve() if target else page
        assert path.is_relative_to(ROOT), f"{page.name}: {link} leaves the repository"
        assert path.exists(), f"{page.name}: {link} does not exist"
        if anchor:
            assert anchor in _slugs(path), f"{page.name}: {link} names no heading"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_reference_outside_the_repository(page):
    text = page.read_text()
    # Spelled in pieces, so that a grep for leftover references finds the pages only.
    for outside in ("SPEC" + ".md", "../" + "shared"):
        assert outside not in text, f"{page.name} cites {outside}"


# "six dtypes" is right only of the NPU operator (aclnn, golden): the
# package's own list grows with its table (_dtype_spec.py).
_SIX_DTYPES = re.compile(r"\b(?:six|6)\s+dtypes\b", re.IGNORECASE)
_ABOUT_THE_NPU = ("NPU", "operator", "aclnn", "ACL_")


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_only_the_npu_operator_has_six_dtypes(page):
    """A page that counts "six dtypes" (or "6 dtypes") does so in a sentence
    about the NPU operator, one that names the NPU, the operator, aclnn or an
    ACL_ type: the package's dtypes are its table's, whose count changes
    (the float8 types join the operator's six), so the prose about them
    names no count.  Sentences are split at a full stop, question or
    exclamation mark followed by white space, or at a blank line."""
    for sentence in re.split(r"(?<=[.!?])\s+|\n\s*\n", page.read_text()):
        if _SIX_DTYPES.search(sentence):
            assert any(word in sentence for word in _ABOUT_THE_NPU), (
                f"{page.name}: {' '.join(sentence.split())!r} counts six dtypes but is "
                "not about the NPU operator: name no count for the package's dtypes")


def _table(heading):
    """{name: value} of the table under ``heading`` in semantics.md, which may
    lay its rows out in several name/value column pairs."""
    section = SEMANTICS.read_text().split(heading + "\n", 1)[1].split("\n#", 1)[0]
    table = {}
    for row in re.findall(r"^\|(.*)\|$", section, re.M):
        cells = [c.strip().strip("`") for c in row.split("|")]
        for name, value in zip(cells, cells[1:], strict=False):  # neighbours
            if re.fullmatch(r"[A-Z][A-Z0-9_]+", name) and re.fullmatch(r"-?\d+", value):
                table[name] = int(value)
    return table


@pytest.mark.parametrize("heading, enum", [("### Status codes (`aclnnStatus`)", aclnn.aclnnStatus),
                                           ("### `aclDataType`", aclnn.aclDataType),
                                           ("### `aclFormat`", aclnn.aclFormat)])
def test_value_tables_are_the_enums(heading, enum):
    assert _table(heading) == {name: int(m) for name, m in enum.__members__.items()}


def test_soc_table_is_the_modules():
    section = SEMANTICS.read_text().split("## SoC and BF16", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| [^|]+ \| `(\w+)`[^|]* \| (yes|no) \|$", section, re.M)
    assert {name: bf16 == "yes" for name, bf16 in rows} == _soc.SOCS


def test_aclnn_example_runs(capsys):
    """docs/aclnn.md's calling example runs and prints the document's result."""
    text = (ROOT / "docs" / "aclnn.md").read_text()
    blocks = [b for b in re.findall(r"```python\n(.*?)```", text, re.S)
              if "aclnnSigmoidBackward(" in b]
    assert blocks, "docs/aclnn.md has no python block that calls aclnnSigmoidBackward"
    exec(compile(blocks[0], "docs/aclnn.md", "exec"), {})
    assert "[0.0, -2.0, -6.0, -12.0]" in capsys.readouterr().out


def test_layout_table_names_every_source_file():
    """docs/development.md's layout table names each file of the layer
    folders, and names no file that is gone: a newcomer reads the layers
    there, so a file added or moved without a line fails here."""
    text = (ROOT / "docs" / "development.md").read_text()
    table = text[text.index("## Layout"):text.index("## Release files")]
    package = ROOT / "src" / "sigmoid_backward"
    if not package.is_dir():
        pytest.skip("needs the source tree")
    named = set()
    for row in re.findall(r"^\| `([^|]*)\|", table, re.M):
        first, *rest = re.findall(r"`([^`]+)`", "`" + row)
        folder = first.rpartition("/")[0]
        named |= {first, *(f"{folder}/{n}" if folder and "/" not in n else n for n in rest)}
    layers = ("_kernel", "_numpy", "_frameworks", "_tools")
    files = {f"{p.parent.name}/{p.name}" for layer in layers
             for p in (package / layer).iterdir() if p.name != "__init__.py" and p.is_file()}
    assert files - named == set(), "docs/development.md's layout table misses these files"
    gone = {n for n in named if n.split("/")[0] in layers and not (package / n).exists()}
    assert gone == set(), "docs/development.md's layout table names files that are gone"


@pytest.mark.parametrize("extra", ["torch", "jax"])
def test_framework_extras_state_the_versions_the_docs_name(extra):
    """The installed package's [torch]/[jax] extras bound the framework
    below by the version docs/frameworks.md says was tested."""
    import importlib.metadata
    marker = f'extra == "{extra}"'
    (dep,) = [r.split(";")[0].strip() for r in importlib.metadata.requires("sigmoid-backward")
              if marker in r]
    name, bound = re.fullmatch(r"(\w+)\s*>=\s*([\d.]+)", dep).groups()
    assert name == extra
    text = " ".join((ROOT / "docs" / "frameworks.md").read_text().split())
    assert f"{extra} >= {bound}" in text, f"docs/frameworks.md does not name {dep}"
