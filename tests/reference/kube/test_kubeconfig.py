"""The lean path's kubeconfig reader (kube/kubeconfig.py) finds what the official one does, on a
real API server, the credentials given by file or inline; what only the official reader handles
is left to it."""

from __future__ import annotations

import base64
import json
import pathlib

import pytest
import yaml

from reference_scheduler.kube import client, kubeconfig, rest
from tests.clusters import OwnCluster

pytestmark = pytest.mark.cluster


def test_the_lean_reader_finds_what_the_official_one_does(own_cluster: OwnCluster, tmp_path: pathlib.Path) -> None:
    official = kubeconfig.from_configuration(client.api_client(str(own_cluster.handle.kubeconfig)).configuration)
    lean_target = kubeconfig.load(str(own_cluster.handle.kubeconfig))
    assert lean_target is not None and (lean_target.server, lean_target.ca_file) == (official.server, official.ca_file)
    # The same credentials given inline (as most kubeconfigs carry them) reach the server too.
    doc = yaml.safe_load(own_cluster.handle.kubeconfig.read_text())
    cluster, user = doc["clusters"][0]["cluster"], doc["users"][0]["user"]
    cluster["certificate-authority-data"] = base64.b64encode(pathlib.Path(cluster.pop("certificate-authority")).read_bytes()).decode()
    for key in ("client-certificate", "client-key"):
        user[f"{key}-data"] = base64.b64encode(pathlib.Path(user.pop(key)).read_bytes()).decode()
    inline = tmp_path / "inline.yaml"
    inline.write_text(yaml.safe_dump(doc))
    target = kubeconfig.load(str(inline))
    assert target is not None and target.server == official.server
    assert json.loads(rest.Rest(target, "vck-test", rest.REQUEST_TIMEOUT_S).request("GET", "/api/v1/namespaces/default"))["metadata"]["name"] == "default"
    # What only the official reader handles is left to it.
    user["exec"] = {"command": "true", "apiVersion": "client.authentication.k8s.io/v1"}
    inline.write_text(yaml.safe_dump(doc))
    assert kubeconfig.load(str(inline)) is None
