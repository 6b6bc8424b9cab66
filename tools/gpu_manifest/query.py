"""Parse structured `bazel query` output (xml, streamed_jsonproto) into typed records.

Labels and tags are read from the structured output only, never from label text, so renamed
targets and user tags cannot confuse the exporter. Errors name the element or line at fault.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

FORMATS = ("xml", "streamed_jsonproto", "jsonproto")


class QueryParseError(ValueError):
    """Query output that cannot be read; the message names the line or element."""


@dataclass(frozen=True)
class QueryTarget:
    """One test rule as Bazel reported it (only the attributes the GPU tools need)."""

    label: str
    kind: str
    tags: tuple[str, ...] = ()
    size: str = "medium"
    timeout: str | None = None
    shard_count: int = 0
    flaky: bool = False
    args: tuple[str, ...] = ()
    location: str | None = None
    explicit: frozenset[str] = field(default_factory=frozenset, repr=False, compare=False)


_SIZES = ("small", "medium", "large", "enormous")
_TIMEOUTS = ("short", "moderate", "long", "eternal")


def _check_label(label: str, where: str) -> str:
    if (not label or not (label.startswith("//") or label.startswith("@")) or ":" not in label
            or any(ord(c) < 0x20 or c == "\x7f" for c in label)):
        raise QueryParseError(f"{where}: expected a canonical label like //pkg:name (no control characters "
                              f"or newlines), got {label[:200]!r}")
    return label


def _build(where: str, label: str, kind: str, attrs: Mapping[str, Any], location: str | None,
           explicit: Iterable[str] | None) -> QueryTarget:
    """Turn raw attribute values into a QueryTarget, checking each value's type."""
    def want_str(name: str, default: str | None) -> str | None:
        value = attrs.get(name, default)
        if value is not None and not isinstance(value, str):
            raise QueryParseError(f"{where}: attribute '{name}' must be a string, got {value!r}")
        return value

    def want_list(name: str) -> tuple[str, ...]:
        value = attrs.get(name, [])
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise QueryParseError(f"{where}: attribute '{name}' must be a list of strings, got {value!r}")
        return tuple(value)

    size = want_str("size", "medium") or "medium"
    if size not in _SIZES:
        raise QueryParseError(f"{where}: attribute 'size' must be one of {_SIZES}, got {size!r}")
    timeout = want_str("timeout", None)
    if timeout is not None and timeout not in _TIMEOUTS:
        raise QueryParseError(f"{where}: attribute 'timeout' must be one of {_TIMEOUTS}, got {timeout!r}")
    explicit_set = frozenset(attrs) if explicit is None else frozenset(explicit)
    if "timeout" not in explicit_set:
        timeout = None  # Bazel derives the default timeout from size; let size decide.
    shard = attrs.get("shard_count", 0)
    if isinstance(shard, bool) or not isinstance(shard, int):
        raise QueryParseError(f"{where}: attribute 'shard_count' must be an integer, got {shard!r}")
    flaky = attrs.get("flaky", False)
    if not isinstance(flaky, bool):
        raise QueryParseError(f"{where}: attribute 'flaky' must be a boolean, got {flaky!r}")
    return QueryTarget(
        label=label,
        kind=kind,
        tags=want_list("tags"),
        size=size,
        timeout=timeout,
        shard_count=max(shard, 0),
        flaky=flaky,
        args=want_list("args"),
        location=location,
        explicit=explicit_set,
    )


# ---------------------------------------------------------------- xml

def _xml_value(elem: ET.Element, where: str) -> Any:
    tag = elem.tag
    if tag == "list":
        return [_xml_value(child, where) for child in elem]
    raw = elem.get("value")
    if tag in ("string", "label", "output", "license", "distribution"):
        return raw if raw is not None else ""
    if tag == "int":
        try:
            return int(raw if raw is not None else "")
        except ValueError:
            raise QueryParseError(
                f"{where}: <int name={elem.get('name')!r}> has non-integer value {raw!r}"
            ) from None
    if tag == "boolean":
        if raw not in ("true", "false"):
            raise QueryParseError(
                f"{where}: <boolean name={elem.get('name')!r}> has value {raw!r}, expected true|false"
            )
        return raw == "true"
    return None  # dicts, tristates etc.: not needed here


def parse_xml(text: str, source: str = "<query output>") -> list[QueryTarget]:
    """Parse `bazel query --output=xml`; non-test rules and source files are skipped."""
    try:
        root = ET.fromstring(text)
    except ET.ParseError as err:
        line, col = err.position
        raise QueryParseError(f"{source}: malformed XML at line {line}, column {col}: {err}") from None
    if root.tag != "query":
        raise QueryParseError(f"{source}: root element is <{root.tag}>, expected <query>")
    targets = []
    for index, elem in enumerate(root):
        if elem.tag != "rule":
            continue
        where = f"{source}: <rule> #{index}"
        label = elem.get("name")
        kind = elem.get("class")
        if not label:
            raise QueryParseError(f"{where}: missing 'name' attribute")
        where = f"{where} ({label})"
        if not kind:
            raise QueryParseError(f"{where}: missing 'class' attribute")
        _check_label(label, where)
        if not kind.endswith("_test"):
            continue
        attrs: dict[str, Any] = {}
        for child in elem:
            name = child.get("name")
            if name is None or child.tag in ("rule-input", "rule-output"):
                continue
            attrs[name] = _xml_value(child, f"{where} attribute '{name}'")
        # XML lists only explicitly set attributes unless --xml:default_values is on.
        targets.append(_build(where, label, kind, attrs, elem.get("location"), None))
    return targets


# ---------------------------------------------------------------- json

def _json_attr(attr: Mapping[str, Any], where: str) -> tuple[str, Any]:
    name = attr.get("name")
    if not isinstance(name, str):
        raise QueryParseError(f"{where}: attribute without a string 'name'")
    kind = attr.get("type", "")
    if kind in ("STRING_LIST", "LABEL_LIST", "OUTPUT_LIST", "DISTRIBUTION_SET"):
        value = attr.get("stringListValue", [])
    elif kind in ("STRING", "LABEL", "OUTPUT"):
        value = attr.get("stringValue", "")
    elif kind == "INTEGER":
        value = attr.get("intValue", 0)
        if isinstance(value, str) and value.lstrip("-").isdigit():
            value = int(value)  # proto3 JSON may quote 64-bit integers
    elif kind == "BOOLEAN":
        value = attr.get("booleanValue", bool(attr.get("intValue", 0)))
    else:
        value = None
    return name, value


def _json_rule(obj: Any, where: str) -> QueryTarget | None:
    if not isinstance(obj, dict):
        raise QueryParseError(f"{where}: expected a JSON object, got {type(obj).__name__}")
    if obj.get("type") != "RULE":
        return None
    rule = obj.get("rule")
    if not isinstance(rule, dict):
        raise QueryParseError(f"{where}: 'rule' must be an object")
    label = rule.get("name")
    kind = rule.get("ruleClass")
    if not isinstance(label, str) or not label:
        raise QueryParseError(f"{where}: rule.name missing or not a string")
    where = f"{where} ({label})"
    if not isinstance(kind, str) or not kind:
        raise QueryParseError(f"{where}: rule.ruleClass missing or not a string")
    _check_label(label, where)
    if not kind.endswith("_test"):
        return None
    raw_attrs = rule.get("attribute", [])
    if not isinstance(raw_attrs, list):
        raise QueryParseError(f"{where}: rule.attribute must be a list")
    attrs: dict[str, Any] = {}
    explicit = []
    for i, attr in enumerate(raw_attrs):
        if not isinstance(attr, dict):
            raise QueryParseError(f"{where}: rule.attribute[{i}] must be an object")
        name, value = _json_attr(attr, f"{where}: rule.attribute[{i}]")
        if value is not None:
            attrs[name] = value
        if attr.get("explicitlySpecified"):
            explicit.append(name)
    location = rule.get("location") if isinstance(rule.get("location"), str) else None
    return _build(where, label, kind, attrs, location, explicit)


def parse_streamed_jsonproto(text: str, source: str = "<query output>") -> list[QueryTarget]:
    """Parse `--output=streamed_jsonproto` (one JSON target per line)."""
    targets = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{source}: line {lineno}"
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as err:
            raise QueryParseError(f"{where}: invalid JSON at column {err.colno}: {err.msg}") from None
        target = _json_rule(obj, where)
        if target is not None:
            targets.append(target)
    return targets


def parse_jsonproto(text: str, source: str = "<query output>") -> list[QueryTarget]:
    """Parse cquery's `--output=jsonproto` ({"results": [{"target": ...}]})."""
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as err:
        raise QueryParseError(
            f"{source}: invalid JSON at line {err.lineno}, column {err.colno}: {err.msg}"
        ) from None
    results = doc.get("results") if isinstance(doc, dict) else None
    if not isinstance(results, list):
        raise QueryParseError(f"{source}: expected an object with a 'results' list")
    targets = []
    for i, item in enumerate(results):
        target_obj = item.get("target") if isinstance(item, dict) else None
        target = _json_rule(target_obj, f"{source}: results[{i}].target")
        if target is not None:
            targets.append(target)
    return targets


def parse(text: str, fmt: str, source: str = "<query output>") -> list[QueryTarget]:
    """Dispatch on the query output format name."""
    if fmt == "xml":
        return parse_xml(text, source)
    if fmt == "streamed_jsonproto":
        return parse_streamed_jsonproto(text, source)
    if fmt == "jsonproto":
        return parse_jsonproto(text, source)
    raise QueryParseError(f"unknown query output format {fmt!r}; expected one of {FORMATS}")


def guess_format(text: str) -> str:
    """Pick the format from the first non-blank character (for --query-output without --format)."""
    stripped = text.lstrip()
    if stripped.startswith("<"):
        return "xml"
    first = stripped.split("\n", 1)[0]
    try:
        obj = json.loads(first)
    except json.JSONDecodeError:
        return "jsonproto"  # a multi-line JSON document
    return "jsonproto" if isinstance(obj, dict) and "results" in obj else "streamed_jsonproto"
