"""Entry point of `python -m fake_devices.deviceplugin`; see cli.py."""

from __future__ import annotations

import os
import sys

# gRPC core logs at INFO by default, such as a GOAWAY each time the kubelet restarts; the plugin
# logs what matters itself. Set before grpc is first imported (cli imports it).
os.environ.setdefault("GRPC_VERBOSITY", "ERROR")

from fake_devices.deviceplugin import cli  # noqa: E402  (after the environment is set)

sys.exit(cli.main())
