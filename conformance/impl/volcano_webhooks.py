"""The admission webhook configurations vc-webhook-manager serves, registered by the kit.

Since v1.12, vc-webhook-manager no longer creates its webhook configurations: it waits for ones
named `volcano-admission-service-<path>` (its helm chart creates them) and only fills in their CA
bundle (upstream: cmd/webhook-manager/app/util.go, installer/helm/chart/volcano/templates/
webhooks.yaml). The kit creates them itself, pointing at the manager by URL on the loopback
address (the embedded API server runs on this machine) and trusting a throwaway CA the kit makes.
"""

from __future__ import annotations

import base64
import dataclasses
import datetime
import ipaddress
import logging
import pathlib
import time
from typing import Any, Callable, Sequence

import kubernetes
import yaml
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

log = logging.getLogger(__name__)
NAME_PREFIX = "volcano-admission-service"
# The helm chart's `custom.enabled_admissions` of v1.13, used when the module's chart is not at
# hand (installer/helm/chart/volcano/values.yaml). Pods are not mutated or validated by default.
DEFAULT_ADMISSIONS = ("/jobs/mutate", "/jobs/validate", "/podgroups/validate", "/queues/mutate", "/queues/validate", "/hypernodes/validate", "/cronjobs/validate")
CHART_VALUES = "installer/helm/chart/volcano/values.yaml"
# Served by vc-webhook-manager but left out of the chart's default: the kit enables them too, so
# the JobFlow DAG rule and the pod's job disruption budget rule are judged on real Volcano.
KIT_ADMISSIONS = ("/jobflows/validate", "/pods/validate")
# The pod rule can only refuse a pod carrying one of these annotations
# (pkg/webhooks/admission/pods/validate/admit_pod.go): the API server asks the webhook about those
# pods alone, so no other pod of a run waits on it.
POD_MATCH_CONDITION = {
    "name": "jdb-annotated",
    "expression": "has(object.metadata.annotations) && ('volcano.sh/jdb-min-available' in object.metadata.annotations || 'volcano.sh/jdb-max-unavailable' in object.metadata.annotations)",
}


@dataclasses.dataclass(frozen=True)
class Admission:
    """One admission path of vc-webhook-manager and what the API server sends it."""

    path: str
    webhook: str
    group: str
    version: str
    resource: str
    operations: tuple[str, ...]

    @property
    def mutating(self) -> bool:
        return self.path.endswith("/mutate")

    @property
    def config_name(self) -> str:
        """The name vc-webhook-manager looks the configuration up by."""
        return NAME_PREFIX + self.path.replace("/", "-")


# The rules of each configuration, as the v1.13 chart declares them (the webhook names are facts
# of the interface: clients see them in denial messages).
ADMISSIONS: dict[str, Admission] = {
    a.path: a
    for a in (
        Admission("/jobs/mutate", "mutatejob.volcano.sh", "batch.volcano.sh", "v1alpha1", "jobs", ("CREATE",)),
        Admission("/jobs/validate", "validatejob.volcano.sh", "batch.volcano.sh", "v1alpha1", "jobs", ("CREATE", "UPDATE")),
        Admission("/cronjobs/validate", "validatecronjob.volcano.sh", "batch.volcano.sh", "v1alpha1", "cronjobs", ("CREATE", "UPDATE")),
        Admission("/jobflows/validate", "validatejobflow.volcano.sh", "flow.volcano.sh", "v1alpha1", "jobflows", ("CREATE", "UPDATE")),
        Admission("/podgroups/mutate", "mutatepodgroup.volcano.sh", "scheduling.volcano.sh", "v1beta1", "podgroups", ("CREATE",)),
        Admission("/podgroups/validate", "validatepodgroup.volcano.sh", "scheduling.volcano.sh", "v1beta1", "podgroups", ("CREATE",)),
        Admission("/queues/mutate", "mutatequeue.volcano.sh", "scheduling.volcano.sh", "v1beta1", "queues", ("CREATE",)),
        Admission("/queues/validate", "validatequeue.volcano.sh", "scheduling.volcano.sh", "v1beta1", "queues", ("CREATE", "UPDATE", "DELETE")),
        Admission("/hypernodes/validate", "validatehypernodes.volcano.sh", "topology.volcano.sh", "v1alpha1", "hypernodes", ("CREATE", "UPDATE")),
        Admission("/pods/mutate", "mutatepod.volcano.sh", "", "v1", "pods", ("CREATE",)),
        Admission("/pods/validate", "validatepod.volcano.sh", "", "v1", "pods", ("CREATE",)),
    )
}


def enabled_admissions(source: pathlib.Path | None) -> tuple[str, ...]:
    """The chart's default `enabled_admissions` of the version being run (its values.yaml in the
    module source), so an older release is not asked for a path it does not serve, and the kit's
    own additions (KIT_ADMISSIONS) that the version's source serves."""
    if source is not None:
        try:
            values = yaml.safe_load((source / CHART_VALUES).read_text())
            text = str(values["custom"]["enabled_admissions"])
            chart = tuple(p.strip() for p in text.split(",") if p.strip() in ADMISSIONS)
            served = tuple(p for p in KIT_ADMISSIONS if p not in chart and (source / "pkg/webhooks/admission" / p.strip("/")).is_dir())
            return chart + served
        except (OSError, yaml.YAMLError, KeyError, TypeError) as err:
            log.warning("cannot read enabled_admissions from %s (%s); using the v1.13 default", source / CHART_VALUES, err)
    return DEFAULT_ADMISSIONS + KIT_ADMISSIONS


@dataclasses.dataclass(frozen=True)
class Tls:
    ca: pathlib.Path
    cert: pathlib.Path
    key: pathlib.Path

    def ca_pem(self) -> bytes:
        return self.ca.read_bytes()


def _name(common: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common)])


def make_tls(directory: pathlib.Path, host: str) -> Tls:
    """A throwaway CA and a serving certificate for `host` (an IP address), valid for a day."""
    now = datetime.datetime.now(datetime.timezone.utc)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_cert = (
        x509.CertificateBuilder()
        .subject_name(_name("vck-volcano-webhook-ca"))
        .issuer_name(_name("vck-volcano-webhook-ca"))
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        x509.CertificateBuilder()
        .subject_name(_name(host))
        .issuer_name(ca_cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address(host)), x509.DNSName("localhost")]), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    directory.mkdir(parents=True, exist_ok=True)
    tls = Tls(directory / "ca.crt", directory / "server.crt", directory / "server.key")
    tls.ca.write_bytes(ca_cert.public_bytes(serialization.Encoding.PEM))
    tls.cert.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    tls.key.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    tls.key.chmod(0o600)
    return tls


def configuration(admission: Admission, base_url: str, ca_pem: bytes) -> dict[str, Any]:
    """One Mutating/ValidatingWebhookConfiguration, as the chart writes it but reached by URL."""
    webhook = {
        "name": admission.webhook,
        "admissionReviewVersions": ["v1"],
        "clientConfig": {"url": base_url + admission.path, "caBundle": base64.b64encode(ca_pem).decode()},
        "failurePolicy": "Fail",
        "matchPolicy": "Equivalent",
        # The chart leaves its own namespace and kube-system out.
        "namespaceSelector": {"matchExpressions": [{"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": ["volcano-system", "kube-system"]}]},
        "rules": [{"apiGroups": [admission.group], "apiVersions": [admission.version], "operations": list(admission.operations), "resources": [admission.resource], "scope": "*"}],
        "sideEffects": "NoneOnDryRun",
        "timeoutSeconds": 10,
    }
    if admission.path == "/pods/validate":
        webhook["matchConditions"] = [dict(POD_MATCH_CONDITION)]
    kind = "MutatingWebhookConfiguration" if admission.mutating else "ValidatingWebhookConfiguration"
    if admission.mutating:
        webhook["reinvocationPolicy"] = "Never"
    return {"apiVersion": "admissionregistration.k8s.io/v1", "kind": kind, "metadata": {"name": admission.config_name}, "webhooks": [webhook]}


def _calls(adm: kubernetes.client.AdmissionregistrationV1Api, mutating: bool) -> tuple[Callable[..., Any], Callable[..., Any], Callable[..., Any], Callable[..., Any]]:
    if mutating:
        return (adm.create_mutating_webhook_configuration, adm.read_mutating_webhook_configuration, adm.replace_mutating_webhook_configuration, adm.delete_mutating_webhook_configuration)
    return (adm.create_validating_webhook_configuration, adm.read_validating_webhook_configuration, adm.replace_validating_webhook_configuration, adm.delete_validating_webhook_configuration)


def register(api: kubernetes.client.ApiClient, paths: Sequence[str], base_url: str, ca_pem: bytes) -> None:
    """Create (or replace) the configuration of every enabled path."""
    adm = kubernetes.client.AdmissionregistrationV1Api(api)
    for path in paths:
        body = configuration(ADMISSIONS[path], base_url, ca_pem)
        create, read, replace, _ = _calls(adm, ADMISSIONS[path].mutating)
        try:
            create(body)
        except kubernetes.client.ApiException as err:
            if err.status != 409:
                raise
            body["metadata"]["resourceVersion"] = read(body["metadata"]["name"]).metadata.resource_version
            replace(body["metadata"]["name"], body)


def unregister(api: kubernetes.client.ApiClient) -> None:
    """Remove every configuration the kit may have registered: with failure policy Fail, one left
    behind without its server would refuse every Job and Queue."""
    adm = kubernetes.client.AdmissionregistrationV1Api(api)
    for admission in ADMISSIONS.values():
        _, _, _, delete = _calls(adm, admission.mutating)
        try:
            delete(admission.config_name)
        except kubernetes.client.ApiException as err:
            if err.status != 404:
                raise


# vc-webhook-manager's answer to a Job without tasks (pkg/webhooks/admission/jobs/validate/admit_job.go).
# The webhook's refusal of the probe (upstream: admit_job.go validateJobCreate, every release from
# v1.10 to v1.15 words it so).
DUPLICATE_TASK = "duplicated task name vck-probe"
_PROBE_TASK = {"name": "vck-probe", "replicas": 1, "template": {"spec": {"containers": [{"name": "main", "image": "busybox"}]}}}
# A Job only the webhook refuses: two tasks of one name. A CRD schema cannot say names are unique
# (v1.15's refuses a Job without tasks before any webhook is asked, so that probe cannot tell).
PROBE_JOB = {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": {"name": "vck-webhook-probe"}, "spec": {"tasks": [_PROBE_TASK, _PROBE_TASK]}}


def wait_live(api: kubernetes.client.ApiClient, timeout_s: float, alive: Callable[[], str | None]) -> None:
    """Until the API server calls the webhook: a dry-run Job with two tasks of one name is refused
    with the webhook's reason. `alive()` returns why the manager is gone (then this stops at
    once), else None."""
    custom = kubernetes.client.CustomObjectsApi(api)
    probe = PROBE_JOB
    deadline = time.monotonic() + timeout_s
    last = ""
    while time.monotonic() < deadline:
        gone = alive()
        if gone is not None:
            raise RuntimeError(gone)
        try:
            custom.create_namespaced_custom_object("batch.volcano.sh", "v1alpha1", "default", "jobs", probe, dry_run="All")
            last = "the probe Job was admitted"
        except kubernetes.client.ApiException as err:
            if DUPLICATE_TASK in (err.body or ""):
                return
            last = f"HTTP {err.status}: {(err.body or '')[:200]}"
        # The manager starts serving only after its informers sync; the API server has no event
        # to watch for that, so the probe is retried.
        time.sleep(0.5)
    raise TimeoutError(f"the API server did not call vc-webhook-manager within {timeout_s:.0f}s (last probe: {last})")
