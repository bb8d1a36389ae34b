"""`refused_within` (runner.steps.apply_until_refused) on a real API server: an object a rule refuses
only once the admission has caught up is sent as dry runs until refused, and nothing is stored.
The rule here is a ValidatingAdmissionPolicy created beside the step, which takes effect a moment
after it is stored, as a webhook's informer learns of an object a moment after it is stored."""

from __future__ import annotations

import secrets
import threading
from typing import Any, Iterator

import kubernetes
import pytest

from conformance.cluster import kube, resources
from conformance.observe import recorder
from conformance.runner import steps
from tests.clusters import OwnCluster

pytestmark = pytest.mark.cluster

LABEL = "vck-test-refuse"
MESSAGE = "refused by the test's policy"


def policy(namespace: str) -> tuple[dict[str, Any], dict[str, Any]]:
    name = f"vck-test-refuse-{namespace}"
    return (
        {
            "apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy", "metadata": {"name": name},
            "spec": {
                "failurePolicy": "Fail",
                "matchConstraints": {"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["configmaps"]}]},
                "validations": [{"expression": f"!has(object.metadata.labels) || !('{LABEL}' in object.metadata.labels)", "message": MESSAGE}],
            },
        },
        {
            "apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding", "metadata": {"name": name},
            "spec": {"policyName": name, "validationActions": ["Deny"], "matchResources": {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": namespace}}}},
        },
    )


@pytest.fixture
def step_context(own_cluster: OwnCluster) -> Iterator[steps.StepContext]:
    client = resources.Client(own_cluster.api)
    namespace = f"refused-within-{secrets.token_hex(3)}"
    client.core.create_namespace(resources.as_model({"metadata": {"name": namespace}}))
    kube.wait_service_account(own_cluster.api, namespace, 60)
    rec = recorder.Recorder(client, namespace, [resources.lookup("ConfigMap")])
    rec.start()
    try:
        yield steps.StepContext(client, namespace, rec, 1.0)
    finally:
        rec.stop()
        client.core.delete_namespace(namespace)


def config_map(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "labels": {LABEL: "yes"}}, "data": {"k": "v"}}


def test_dry_runs_until_the_rule_takes_effect_and_nothing_is_stored(own_cluster: OwnCluster, step_context: steps.StepContext) -> None:
    admission = kubernetes.client.AdmissionregistrationV1Api(own_cluster.api)
    vap, binding = policy(step_context.namespace)
    # The rule comes into force while the step is trying: as an informer catching up would.
    creator = threading.Thread(target=lambda: (admission.create_validating_admission_policy(vap), admission.create_validating_admission_policy_binding(binding)))
    creator.start()
    try:
        check = steps.apply_until_refused(step_context, config_map("held"), MESSAGE, 60.0, "refused once the policy holds")
        creator.join()
        assert check.passed, check
        assert check.observed.startswith("refused") and MESSAGE in check.observed
        stored = step_context.client.core.list_namespaced_config_map(step_context.namespace).items
        assert "held" not in {c.metadata.name for c in stored}, "a dry run stored the object"
    finally:
        creator.join()
        admission.delete_validating_admission_policy_binding(binding["metadata"]["name"])
        admission.delete_validating_admission_policy(vap["metadata"]["name"])


def test_an_object_never_refused_fails_the_check_when_the_window_ends(step_context: steps.StepContext) -> None:
    check = steps.apply_until_refused(step_context, config_map("admitted"), MESSAGE, 1.0, "refused")
    assert not check.passed and "accepted it" in check.observed and "each a dry run" in check.observed
    stored = step_context.client.core.list_namespaced_config_map(step_context.namespace).items
    assert "admitted" not in {c.metadata.name for c in stored}
