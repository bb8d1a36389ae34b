"""Which Volcano releases a scenario applies to: an optional range (`volcano: '>=1.14'`,
`volcano: '>=1.12, <1.14'`), checked when the scenario loads and matched against the release an
implementation declares. Behaviour that changed between releases is one scenario per range, each
citing that release's source; outside its range a scenario is "not applicable" (shown, never
counted), which is not "not claimed" (the implementation lacks a capability).

Ranges and releases are read with `packaging` (PEP 440 specifiers: `>=`, `<`, `==1.13.*`, commas
for "and"); a Volcano tag reads as its version, and a pre-release (`v1.14.0-alpha.1`) counts as the
release it leads to (1.14.0): it carries that release's behaviour, not the one before.
"""

from __future__ import annotations

import dataclasses

from packaging import specifiers
from packaging import version as versions


@dataclasses.dataclass(frozen=True)
class ReleaseRange:
    text: str
    spec: specifiers.SpecifierSet

    def contains(self, release: str) -> bool:
        """Whether an implementation of this release is judged by the scenario (a release that
        does not read as a version is judged: the kit cannot place it)."""
        parsed = parse_release(release)
        return parsed is None or self.spec.contains(versions.Version(parsed.base_version), prereleases=True)

    def __str__(self) -> str:
        return self.text


def parse(text: str) -> ReleaseRange:
    """A range as a scenario writes it; ValueError says what was expected."""
    try:
        spec = specifiers.SpecifierSet(text.replace("v", ""))
    except specifiers.InvalidSpecifier:
        raise ValueError(f"{text!r} is not a release range: write it as '>=1.14', '<1.14' or '>=1.12, <1.14'") from None
    if not len(spec):
        raise ValueError(f"{text!r} is not a release range: it names no release")
    return ReleaseRange(text, spec)


def parse_release(release: str) -> versions.Version | None:
    """`v1.13.3`, `1.14`, `v1.16.0-alpha.1` as versions; None for what is not one (`dev`)."""
    try:
        return versions.Version(release)
    except versions.InvalidVersion:
        return None
