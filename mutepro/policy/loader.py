"""``load_policy``: read, merge, interpolate and validate policy sources; every problem raised at once.

Order of work, and why:
1. read each source (YAML files via ``yaml.compose`` to keep lines; mappings as given);
2. merge them in order (base, then overlays);
3. interpolate ``${...}`` in the merged data, so a variable only the base mentions and an overlay replaces is
   not required (a dev overlay need not set the production password);
4. validate the document, then each ``topics:`` entry merged over ``defaults`` (an override can only be judged
   together with what it inherits: ``minimum_calls: 150`` is fine with a 200-call window, not with 100);
5. check thresholds against the librdkafka settings in ``client:``.
Issues from all steps are collected and raised together as one :class:`PolicyError`.

Top-level keys starting with ``x-`` are ignored, as in docker-compose, so files can hold YAML anchors
(``x-strict: &strict {...}``) to reuse in several topics.
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from mutepro.policy.checks import check_topic_policy, client_limits
from mutepro.policy.client_keys import is_known_client_key, suggest_client_key
from mutepro.policy.effective import Policy
from mutepro.policy.errors import PolicyError, PolicyIssue
from mutepro.policy.interpolate import interpolate
from mutepro.policy.merge import deep_merge, merge_sources
from mutepro.policy.paths import KeyPath, get_path
from mutepro.policy.redact import redact_text
from mutepro.policy.schema import PolicyDocument, TopicPolicy
from mutepro.policy.source import Source, from_mapping, read_file
from mutepro.policy.topics import compile_rule, rule_kind
from mutepro.policy.translate import Translated, translate

PolicySource = str | os.PathLike[str] | Mapping[str, Any]

#: Kafka's legal topic characters and length (``Topic.validate``): anything else can only be a pattern.
_TOPIC_NAME = re.compile(r"^[a-zA-Z0-9._-]{1,249}$")
_NAMES = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)")


def load_policy(*sources: PolicySource, env: Mapping[str, str] | None = None) -> Policy:
    """Load a policy from YAML files and/or mappings, merged in order; ``env`` defaults to ``os.environ``.

    Raises :class:`PolicyError` listing every problem (file, line, key path, expected, found).
    """
    environment: Mapping[str, str] = os.environ if env is None else env
    issues: list[PolicyIssue] = []
    loaded: list[Source] = []
    if not sources:
        issues.append(
            PolicyIssue(None, None, None, "", "at least one file or mapping", "none", "no policy sources given")
        )
    for index, item in enumerate(sources, start=1):
        if isinstance(item, Mapping):
            loaded.append(from_mapping(item, f"<mapping {index}>"))
        elif isinstance(item, str | os.PathLike):
            source, read_issues = read_file(item)
            issues.extend(read_issues)
            if source is not None:
                loaded.append(source)
        else:
            issues.append(
                PolicyIssue(
                    None,
                    None,
                    None,
                    "",
                    "a file path or a mapping",
                    type(item).__name__,
                    f"policy source {index} is neither a path nor a mapping",
                )
            )
    merged, interpolation_issues = interpolate(merge_sources(loaded), environment)
    issues.extend(interpolation_issues)
    document, topics, validation_issues = validate(merged)
    issues.extend(validation_issues)
    if issues or document is None:
        raise PolicyError(_scrubbed(_ordered(issues, [s.name for s in loaded]), merged, environment))
    return Policy(document, topics, tuple(s.name for s in loaded), frozenset(merged.from_env))


def _scrubbed(issues: list[PolicyIssue], merged: Source, env: Mapping[str, str]) -> list[PolicyIssue]:
    """Belt and braces: no environment value that went into the policy appears in any issue's text.

    Issues already quote ``${NAME}`` as written for the paths they name; this also covers a value that
    reached a message some other way (a topic inheriting it, a cross-field check).
    """
    names = {name for text in merged.from_env.values() for name in _NAMES.findall(text)}
    # Values of 4 characters or more: scrubbing "1" or "on" would garble messages and hides nothing.
    values = sorted({env[n] for n in names if len(env.get(n) or "") >= 4}, key=len, reverse=True)
    if not values:
        return issues
    return [
        dataclasses.replace(issue, found=redact_text(issue.found, tuple(values)), message=redact_text(
            issue.message, tuple(values)))
        for issue in issues
    ]


def validate(source: Source) -> tuple[PolicyDocument | None, dict[str, TopicPolicy], list[PolicyIssue]]:
    """Validate merged, interpolated ``source``: the document, every topic entry, the client cross-checks."""
    data = {k: v for k, v in source.data.items() if not k.startswith("x-")}
    issues: list[Translated] = []
    document: PolicyDocument | None = None
    try:
        document = PolicyDocument.model_validate(data)
    except ValidationError as err:
        issues.extend(translate(err.errors(), model=PolicyDocument, data=data, source=source))

    # Errors already reported under defaults must not repeat once per topic that merely inherits them.
    inherited = {(t.relative[1:], t.kind) for t in issues if t.relative[:1] == ("defaults",)}
    defaults_raw = _section(data, "defaults")
    topics_raw = _section(data, "topics")
    client_raw = _section(data, "client")
    limits, limit_issues = client_limits(client_raw, source)
    issues.extend(limit_issues)
    issues.extend(_check_client_keys(client_raw, source))

    topics: dict[str, TopicPolicy] = {}
    defaults: TopicPolicy | None = document.defaults if document is not None else None
    if defaults is None and not any(t.relative[:1] == ("defaults",) for t in issues):
        # The document failed elsewhere (state, say); the defaults are valid and still worth cross-checking.
        defaults = TopicPolicy.model_validate(defaults_raw)
    if defaults is not None:
        for found in check_topic_policy(defaults, limits, source, ("defaults",)):
            inherited.add((found.relative, found.kind))
            issues.append(found)
    for key, override in topics_raw.items():
        prefix: KeyPath = ("topics", key)
        key_issue = _check_topic_key(key, source, prefix)
        if key_issue is not None:
            issues.append(key_issue)
        if not isinstance(override, dict):
            continue  # already reported by the document validation (expected a mapping)
        merged = deep_merge(defaults_raw, override)
        try:
            policy = TopicPolicy.model_validate(merged)
        except ValidationError as err:
            errors = translate(err.errors(), model=TopicPolicy, data=merged, source=source, prefix=prefix)
            issues.extend(t for t in errors if not _inherited(t, override, inherited))
            continue
        topics[key] = policy
        checked = check_topic_policy(policy, limits, source, prefix)
        issues.extend(t for t in checked if not _inherited(t, override, inherited))
    return document, topics, [t.issue for t in issues]


def _section(data: dict[str, Any], name: str) -> dict[str, Any]:
    # A section of the wrong type was reported by the document validation; treat it as empty from here on.
    value = data.get(name)
    return value if isinstance(value, dict) else {}


def _inherited(found: Translated, override: dict[str, Any], inherited: set[tuple[KeyPath, str]]) -> bool:
    # A topic entry that did not set the offending key repeats the defaults' error: report it once, there.
    written, _ = get_path(override, found.relative)
    return not written and (found.relative, found.kind) in inherited


def _check_client_keys(client: Mapping[str, Any], source: Source) -> list[Translated]:
    """Keys librdkafka does not know (a typo like ``sasl.pasword``), with the closest known name."""
    if "plugin.library.paths" in client:
        return []  # a librdkafka plugin may define its own settings: leave them to Producer() to judge
    found: list[Translated] = []
    for key in client:
        if is_known_client_key(key):
            continue
        path: KeyPath = ("client", key)
        close = suggest_client_key(key)
        hint = f"; did you mean {close!r}?" if close else " (see librdkafka's CONFIGURATION.md)"
        found.append(
            Translated(
                path,
                "client_key",
                # found names the key only: the value of a misspelt secret key is a secret.
                source.issue(
                    path,
                    expected="a librdkafka configuration property",
                    found=f"the key {key!r}",
                    message=f"unknown librdkafka setting {key!r}{hint}",
                ),
            )
        )
    return found


def _check_topic_key(key: str, source: Source, prefix: KeyPath) -> Translated | None:
    kind = rule_kind(key)
    if kind == "regex":
        try:
            compile_rule(key)
        except re.error as err:
            return Translated(
                prefix,
                "topic_regex",
                source.issue(
                    prefix,
                    expected="a valid regular expression after re:",
                    found=repr(key),
                    message=f"invalid topic pattern: {err}",
                ),
            )
    elif kind == "exact" and not _TOPIC_NAME.match(key):
        return Translated(
            prefix,
            "topic_name",
            source.issue(
                prefix,
                expected="a topic name ([a-zA-Z0-9._-], at most 249), a glob (metrics.*) or re:<regex>",
                found=repr(key),
                message="not a valid topic name or pattern",
            ),
        )
    return None


def _ordered(issues: list[PolicyIssue], files: list[str]) -> list[PolicyIssue]:
    rank = {name: index for index, name in enumerate(files)}
    unique = list(dict.fromkeys(issues))
    return sorted(unique, key=lambda i: (rank.get(i.file or "", -1), i.line or 0, i.column or 0))
