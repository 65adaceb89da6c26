"""The loaded policy: validated settings plus effective per-topic policies, resolved once and cached.

A :class:`Policy` only exists once everything validated, so nothing here raises on lookup: ``for_topic`` of a
topic no entry names returns ``defaults``. ``client`` hands out a new dict on every access, because
``confluent_kafka.Producer(conf)`` and callers may mutate the dict they were given.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from mutepro.policy.redact import redact_client, redact_url
from mutepro.policy.schema import LoggingConfig, MetricsConfig, PolicyDocument, StateConfig, TopicPolicy
from mutepro.policy.topics import TopicRule, build_rules, select_rule


class Policy:
    """An effective mutepro policy (build it with :func:`mutepro.policy.load_policy`)."""

    __slots__ = ("_cache", "_document", "_rules", "_sources", "_topics")

    def __init__(
        self, document: PolicyDocument, topics: Mapping[str, TopicPolicy], sources: tuple[str, ...] = ()
    ) -> None:
        self._document = document
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
        """The effective policy as plain data, safe to print or log: secrets are ``***``."""
        state = self.state.model_dump(mode="json")
        if isinstance(state.get("url"), str):
            state["url"] = redact_url(state["url"])
        return {
            "version": self.version,
            "client": redact_client(self._document.client),
            "defaults": self.defaults.model_dump(mode="json"),
            "topics": {key: policy.model_dump(mode="json") for key, policy in self._topics.items()},
            "state": state,
            "logging": self.logging.model_dump(mode="json"),
            "metrics": self.metrics.model_dump(mode="json"),
        }

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
