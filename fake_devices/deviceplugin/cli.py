"""`python -m fake_devices.deviceplugin`: serve N fake devices to the kubelet of this node.

    python -m fake_devices.deviceplugin --resource nvidia.com/gpu --count 8 --numa-nodes 2 \\
        --socket-dir /var/lib/kubelet/device-plugins

Or serve exactly the GPUs a device profile gives one of its nodes (ids, NUMA nodes, health and
links as `fake_devices/README.md` advertises them), so a real kubelet and the kit's simulated nodes
agree:

    python -m fake_devices.deviceplugin --profile supernodes-4x8 --node snode-3

`--node` defaults to the NODE_NAME environment variable (a DaemonSet sets it from spec.nodeName).

It serves until SIGTERM or Ctrl-C, then removes its socket (the kubelet sees the stream end and
marks the devices unhealthy). Exit codes: 0 after a clean shutdown, 1 when the kubelet rejected
the registration (the device plugin API asks a rejected plugin to exit), 2 for bad arguments or a
socket that cannot be served.
"""

from __future__ import annotations

import argparse
import logging
import os
import pathlib
import signal
import sys
import threading
from types import FrameType

from fake_devices import profile
from fake_devices.deviceplugin import devices, plugin, registration, server

logger = logging.getLogger(__name__)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m fake_devices.deviceplugin", description=__doc__.splitlines()[0])
    p.add_argument("--resource", default="nvidia.com/gpu", help="extended resource name (default: nvidia.com/gpu)")
    p.add_argument("--count", type=int, default=8, help="number of devices (default: 8)")
    p.add_argument("--numa-nodes", type=int, default=1, help="NUMA nodes the devices are spread over, in contiguous blocks (default: 1)")
    p.add_argument("--id-prefix", default=None, help="device ids are <prefix>-<n> (default: from the resource name, such as GPU-0)")
    p.add_argument("--profile", default=None, help="serve a device profile's node instead: a built-in name or a profile file (overrides --resource, --count, --numa-nodes)")
    p.add_argument("--node", default=os.environ.get("NODE_NAME"), help="with --profile: the profile node to serve (default: $NODE_NAME)")
    p.add_argument("--socket-dir", type=pathlib.Path, default=pathlib.Path(devices.DEVICE_PLUGIN_PATH), help="the kubelet's device plugin directory (default: %(default)s)")
    p.add_argument("--endpoint", default=None, help="socket file name in --socket-dir (default: vck-<resource with / as ->.sock)")
    p.add_argument("--visible-devices-env", default=None, help="environment variable Allocate sets (default: the vendor's, such as NVIDIA_VISIBLE_DEVICES)")
    p.add_argument("--health-file", type=pathlib.Path, default=None, help="file listing device ids to report unhealthy, one a line; polled")
    p.add_argument(
        "--poll-interval",
        type=float,
        default=plugin.Config.poll_interval,
        help="seconds between checks of kubelet.sock and the health file (default: %(default)s)",
    )
    p.add_argument("--log-level", default="INFO", choices=["DEBUG", "INFO", "WARNING", "ERROR"], help="(default: INFO)")
    return p


def profile_device_set(source: str, node_name: str | None) -> devices.DeviceSet:
    """The devices a profile gives one node; ValueError (a ProfileError for a bad profile) says
    what is missing."""
    prof = profile.builtin(source) if source in profile.builtin_names() else profile.load_file(pathlib.Path(source))
    names = [n.name for n in prof.nodes]
    if not node_name:
        raise ValueError(f"--profile {source} needs --node (or NODE_NAME): one of {', '.join(names)}")
    for node in prof.nodes:
        if node.name == node_name:
            return profile.device_set(node)
    raise ValueError(f"profile {prof.name} has no node {node_name!r}; its nodes: {', '.join(names)}")


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    logging.basicConfig(level=args.log_level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        device_set = profile_device_set(args.profile, args.node) if args.profile else devices.synthetic(args.resource, args.count, args.numa_nodes, prefix=args.id_prefix)
        config = plugin.Config(
            socket_dir=args.socket_dir,
            endpoint=args.endpoint,
            visible_devices_env=args.visible_devices_env,
            poll_interval=args.poll_interval,
            health_file=args.health_file,
        )
        device_plugin = plugin.DevicePlugin(device_set, config)
    except ValueError as err:  # DeviceSetError and config problems
        print(f"error: {err}", file=sys.stderr)
        return 2
    done = threading.Event()
    received: list[signal.Signals] = []

    def on_signal(signum: int, frame: FrameType | None) -> None:
        # Only a note the main loop polls: a handler runs on the main thread between two
        # bytecodes, possibly while that thread holds the lock `done.set()` (or starting a thread)
        # needs, inside `done.wait()`: setting it here could deadlock the shutdown.
        received.append(signal.Signals(signum))

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    try:
        device_plugin.start()
    except server.ServeError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    except registration.RegistrationError as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    logger.info(
        "advertising %d x %s (%s) over %d NUMA node(s); Allocate sets %s",
        len(device_set.devices),
        device_set.resource_name,
        ", ".join(d.id for d in device_set.devices),
        len({d.numa_node for d in device_set.devices}),
        device_plugin.visible_devices_env,
    )

    def on_failure() -> None:
        device_plugin.failed.wait()
        done.set()

    threading.Thread(target=on_failure, name="deviceplugin-failed", daemon=True).start()
    try:
        # In slices: the handler only notes the signal, and a signal the kernel hands to one of
        # gRPC's threads only flags the main thread, whose handler runs at its next wake-up.
        while not received and not done.wait(0.2):
            pass
        if received:
            logger.info("received %s: shutting down", received[0].name)
    finally:
        device_plugin.stop()
    if device_plugin.failure is not None:
        print(f"error: {device_plugin.failure}", file=sys.stderr)
        return 1
    return 0
