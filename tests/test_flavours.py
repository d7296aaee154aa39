"""The flavour forms, against fixtures (tests/data/flavours/):

- a flavour that installs another distribution or extras (``install``),
- a page computed from the build chosen for a coupled package (``url`` template),
- a version pattern instead of one version (``versions``).

Rules only: the shipped data is tested in tests/test_builtin_data.py.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from resolver_hook.cli import main
from resolver_hook.host import parse_target
from resolver_hook.install.venvhook import enable_plan
from resolver_hook.lock.lines import lock_lines
from resolver_hook.manifest import Manifest, ManifestError, loads_manifest
from resolver_hook.resolve import Coupling, PackagePlan, Plan, resolve
from tests.paths import DATA

FIXTURES = DATA / "flavours"
CUDA13 = "linux-x86_64-py312-cuda13.0-sm89"
CUDA126 = "linux-x86_64-py312-cuda12.6-sm89"


def fixtures(*names: str) -> dict[str, Manifest]:
    out = {}
    for name in names:
        m = loads_manifest((FIXTURES / f"{name}.toml").read_text(), source=f"{name}.toml")
        out[m.name] = m
    return out


def plan(target: str, reqs: list[str], *names: str) -> Plan:
    return resolve(reqs, fixtures(*names), parse_target(target))


def couplings(p: PackagePlan) -> list[Coupling]:
    """What caused each coupling failure of the package's refused builds."""
    return [x.coupling for r in p.rejected for x in r.failures if x.coupling is not None]


# --- install: another distribution or extras ---------------------------------------


def test_a_name_flavour_rewrites_the_line_to_the_other_distribution() -> None:
    p = plan(CUDA126, ["cupy"], "cupy")
    cupy = p.package("cupy")
    assert cupy is not None
    assert (cupy.action, cupy.installs, cupy.line) == (
        "rewrite",
        "cupy-cuda12x",
        "cupy-cuda12x>=14.0",
    )
    # A constraints file cannot rename a requirement: no constraint, and the plan says so.
    assert cupy.constraint is None
    assert p.constraints == ()
    assert any("cupy: installs cupy-cuda12x" in n and "enable" in n for n in p.notes)


def test_a_cuda13_driver_gets_the_cuda13_distribution() -> None:
    cupy = plan(CUDA13, ["cupy"], "cupy").package("cupy")
    assert cupy is not None
    assert cupy.installs == "cupy-cuda13x"


def test_the_users_specifier_extras_and_marker_carry_over() -> None:
    cupy = plan(CUDA13, ['cupy[ctk]==14.2.0 ; python_version >= "3.10"'], "cupy").package("cupy")
    assert cupy is not None
    assert cupy.line == 'cupy-cuda13x[ctk]==14.2.0,>=14.0 ; python_version >= "3.10"'


def test_an_extras_flavour_keeps_the_name() -> None:
    p = plan(CUDA13, ["jaxish"], "jaxish")
    j = p.package("jaxish")
    assert j is not None
    assert (j.installs, j.line) == ("jaxish[cuda13]", "jaxish[cuda13]==0.5.0")
    assert "the package with extras" in j.reason
    assert not any("another distribution" in n for n in p.notes)


def test_a_dependency_on_the_plain_name_is_reported() -> None:
    p = plan(CUDA13, ["cupy", "uses-cupy"], "cupy", "uses-cupy")
    assert any(n.startswith("cupy: uses-cupy depends on the plain name cupy") for n in p.notes), (
        p.notes
    )


def test_lock_pins_the_other_distribution() -> None:
    assert "cupy-cuda13x>=14.0" in lock_lines(plan(CUDA13, ["cupy"], "cupy"))


def test_enable_cannot_apply_a_name_flavour(tmp_path: Path) -> None:
    (tmp_path / "pyvenv.cfg").write_text("home = /usr/bin\n")
    done = enable_plan(tmp_path, parse_target(CUDA13), fixtures("cupy", "llamaish"))
    text = done.constraints.read_text()
    assert "cupy" not in text  # nothing to say about it in a constraints file
    assert "llamaish>=0.3.0" in text  # the other forms travel


# --- url templates over the coupled build -----------------------------------------


def test_the_page_matches_the_chosen_torch_and_is_marked_computed() -> None:
    p = plan(CUDA13, ["torch", "torch-scatter"], "torch", "torch-scatter")
    scatter = p.package("torch-scatter")
    assert scatter is not None
    page = "https://data.example.org/whl/torch-2.12.0+cu130.html"
    assert (scatter.find_links, scatter.computed) == (page, True)
    assert p.package("torch").computed is False  # type: ignore[union-attr]
    assert page in p.find_links
    assert f"torch-scatter: the page {page} is computed" in " ".join(p.notes)
    assert "the torch 2.12.0+cu130 build chosen, not a page seen" in " ".join(p.notes)


def test_a_torch_build_without_a_page_is_a_coupling_failure() -> None:
    # cu126 is the only CUDA build this driver runs; the fixture's pages exist for cpu
    # and cu130 only, so torch-scatter cannot follow it.
    p = plan(CUDA126, ["torch", "torch-scatter"], "torch", "torch-scatter")
    scatter = p.package("torch-scatter")
    assert scatter is not None
    # No torch build this machine runs has a page: no fit, not a clash with the others.
    assert (scatter.action, scatter.cause) == ("error", "no-fit")
    # What failed is the page's labels for the torch build this machine runs.
    [c] = couplings(scatter)
    assert (c.cause, c.package) == ("page", "torch")
    assert c.unmet is not None
    assert (c.unmet.kind, c.unmet.labels, c.unmet.version) == (
        "local-label",
        ("cpu", "cu130"),
        "2.12.0+cu126",
    )
    # The hint reads the builds of the package it couples with: torch's cu130 build
    # needs a newer driver, and that driver gives torch-scatter its page.
    assert scatter.fix is not None
    assert (scatter.fix.kind, scatter.fix.cuda) == ("driver", "13.0")
    assert scatter.fix.also == ("torch 2.12.0+cu130",)


def test_a_pin_that_rules_out_the_build_a_coupling_needs_is_named() -> None:
    # torch 2.12.0+cu130 fits this machine and has a page; the user's own pin on torch
    # excludes it. The reason and the hint name the pin, not the machine.
    p = plan(CUDA13, ["torch==2.12.0+cu126", "torch-scatter"], "torch", "torch-scatter")
    scatter = p.package("torch-scatter")
    assert scatter is not None
    assert scatter.action == "error"
    assert scatter.reason.startswith("no build of torch-scatter goes with your requirements")
    pinned = [c for c in couplings(scatter) if c.cause == "pinned"]
    assert pinned
    assert {(c.pinned_by, c.package, c.version) for c in pinned} == {
        ("torch==2.12.0+cu126", "torch", "2.12.0+cu130")
    }
    # The hint is the product here: it names the pin in words.
    clause = "your requirement torch==2.12.0+cu126 rules out torch 2.12.0+cu130"
    assert scatter.fix is None
    assert scatter.hint.startswith(clause)
    assert scatter.hint.endswith("loosen or drop that requirement")
    # Without the pin the machine decides, and the words say the machine.
    p = plan(CUDA126, ["torch", "torch-scatter"], "torch", "torch-scatter")
    scatter = p.package("torch-scatter")
    assert scatter is not None
    assert scatter.reason.startswith("no build of torch-scatter fits this machine")
    assert "your requirement" not in scatter.hint
    assert all(c.cause != "pinned" for c in couplings(scatter))


def test_a_pin_ruling_out_a_coupling_with_a_marker_is_named_whole() -> None:
    # The coupling's marker holds "; " too: the hint is the pin clause, not a piece of it.
    head = 'schema = 1\n[package]\nname = "{0}"\n'
    torch = head.format("torch") + "".join(
        f'[[index]]\nurl = "https://example.org/{v}/torch/"\nversion = "{v}"\n'
        for v in ("2.12.0", "2.13.0")
    )
    ext = head.format("ext") + (
        '[[index]]\nurl = "https://example.org/ext/"\nversion = "1.0"\n'
        "requires = [\"torch>=2.13; sys_platform == 'linux'\"]\n"
    )
    ms = {n: loads_manifest(t, source=f"{n}.toml") for n, t in (("torch", torch), ("ext", ext))}
    e = resolve(["torch==2.12.0", "ext"], ms, parse_target("linux-x86_64-py312")).package("ext")
    assert e is not None
    [c] = couplings(e)
    assert (c.cause, c.requirement, c.pinned_by) == (
        "pinned",
        'torch>=2.13; sys_platform == "linux"',
        "torch==2.12.0",
    )
    assert e.hint.startswith("your requirement torch==2.12.0 rules out torch 2.13.0, which fits")


def test_each_refused_entry_says_why_the_chosen_torch_has_no_page() -> None:
    # Two torch-scatter entries, one for another Python: both fail on the page's labels,
    # and both say so (not "no such build of torch fits", which the chosen one does).
    text = (FIXTURES / "torch-scatter.toml").read_text()
    text = text.replace(
        'local_labels = ["cpu", "cu130"]\n', 'local_labels = ["cpu", "cu130"]\npython = ["3.12"]\n'
    )
    text += (
        '\n[[index]]\nurl = "https://data.example.org/whl/torch-{torch.minor}.0+{torch.local}.html"'
        '\nversions = ">=2.1.2"\nrequires = ["torch>=2.12,<2.13"]\n'
        'local_labels = ["cpu", "cu130"]\npython = ["3.11"]\n'
    )
    ms = {**fixtures("torch"), "torch-scatter": loads_manifest(text, source="torch-scatter.toml")}
    p = resolve(["torch", "torch-scatter"], ms, parse_target(CUDA126))
    scatter = p.package("torch-scatter")
    assert scatter is not None
    assert len(scatter.rejected) == 2
    causes = [(c.cause, c.unmet.kind if c.unmet else None) for c in couplings(scatter)]
    assert causes == [("page", "local-label")] * 2
    for r in scatter.rejected:  # and the words say so
        assert "its page exists for torch builds cpu, cu130, not 2.12.0+cu126" in r.reason


def test_a_package_that_fits_alone_but_not_beside_the_others_is_a_conflict() -> None:
    # Two torch releases fit; one package needs the older, one the newer. The plan
    # takes one torch; the package left over fits this machine, just not this plan.
    head = 'schema = 1\n[package]\nname = "{0}"\n'
    torch = head.format("torch") + "".join(
        f'[[index]]\nurl = "https://example.org/cu130/torch/"\nversion = "{v}+cu130"\n'
        'cuda = ">=13.0"\n'
        for v in ("2.12.0", "2.13.0")
    )
    old = head.format("old-ext") + (
        '[[index]]\nurl = "https://example.org/old/"\nversion = "1.0"\nrequires = ["torch<2.13"]\n'
    )
    new = head.format("new-ext") + (
        '[[index]]\nurl = "https://example.org/new/"\nversion = "1.0"\nrequires = ["torch>=2.13"]\n'
    )
    ms = {
        n: loads_manifest(t, source=f"{n}.toml")
        for n, t in (("torch", torch), ("old-ext", old), ("new-ext", new))
    }
    p = resolve(["torch", "old-ext", "new-ext"], ms, parse_target(CUDA13))
    causes = {x.name: (x.action, x.cause) for x in p.packages}
    assert causes["torch"] == ("rewrite", "fit")
    assert sorted(causes[n] for n in ("old-ext", "new-ext")) == [
        ("error", "conflict"),
        ("rewrite", "fit"),
    ]
    # Alone, each fits: the conflict is the plan's, not the machine's.
    for name in ("old-ext", "new-ext"):
        alone = resolve(["torch", name], ms, parse_target(CUDA13)).package(name)
        assert alone is not None
        assert alone.action == "rewrite"


def test_every_template_fact_is_filled_from_the_chosen_build() -> None:
    ext = plan(CUDA13, ["abi-ext"], "torch", "abi-ext").package("abi-ext")
    assert ext is not None
    assert ext.find_links == (
        "https://example.org/abi-ext/cu13torch2.12cxx11abiTRUE/cp312/linux_x86_64/"
    )


def test_a_fact_the_build_lacks_is_a_coupling_failure() -> None:
    # The cu126 torch of the fixture gives no cxx11abi: no page can be computed from it.
    p = plan(CUDA126, ["abi-ext"], "torch", "abi-ext")
    ext = p.package("abi-ext")
    assert ext is not None
    assert ext.action == "error"
    unmet = [c.unmet for c in couplings(ext) if c.unmet is not None]
    assert [(u.kind, u.package, u.version) for u in unmet] == [
        ("cxx11abi", "torch", "2.12.0+cu126")
    ], unmet


def test_the_cli_marks_a_computed_page(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["--manifest", str(FIXTURES / "torch.toml"), "--manifest"]
    args.append(str(FIXTURES / "torch-scatter.toml"))
    code = main(["plan", "torch", "torch-scatter", "--target", CUDA13, *args])
    out = capsys.readouterr().out
    assert code == 0
    assert "torch-2.12.0+cu130.html (computed)" in out
    assert "torch-2.12.0+cu130.html  (computed from a template, not seen)" in out
    code = main(["plan", "torch", "torch-scatter", "--target", CUDA13, "--json", *args])
    d: dict[str, Any] = json.loads(capsys.readouterr().out)
    by = {p["name"]: p for p in d["packages"]}
    assert (by["torch-scatter"]["computed"], by["torch"]["computed"]) == (True, False)


# --- version patterns ----------------------------------------------------------------


def test_a_pattern_takes_every_release_of_its_page() -> None:
    p = plan(CUDA13, ["llamaish"], "llamaish")
    ll = p.package("llamaish")
    assert ll is not None
    assert (ll.line, ll.versions, ll.find_links) == (
        "llamaish>=0.3.0",
        ">=0.3.0",
        "https://example.org/whl/cu130/llamaish/",
    )
    assert p.constraints == ("llamaish>=0.3.0",)


def test_a_pin_inside_the_pattern_fits_and_one_outside_does_not() -> None:
    ll = plan(CUDA126, ["llamaish==0.4.1"], "llamaish").package("llamaish")
    assert ll is not None
    assert (ll.line, ll.find_links) == (
        "llamaish==0.4.1,>=0.3.0",
        "https://example.org/whl/cu124/llamaish/",
    )
    old = plan(CUDA126, ["llamaish==0.2.0"], "llamaish").package("llamaish")
    assert old is not None
    assert old.action == "pass"
    assert old.cause == "unjudged"  # a CUDA machine: passed on, and said loudly
    # A range the pattern allows is described by the manifest: refused with the machine's
    # reason where no build fits, never passed on as a version the manifest lacks.
    later = plan("linux-x86_64-py312", ["llamaish>=0.9"], "llamaish").package("llamaish")
    assert later is not None
    assert (later.action, later.cause) == ("error", "no-fit")


# --- load-time validation, with key paths -------------------------------------------

HEAD = 'schema = 1\n[package]\nname = "demo"\n[[index]]\n'


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        (
            'url = "https://x.org/{torch.version}/{cudnn}/"\nversion = "1.0"\n'
            'requires = ["torch>=2"]\n',
            "index[0].url: unknown placeholder {cudnn}",
        ),
        (
            'url = "https://x.org/{torch.patch}/"\nversion = "1.0"\nrequires = ["torch>=2"]\n',
            "index[0].url: unknown placeholder {torch.patch}",
        ),
        (
            'url = "https://x.org/{numpy.version}/"\nversion = "1.0"\nrequires = ["torch>=2"]\n',
            "index[0].url: placeholder {numpy.version} reads numpy's build, but the entry "
            "does not couple with numpy",
        ),
        (
            'url = "https://x.org/{cuda}/"\nversion = "1.0"\n',
            "index[0].url: {cuda}, {cuda_major} and {cxx11abi} read the coupled package's build",
        ),
        (
            'url = "http://x.org/{torch.local}/"\nversion = "1.0"\nrequires = ["torch>=2"]\n',
            "index[0].url: the template 'http://x.org/{torch.local}/' does not make an https URL",
        ),
        (
            'url = "https://{torch.local}.x.org/p/"\nversion = "1.0"\nrequires = ["torch>=2"]\n',
            "index[0].url: 'https://{torch.local}.x.org/p/': placeholders belong in the path",
        ),
        ('install = "demo-cu12>=1"\nversion = "1.0"\n', "index[0].install: 'demo-cu12>=1': give"),
        ('install = "demo"\nversion = "1.0"\n', "index[0].install: 'demo' is the package itself"),
        ('versions = "<2"\n', "index[0].versions: '<2' has no floor"),
        ('versions = ">=1"\nversion = "1.0"\n', "index[0].versions: give 'version'"),
        (
            'url = "https://x.org/p/"\nversion = "1.0"\nlocal_labels = ["cu130"]\n',
            "index[0].local_labels: only for a url template",
        ),
        ('version = "1.0"\ncxx11abi = "yes"\n', "index[0].cxx11abi: expected true or false"),
    ],
)
def test_bad_flavour_forms_are_refused_at_load_time(body: str, problem: str) -> None:
    with pytest.raises(ManifestError) as exc:
        loads_manifest(HEAD + body, source="demo.toml")
    assert any(p.startswith(f"demo.toml: {problem}") for p in exc.value.problems), (
        exc.value.problems
    )


def test_only_a_build_table_is_an_sdist_only_package() -> None:
    m = loads_manifest(
        'schema = 1\n[package]\nname = "demo"\n[build]\nneeds = ["ninja"]\n', source="demo"
    )
    p = resolve(["demo"], {"demo": m}, parse_target(CUDA13)).package("demo")
    assert p is not None
    assert (p.action, p.build_needs, p.line) == ("build", ("ninja",), "demo")
    assert "publishes no wheels" in p.reason


# --- placeholders say each form as it is ----------------------------------------------


def test_a_placeholder_names_the_other_distribution_and_the_template() -> None:
    from resolver_hook.publish.placeholder.data import placeholder_data
    from resolver_hook.publish.placeholder.render import runtime

    rt = runtime()
    cupy = placeholder_data(fixtures("cupy")["cupy"])
    lines = [rt.install_line(cupy, f) for f in cupy["flavours"]]
    assert "pip install 'cupy-cuda13x>=14.0'" in lines
    scatter = placeholder_data(fixtures("torch-scatter")["torch-scatter"])
    (line,) = [rt.install_line(scatter, f) for f in scatter["flavours"]]
    assert line == (
        "pip install 'torch-scatter>=2.1.2' --find-links "
        "'https://data.example.org/whl/torch-{torch.minor}.0+{torch.local}.html' "
        "(fill in from torch<2.13,>=2.12)"
    )


class _Pages:
    """A fake network for lock_wheels: page URL -> wheel filenames (hash "aa..")."""

    def __init__(self, pages: dict[str, list[str]]) -> None:
        self.pages = pages

    def links(self, page_url: str) -> tuple[Any, ...]:
        from resolver_hook.index.model import Link

        names = self.pages.get(page_url, [])
        return tuple(Link(url=page_url + n, filename=n, hashes={"sha256": "a" * 64}) for n in names)

    def prefetch(self, page_urls: list[str]) -> None:
        self.prefetched = list(page_urls)

    def sha256(self, url: str) -> str:
        raise AssertionError(url)

    def check(self, url: str) -> None:
        pass

    def left_out(self, page_url: str) -> list[str]:
        return []


def test_pylock_locks_the_other_distribution_and_the_newest_of_a_pattern() -> None:
    from resolver_hook.lock.wheels import lock_wheels

    p = plan(CUDA13, ["cupy", "llamaish"], "cupy", "llamaish")
    tag = "cp312-cp312-manylinux_2_17_x86_64"
    pages = _Pages(
        {
            "https://pypi.org/simple/cupy-cuda13x/": [
                f"cupy_cuda13x-14.1.0-{tag}.whl",
                f"cupy_cuda13x-14.2.0-{tag}.whl",
            ],
            "https://example.org/whl/cu130/llamaish/": [
                f"llamaish-0.2.0-{tag}.whl",
                f"llamaish-0.4.0-{tag}.whl",
                f"llamaish-0.3.0-{tag}.whl",
            ],
        }
    )
    locked = {(w.name, w.version) for w in lock_wheels(p, pages)}
    assert locked == {("cupy-cuda13x", "14.2.0"), ("llamaish", "0.4.0")}
    assert sorted(pages.prefetched) == sorted(pages.pages)  # both pages asked for at once


def test_the_enable_command_says_it_cannot_apply_a_name_flavour(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (tmp_path / "bin").mkdir()
    args = ["--manifest", str(FIXTURES / "cupy.toml")]
    code = main(["enable", "--venv", str(tmp_path), "--target", CUDA13, *args])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "cupy: cannot apply: this machine's flavour is cupy-cuda13x" in out


def test_a_uv_project_lock_names_a_flavour_it_cannot_write_as_a_source() -> None:
    from resolver_hook.lock.uvproject import UvTarget, uv_project_text

    p = plan(CUDA13, ["cupy"], "cupy")
    text = uv_project_text([UvTarget(spec=CUDA13, profile=p.profile, plan=p)])
    want = "# Not a source: write this dependency under its flavour's name: cupy -> cupy-cuda13x"
    assert f"{want} ({CUDA13})" in text
