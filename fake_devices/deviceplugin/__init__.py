"""A real kubelet device plugin (API v1beta1 over gRPC on a unix socket) serving fake devices.

Modules, one concept each: `devices` (the device set it serves), `vendors` (visible-devices
environment variable per resource name), `allocation` (preferred allocation by topology),
`health` (health flips at run time), `server` (the DevicePlugin service), `registration`
(Register on kubelet.sock, telling a restarted kubelet's socket), `plugin` (all of it together,
following kubelet restarts), `testing` (a stand-in kubelet), `cli`.
`generated/` holds the stubs made by `generate.py`, never edited by hand.
"""
