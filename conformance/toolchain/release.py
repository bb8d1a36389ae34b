"""Obtain a component from its official release download, when the internet (or a mirror) is reachable."""

from __future__ import annotations

import hashlib
import io
import os
import pathlib
import tarfile
import urllib.parse
from typing import Callable

import requests

from conformance.toolchain import errors, versions

# Replaces the scheme and host of every release URL (keeping the path): a mirror of the release
# sites, or a local server in tests.
RELEASE_SITE_ENV = "VCK_RELEASE_SITE"
CONNECT_TIMEOUT_S = 5.0
READ_TIMEOUT_S = 60.0

Progress = Callable[[str], None]


def _resolve(template: str, component: versions.Component, arch: str) -> str:
    url = template.format(version=component.version, arch=arch)
    site = os.environ.get(RELEASE_SITE_ENV)
    if not site:
        return url
    parsed = urllib.parse.urlsplit(url)
    base = urllib.parse.urlsplit(site)
    return urllib.parse.urlunsplit((base.scheme, base.netloc, parsed.path, parsed.query, ""))


def release_url(component: versions.Component, arch: str) -> str:
    return _resolve(component.release_url, component, arch)


def release_host(component: versions.Component, arch: str) -> str:
    return urllib.parse.urlsplit(release_url(component, arch)).netloc


def _get(url: str, progress: Progress) -> bytes:
    try:
        with requests.get(url, stream=True, timeout=(CONNECT_TIMEOUT_S, READ_TIMEOUT_S)) as resp:
            if resp.status_code != 200:
                raise errors.ReleaseUnavailable(f"{url}: HTTP {resp.status_code}")
            total = int(resp.headers.get("content-length") or 0)
            buf = io.BytesIO()
            next_report = 0
            for chunk in resp.iter_content(chunk_size=1 << 20):
                buf.write(chunk)
                if total and buf.tell() >= next_report:
                    progress(f"  {url}: {buf.tell() >> 20}/{total >> 20} MiB")
                    next_report += max(total // 4, 1)
            return buf.getvalue()
    except (requests.ConnectionError, requests.Timeout) as err:
        host = urllib.parse.urlsplit(url).netloc
        raise errors.ReleaseUnavailable(f"cannot reach {host} ({err.__class__.__name__})", unreachable_host=host) from err
    except requests.RequestException as err:
        raise errors.ReleaseUnavailable(f"{url}: {err.__class__.__name__}: {err}") from err


def _expected_sha256(component: versions.Component, arch: str, progress: Progress) -> str | None:
    if not component.release_sha256_url:
        return None
    text = _get(_resolve(component.release_sha256_url, component, arch), progress).decode().strip()
    digest = text.split()[0] if text else ""
    if len(digest) != 64:
        raise errors.ReleaseUnavailable(f"checksum file for {component.name} holds no sha256: {text[:80]!r}")
    return digest.lower()


def _extract(data: bytes, member: str, url: str) -> bytes:
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:*") as tar:
            extracted = tar.extractfile(member)
            if extracted is None:
                raise errors.ReleaseUnavailable(f"{url}: {member} is not a regular file in the archive")
            return extracted.read()
    except (tarfile.TarError, KeyError) as err:
        raise errors.ReleaseUnavailable(f"{url}: cannot read {member} from the archive: {err}") from err


def download(component: versions.Component, dest: pathlib.Path, arch: str, progress: Progress) -> str:
    """Write the component's binary to `dest`; return the URL it came from.

    Raises ReleaseUnavailable when the site cannot be reached or serves something wrong, so the
    caller can fall through to building from Go modules.
    """
    url = release_url(component, arch)
    progress(f"{component.name}: downloading {url}")
    data = _get(url, progress)
    expected = _expected_sha256(component, arch, progress)
    if expected is not None:
        actual = hashlib.sha256(data).hexdigest()
        if actual != expected:
            raise errors.ReleaseUnavailable(f"{url}: sha256 {actual} does not match the published {expected}")
    if component.release_member:
        data = _extract(data, component.release_member.format(version=component.version, arch=arch), url)
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_suffix(".part")
    tmp.write_bytes(data)
    tmp.chmod(0o755)
    tmp.replace(dest)
    return url
