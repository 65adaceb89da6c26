"""Secrets out of sight: client settings that hold credentials and passwords inside URLs become ``***``.

Used by ``config show``, ``repr()``/``str()`` of policies, every error message and anything a caller logs via
:meth:`Policy.to_redacted_dict`. Matching is by key name, not by value, and deliberately broad: a false
positive hides a harmless setting in ``show`` output, a false negative leaks a password into a CI log.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from mutepro.policy.paths import KeyPath

REDACTED = "***"

#: Substrings of librdkafka (and Java client, for users who paste them) setting names that carry credentials:
#: sasl.password, ssl.key.password, ssl.keystore.password, sasl.oauthbearer.client.secret,
#: sasl.oauthbearer.config (may embed a client secret), ssl.key.pem, sasl.jaas.config, *token*.
SECRET_KEY_PARTS: tuple[str, ...] = (
    "password",
    "secret",
    "token",
    "sasl.oauthbearer.config",
    "ssl.key.pem",
    "jaas",
    "credential",
    "private",
    "api.key",
    "apikey",
)


def is_secret_key(key: str) -> bool:
    """True if a client setting named ``key`` may hold a credential."""
    lowered = key.lower()
    return any(part in lowered for part in SECRET_KEY_PARTS)


def redact_url(url: str) -> str:
    """``redis://user:pw@host:6379/0`` -> ``redis://user:***@host:6379/0``; URLs without a password unchanged.

    A URL that cannot be parsed is redacted whole rather than risk showing a credential inside it.
    """
    try:
        parts = urlsplit(url)
        password = parts.password
    except ValueError:
        return REDACTED
    if password is None and "@" not in parts.netloc:
        return url
    userinfo, _, hostport = parts.netloc.rpartition("@")
    user = userinfo.split(":", 1)[0] if password is not None else ""
    netloc = f"{user}:{REDACTED}@{hostport}"
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


def redact_client(client: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``client`` with every secret setting's value replaced by ``***``."""
    return {key: (REDACTED if is_secret_key(key) else value) for key, value in client.items()}


def is_secret_path(path: KeyPath) -> bool:
    """True if the value at ``path`` in a policy document may be a credential (or contain one)."""
    if len(path) >= 2 and path[0] == "client" and isinstance(path[1], str):
        return is_secret_key(path[1])
    return path[:2] == ("state", "url")


def redact_value(path: KeyPath, value: Any) -> Any:
    """``value`` as safe to show for ``path``: secrets become ``***``, URLs lose their password."""
    if len(path) >= 2 and path[0] == "client" and isinstance(path[1], str) and is_secret_key(path[1]):
        return REDACTED
    if path[:2] == ("state", "url") and isinstance(value, str):
        return redact_url(value)
    if path == ("client",) and isinstance(value, Mapping):
        return redact_client(value)
    if path == ("state",) and isinstance(value, Mapping) and isinstance(value.get("url"), str):
        return {**value, "url": redact_url(value["url"])}
    if path == () and isinstance(value, Mapping):
        return {key: redact_value((key,), item) for key, item in value.items()}
    return value
