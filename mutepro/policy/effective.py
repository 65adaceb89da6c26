"""The loaded policy: validated settings plus effective per-topic policies, resolved once and cached.

A :class:`Policy` only exists once everything validated, so nothing here raises on lookup: ``for_topic`` of a
topic no entry names returns ``defaults``. ``client`` hands out a new dict on every access, because
``confluent_kafka.Producer(conf)`` and callers may mutate the dict they were given.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from mutepro.policy.paths import KeyPath
from mutepro.policy.redact import REDACTED, redact_client, redact_url
from mutepro.policy.schema import LoggingConfig, MetricsConfig, PolicyDocument, StateConfig, TopicPolicy
from mutepro.policy.topics import TopicRule, build_rules, select_rule


class Policy:
    """An effective mutepro policy (build it with :func:`mutepro.policy.load_policy`)."""

    __slots__ = ("_cache", "_document", "_from_env", "_rules", "_sources", "_topics")

    def __init__(
        self,
        document: PolicyDocument,
        topics: Mapping[str, TopicPolicy],
        sources: tuple[str, ...] = (),
        from_env: frozenset[KeyPath] = frozenset(),
    ) -> None:
        self._document = document
        # Paths whose value came (partly) from ${...}: strings there may be secrets, hidden when shown.
        self._from_env = from_env
        self._topics: Mapping[str, TopicPolicy] = MappingProxyType(dict(topics))
        self._rules: list[TopicRule] = build_rules(list(topics))
        self._sources = sources
        # Topic name -> effective policy. Filled lazily; a racing double fill stores equal values, so no lock.
        self._cache: dict[str, TopicPolicy] = {}

    @property
    def version(self) -> int:
        return self._document.version

    @property
    def client(self) -> dict[str, Any]:
        """The librdkafka settings, a new dict on each access (mutating it never changes the policy)."""
        return dict(self._document.client)

    @property
    def defaults(self) -> TopicPolicy:
        return self._document.defaults

    @property
    def topics(self) -> Mapping[str, TopicPolicy]:
        """Each ``topics:`` key (name or pattern, file order) -> its effective policy."""
        return self._topics

    @property
    def state(self) -> StateConfig:
        return self._document.state

    @property
    def logging(self) -> LoggingConfig:
        return self._document.logging

    @property
    def logging_written(self) -> bool:
        """True if a source wrote a ``logging:`` section (rather than the schema filling in its defaults)."""
        return "logging" in self._document.model_fields_set

    @property
    def metrics(self) -> MetricsConfig:
        return self._document.metrics

    @property
    def sources(self) -> tuple[str, ...]:
        """The files (or ``<mapping N>``) this policy was merged from, in order."""
        return self._sources

    def rule_for(self, topic: str) -> str | None:
        """The ``topics:`` key that applies to ``topic`` (exact name, else first matching pattern), if any."""
        rule = select_rule(self._rules, topic)
        return rule.key if rule is not None else None

    def for_topic(self, topic: str) -> TopicPolicy:
        """The effective policy for ``topic``: its ``topics:`` entry over ``defaults``, or ``defaults``."""
        cached = self._cache.get(topic)
        if cached is None:
            key = self.rule_for(topic)
            cached = self._topics[key] if key is not None else self.defaults
            self._cache[topic] = cached
        return cached

    def to_redacted_dict(self) -> dict[str, Any]:
        """The effective policy as plain data, safe to print or log: secrets are ``***``.

        Also ``***``: any string that came from an environment variable (``client.id: ${SECRET}`` is a secret
        in a non-secret field as far as anyone can tell). Numbers and booleans from ``${...}`` stay visible:
        seeing the effective ``threshold_ms`` per environment is what ``show`` is for.
        """
        state = self.state.model_dump(mode="json")
        if isinstance(state.get("url"), str):
            state["url"] = redact_url(state["url"])
        data = {
            "version": self.version,
            "client": redact_client(self._document.client),
            "defaults": self.defaults.model_dump(mode="json"),
            "topics": {key: self._redacted_topic(key, policy) for key, policy in self._topics.items()},
            "state": state,
            "logging": self.logging.model_dump(mode="json"),
            "metrics": self.metrics.model_dump(mode="json"),
        }
        for path in self._from_env:
            # state.url has its own rule (the password goes, host and db stay): redact_url above.
            if path[:1] != ("topics",) and path != ("state", "url"):
                _hide_string(data, path)
        return data

    def redacted_topic(self, topic: str) -> dict[str, Any]:
        """The effective policy of ``topic`` as plain data, strings from the environment hidden."""
        key = self.rule_for(topic)
        return self._redacted_topic(key, self.for_topic(topic))

    def _redacted_topic(self, key: str | None, policy: TopicPolicy) -> dict[str, Any]:
        data = policy.model_dump(mode="json")
        for path in self._from_env:
            # Written under this entry, or inherited from defaults (hidden either way: safe side).
            if key is not None and path[:2] == ("topics", key):
                _hide_string(data, path[2:])
            elif path[:1] == ("defaults",):
                _hide_string(data, path[1:])
        return data

    def __repr__(self) -> str:
        return (
            f"Policy(sources={list(self._sources)!r}, client={redact_client(self._document.client)!r}, "
            f"topics={list(self._topics)!r}, state={self.state!r})"
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Policy):
            return NotImplemented
        return self._document == other._document and dict(self._topics) == dict(other._topics)

    def __hash__(self) -> int:
        return hash((self._document.model_dump_json(), tuple(self._topics)))


def _hide_string(data: Any, path: KeyPath) -> None:
    """Replace the string at ``path`` in nested ``data`` by ``***`` (other values and missing paths: no-op)."""
    for part in path[:-1]:
        if not isinstance(data, dict | list):
            return
        try:
            data = data[part]  # type: ignore[index]
        except (KeyError, IndexError, TypeError):
            return
    if not path:
        return
    last = path[-1]
    if isinstance(data, dict):
        if isinstance(data.get(last), str):
            data[last] = REDACTED
    elif isinstance(data, list) and isinstance(last, int) and 0 <= last < len(data) and isinstance(data[last], str):
        data[last] = REDACTED
