"""A recording stand-in for `go`, shared by the toolchain tests (test_toolchain.py, and
test_volcano_toolchain.py, which adds Volcano's module download to it): written as the `go` on a
test's PATH, it shows the build steps in order without a ten-minute build."""

FAKE_GO = r'''#!/usr/bin/env python3
"""A recording stand-in for `go`: logs argv, answers `version` and `mod download -json`, and
"builds" a binary that prints the version line the real one would."""
import json, os, pathlib, sys
log = pathlib.Path(os.environ["FAKE_GO_LOG"])
with log.open("a") as f:
    f.write(json.dumps({"cwd": os.getcwd(), "argv": sys.argv[1:], "gotoolchain": os.environ.get("GOTOOLCHAIN")}) + "\n")
args = sys.argv[1:]
if args[:1] == ["version"]:
    print(os.environ.get("FAKE_GO_VERSION", "go version go1.26.8 linux/amd64"))
elif args[:3] == ["mod", "download", "-json"]:
    gomod = pathlib.Path(os.environ["FAKE_GO_KUBE_GOMOD"])
    print(json.dumps({"Path": "k8s.io/kubernetes", "GoMod": str(gomod)}))
elif args[:2] == ["mod", "tidy"]:
    pass
elif args[:1] == ["build"]:
    out = pathlib.Path(args[args.index("-o") + 1])
    name = pathlib.Path(args[-1]).name if args[-1] != "." else "etcd"
    lines = json.loads(os.environ["FAKE_GO_LINES"])
    out.write_text("#!/bin/sh\necho '%s'\n" % lines[name])
    out.chmod(0o755)
else:
    sys.exit("fake go: unexpected " + " ".join(args))
'''
