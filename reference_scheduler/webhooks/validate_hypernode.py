"""Volcano's HyperNode rules beyond its CRD's: at least one member, and a member's exactMatch
name and regexMatch pattern present and valid.

Upstream: pkg/webhooks/admission/hypernodes/validate/admit_hypernode.go (validateHyperNode,
validateHyperNodeMemberSelector). Messages are field errors as Kubernetes writes them
(`<path>: Invalid value: <value>: <detail>`, values as Go prints them), several in brackets.
"""

from __future__ import annotations

import json
import re
from typing import Any, Mapping

_QUALIFIED = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_PREFIX = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
# Upstream roots its field paths at field.NewPath(""), which Kubernetes prints as "[]".
MEMBERS = "[].spec.members"
SELECTOR = "[].spec.members.selector"


def _invalid(path: str, value: Any, detail: str) -> str:
    shown = f'"{value}"' if isinstance(value, str) else "null" if value is None else json.dumps(value, separators=(",", ":"))
    return f"{path}: Invalid value: {shown}: {detail}"


def qualified_name_errors(name: str) -> list[str]:
    """Kubernetes' IsQualifiedName: an optional DNS-subdomain prefix and "/", then a name of up
    to 63 characters."""
    prefix, _, base = name.rpartition("/")
    errors = []
    if "/" in name and (not prefix or len(prefix) > 253 or not _PREFIX.match(prefix)):
        errors.append("prefix part must be a valid DNS subdomain")
    if not base:
        errors.append("name part must be non-empty")
    elif len(base) > 63:
        errors.append("name part must be no more than 63 characters")
    elif not _QUALIFIED.match(base):
        errors.append("name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")
    return errors


def _selector_errors(selector: Mapping[str, Any]) -> list[str]:
    present = [k for k in ("exactMatch", "regexMatch", "labelMatch") if selector.get(k) is not None]
    if not present:
        return [_invalid(SELECTOR, dict(selector), "member selector must have one of exactMatch, regexMatch, or labelMatch")]
    if len(present) > 1:
        return [_invalid(SELECTOR, dict(selector), "cannot specify more than one selector type (exactMatch, regexMatch, labelMatch)")]
    errors = []
    if selector.get("exactMatch") is not None:
        name = str((selector["exactMatch"] or {}).get("name") or "")
        if not name:
            errors.append(_invalid(f"{SELECTOR}.exactMatch.name", name, "member exactMatch name is required"))
        elif qualified_name_errors(name):
            errors.append(_invalid(f"{SELECTOR}.exactMatch.name", name, f"member exactMatch validate failed [{' '.join(qualified_name_errors(name))}]"))
    if selector.get("regexMatch") is not None:
        pattern = str((selector["regexMatch"] or {}).get("pattern") or "")
        if not pattern:
            errors.append(_invalid(f"{SELECTOR}.regexMatch.pattern", pattern, "member regexMatch pattern is required"))
        else:
            try:
                re.compile(pattern)
            except re.error as err:
                errors.append(_invalid(f"{SELECTOR}.regexMatch.pattern", pattern, f"member regexMatch pattern is invalid: {err}"))
    return errors


def validate(hypernode: Mapping[str, Any]) -> str:
    """The refusal message ("" when admitted)."""
    members = (hypernode.get("spec") or {}).get("members") or []
    # Go prints an empty list as the API gave it: present but empty, or absent.
    empty = "[]v1alpha1.MemberSpec{}" if "members" in (hypernode.get("spec") or {}) else "[]v1alpha1.MemberSpec(nil)"
    errors = [] if members else [f"{MEMBERS}: Invalid value: {empty}: member must have at least one member"]
    for member in members:
        errors += _selector_errors((member or {}).get("selector") or {})
    if not errors:
        return ""
    return errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]"
