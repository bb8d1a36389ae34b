"""The Volcano recipe: the wrapper go.mod repeats Volcano's replace block, the build asks for the
three cmd packages with the version stamped, prebuilt binaries are used as they are, and the
webhook configurations match what vc-webhook-manager looks up. No real build: a recording
stand-in for `go` (tests/conformance/toolchain/fake_go.py) shows the steps."""

from __future__ import annotations

import json
import os
import pathlib

import pytest

from conformance.impl import registry, volcano, volcano_webhooks
from conformance.toolchain import cache, errors, install, versions, volcano_resolve
from conformance.toolchain import volcano as recipe
from tests.conformance.toolchain.fake_go import FAKE_GO

SAMPLE_GOMOD = """module volcano.sh/volcano

go 1.24.0

require (
\tk8s.io/api v0.33.2
\tk8s.io/kubernetes v1.33.2
\tvolcano.sh/apis v1.13.3
)

replace (
\tcloud.google.com/go => cloud.google.com/go v0.100.2 // pinned upstream
\tgoogle.golang.org/grpc => google.golang.org/grpc v1.57.0

\tk8s.io/api => k8s.io/api v0.33.2
\tk8s.io/externaljwt => k8s.io/externaljwt v0.33.2
)

replace example.com/old v1.0.0 => example.com/new v1.2.0
"""


def test_wrapper_gomod_repeats_the_replace_block() -> None:
    text = recipe.wrapper_gomod(SAMPLE_GOMOD, "v1.13.3")
    assert text.startswith("module vck.local/toolchain/volcano\n\ngo 1.24.0\n\nrequire volcano.sh/volcano v1.13.3\n")
    assert "\tcloud.google.com/go => cloud.google.com/go v0.100.2\n" in text
    assert "\tgoogle.golang.org/grpc => google.golang.org/grpc v1.57.0\n" in text
    assert "\tk8s.io/api => k8s.io/api v0.33.2\n" in text
    # A version-qualified left side is kept as written.
    assert "\texample.com/old v1.0.0 => example.com/new v1.2.0\n" in text
    # The one target the module proxy does not serve moves to the release of its minor it does.
    assert "\tk8s.io/externaljwt => k8s.io/externaljwt v0.33.13\n" in text
    assert "v0.33.2\n" not in text.split("externaljwt =>")[1].splitlines()[0]
    assert "// pinned upstream" not in text


def test_replace_block_parsing_refuses_local_folders() -> None:
    with pytest.raises(errors.ToolchainError) as err:
        recipe.parse_replaces("module m\n\nreplace (\n\tk8s.io/api => ./staging/src/k8s.io/api\n\tk8s.io/x => k8s.io/x v0.1.0\n)\n", "sample go.mod")
    assert "k8s.io/api => ./staging/src/k8s.io/api points at a local folder" in str(err.value)
    assert err.value.step == "read sample go.mod"


def test_a_module_without_replaces_gets_none() -> None:
    text = recipe.wrapper_gomod("module volcano.sh/volcano\n\ngo 1.23.0\n", "v1.12.2")
    assert text == "module vck.local/toolchain/volcano\n\ngo 1.23.0\n\nrequire volcano.sh/volcano v1.12.2\n"


@pytest.mark.parametrize("version", ["1.13.3", "v1.13", "latest", "v1.13.3; rm -rf /"])
def test_only_release_tags_are_accepted(version: str) -> None:
    with pytest.raises(errors.ToolchainError):
        recipe.check_version(version)
    with pytest.raises(Exception) as err:
        registry.implementation(f"volcano:{version}")
    assert "is not a release tag" in str(err.value)


def test_registry_accepts_volcano_and_a_version(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VCK_VOLCANO_WORKDIR", str(tmp_path))
    default = registry.implementation("volcano")
    pinned = registry.implementation("volcano:v1.12.2")
    assert isinstance(default, volcano.Volcano) and default.version == versions.VOLCANO_VERSION and default.name == "volcano"
    assert isinstance(pinned, volcano.Volcano) and pinned.version == "v1.12.2" and pinned.name == "volcano:v1.12.2"
    # The file's claims (the adapter narrows them to its release's source once it is built:
    # tests/conformance/impl/test_volcano_release.py).
    caps = volcano.claims()
    assert {"action:enqueue", "plugin:gang", "plugin:conformance", "admission:job", "jobplugin:ray", "controller:queue"} <= caps
    assert not {c for c in caps if "gpu-aware" in c or "gpu-podaffinity" in c}
    assert default.versions() == {"implementation": f"volcano {versions.VOLCANO_VERSION}", "release": versions.VOLCANO_VERSION}
    assert (default.volcano_release(), pinned.volcano_release()) == (versions.VOLCANO_VERSION, "v1.12.2")


def test_prebuilt_binaries_are_used_as_they_are(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bindir = tmp_path / "bin"
    bindir.mkdir()
    for name, _ in versions.VOLCANO_BINARIES[:2]:
        (bindir / name).write_text("#!/bin/sh\n")
        (bindir / name).chmod(0o755)
    monkeypatch.setenv(recipe.BIN_ENV, str(bindir))
    with pytest.raises(errors.ToolchainError) as err:
        volcano_resolve.binaries("v1.13.3", root=tmp_path / "cache")
    assert "no executable vc-webhook-manager" in str(err.value)
    (bindir / "vc-webhook-manager").write_text("#!/bin/sh\n")
    (bindir / "vc-webhook-manager").chmod(0o755)
    found = volcano_resolve.binaries("v1.13.3", root=tmp_path / "cache")
    assert found == {n: bindir / n for n, _ in versions.VOLCANO_BINARIES}
    assert not (tmp_path / "cache").exists(), "nothing is built or locked when binaries are given"


FAKE_DOWNLOAD = r'''
import json, os, pathlib, sys
args = sys.argv[1:]
if args[:3] == ["mod", "download", "-json"] and args[3].startswith("volcano.sh/volcano@"):
    if os.environ.get("FAKE_GO_REFUSE"):
        print(json.dumps({"Path": "volcano.sh/volcano", "Error": "reading $GOPROXY/volcano.sh/volcano/@v/v1.13.3.info: 403 Forbidden"}))
        sys.exit(1)
    print(json.dumps({"Path": "volcano.sh/volcano", "GoMod": os.environ["FAKE_GO_VOLCANO_GOMOD"], "Dir": os.environ["FAKE_GO_VOLCANO_DIR"]}))
    sys.exit(0)
'''


@pytest.fixture
def fake_go(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch, path_without_go: str) -> pathlib.Path:
    bindir = tmp_path / "fakego"
    bindir.mkdir()
    # The toolchain's stand-in, answering Volcano's module download first.
    script = FAKE_GO.replace("args = sys.argv[1:]\n", "args = sys.argv[1:]\n" + FAKE_DOWNLOAD.split("args = sys.argv[1:]\n", 1)[1], 1)
    (bindir / "go").write_text(script)
    (bindir / "go").chmod(0o755)
    gomod = tmp_path / "volcano.go.mod"
    gomod.write_text(SAMPLE_GOMOD)
    log = tmp_path / "go.log"
    lines = {name: f"Version: {versions.VOLCANO_VERSION}" for name, _ in versions.VOLCANO_BINARIES}
    # The stand-in names a build by its package's last element.
    lines.update({"scheduler": lines["vc-scheduler"], "controller-manager": lines["vc-scheduler"], "webhook-manager": lines["vc-scheduler"]})
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{path_without_go}")
    monkeypatch.setenv("FAKE_GO_LOG", str(log))
    monkeypatch.setenv("FAKE_GO_VOLCANO_GOMOD", str(gomod))
    monkeypatch.setenv("FAKE_GO_VOLCANO_DIR", str(tmp_path / "src"))
    monkeypatch.setenv("FAKE_GO_LINES", json.dumps(lines))
    monkeypatch.delenv(recipe.BIN_ENV, raising=False)
    return log


def test_build_from_go_modules_writes_the_wrapper_and_stamps_the_version(tmp_path: pathlib.Path, fake_go: pathlib.Path) -> None:
    root = tmp_path / "cache"
    lines: list[str] = []
    found = volcano_resolve.binaries(versions.VOLCANO_VERSION, root=root, progress=lines.append)
    comps = versions.volcano_components()
    assert found == {c.name: cache.binary_path(c, root) for c in comps}
    calls = [json.loads(line)["argv"] for line in fake_go.read_text().splitlines()]
    builds = [a for a in calls if a[0] == "build"]
    assert [b[-1] for b in builds] == [f"volcano.sh/volcano/{cmd}" for _, cmd in versions.VOLCANO_BINARIES]
    assert all(f"volcano.sh/volcano/pkg/version.Version={versions.VOLCANO_VERSION}" in b[b.index("-ldflags") + 1] for b in builds)
    workdir = cache.build_dir("volcano", versions.VOLCANO_VERSION, root)
    assert (workdir / "go.mod").read_text() == recipe.wrapper_gomod(SAMPLE_GOMOD, versions.VOLCANO_VERSION)
    assert "volcano.sh/volcano/cmd/webhook-manager" in (workdir / "tools.go").read_text()
    # Its own lock: the cluster toolchain's is never held during this build.
    assert (root / "volcano.lock").exists() and not (root / "toolchain.lock").exists()
    assert any("vc-scheduler: building" in line for line in lines)
    # Built once: the next call is a cache hit that runs no go command.
    before = len(calls)
    volcano_resolve.binaries(versions.VOLCANO_VERSION, root=root, progress=lines.append)
    assert len(fake_go.read_text().splitlines()) == before


def test_a_proxy_refusal_is_reported_with_the_way_out(tmp_path: pathlib.Path, fake_go: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_GO_REFUSE", "1")
    with pytest.raises(errors.ToolchainError) as err:
        volcano_resolve.binaries(versions.VOLCANO_VERSION, root=tmp_path / "cache", progress=lambda _: None)
    text = str(err.value)
    assert "403 Forbidden" in text and "GOPROXY" in text and recipe.BIN_ENV in text


def test_release_only_source_is_refused_for_volcano(tmp_path: pathlib.Path) -> None:
    with pytest.raises(errors.ToolchainError) as err:
        install.install_components(versions.volcano_components(), source="release", root=tmp_path, progress=lambda _: None, lock="volcano.lock")
    assert "has no release download" in str(err.value)


def test_webhook_configurations_carry_the_names_the_manager_looks_up() -> None:
    body = volcano_webhooks.configuration(volcano_webhooks.ADMISSIONS["/jobs/validate"], "https://127.0.0.1:9443", b"PEM")
    assert body["kind"] == "ValidatingWebhookConfiguration"
    assert body["metadata"]["name"] == "volcano-admission-service-jobs-validate"
    hook = body["webhooks"][0]
    assert hook["clientConfig"]["url"] == "https://127.0.0.1:9443/jobs/validate"
    assert hook["rules"][0]["operations"] == ["CREATE", "UPDATE"] and hook["failurePolicy"] == "Fail"
    mutate = volcano_webhooks.configuration(volcano_webhooks.ADMISSIONS["/queues/mutate"], "https://h:1", b"PEM")
    assert mutate["kind"] == "MutatingWebhookConfiguration" and mutate["metadata"]["name"] == "volcano-admission-service-queues-mutate"


def test_enabled_admissions_follow_the_modules_chart(tmp_path: pathlib.Path) -> None:
    values = tmp_path / volcano_webhooks.CHART_VALUES
    values.parent.mkdir(parents=True)
    values.write_text('custom:\n  enabled_admissions: "/jobs/mutate,/jobs/validate,/queues/validate,/unknown/path"\n')
    assert volcano_webhooks.enabled_admissions(tmp_path) == ("/jobs/mutate", "/jobs/validate", "/queues/validate")
    # The kit's additions, where the version's source serves them.
    (tmp_path / "pkg/webhooks/admission/jobflows/validate").mkdir(parents=True)
    assert volcano_webhooks.enabled_admissions(tmp_path) == ("/jobs/mutate", "/jobs/validate", "/queues/validate", "/jobflows/validate")
    everything = volcano_webhooks.DEFAULT_ADMISSIONS + volcano_webhooks.KIT_ADMISSIONS
    assert volcano_webhooks.enabled_admissions(None) == everything
    assert volcano_webhooks.enabled_admissions(tmp_path / "missing") == everything


def test_the_pod_rule_is_asked_only_about_annotated_pods() -> None:
    pods = volcano_webhooks.configuration(volcano_webhooks.ADMISSIONS["/pods/validate"], "https://h:1", b"PEM")
    assert pods["webhooks"][0]["matchConditions"] == [volcano_webhooks.POD_MATCH_CONDITION]
    jobs = volcano_webhooks.configuration(volcano_webhooks.ADMISSIONS["/jobs/validate"], "https://h:1", b"PEM")
    assert "matchConditions" not in jobs["webhooks"][0]


def test_tls_material_names_the_loopback_address(tmp_path: pathlib.Path) -> None:
    from cryptography import x509

    tls = volcano_webhooks.make_tls(tmp_path, "127.0.0.1")
    cert = x509.load_pem_x509_certificate(tls.cert.read_bytes())
    ca = x509.load_pem_x509_certificate(tls.ca_pem())
    assert cert.issuer == ca.subject
    sans = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert "127.0.0.1" in [str(ip) for ip in sans.get_values_for_type(x509.IPAddress)]
    assert oct(tls.key.stat().st_mode & 0o777) == "0o600"
