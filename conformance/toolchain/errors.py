"""Errors the toolchain raises: each names the step that failed, why, and what to do."""

from __future__ import annotations


class ToolchainError(RuntimeError):
    """A component could not be obtained. The message says which step failed and how to fix it."""

    def __init__(self, step: str, detail: str, fix: str = "") -> None:
        self.step = step
        self.detail = detail
        self.fix = fix
        text = f"toolchain: {step} failed: {detail}"
        if fix:
            text += f"\n  fix: {fix}"
        super().__init__(text)


class ReleaseUnavailable(Exception):
    """The release site could not serve a component (no network, 404, bad checksum): try the next source.

    `unreachable_host` is set when the host could not be reached at all, so the installer skips
    the other downloads from it instead of waiting on each in turn.
    """

    def __init__(self, message: str, unreachable_host: str | None = None) -> None:
        super().__init__(message)
        self.unreachable_host = unreachable_host
