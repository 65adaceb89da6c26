"""Secrets out of sight: client settings that hold credentials and passwords inside URLs become ``***``.

Used by ``config show``, ``repr()``/``str()`` of policies, every error message and anything a caller logs via
:meth:`Policy.to_redacted_dict`. Matching is by key name, not by value, and deliberately broad: a false
positive hides a harmless setting in ``show`` output, a false negative leaks a password into a CI log.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

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
    """True if a client setting named ``key`` may hold a credential.

    Also true for a key librdkafka does not know (``sasl.pasword``): a misspelt secret is still a secret.
    """
    from mutepro.policy.client_keys import is_known_client_key  # a data module; imported late, it is large

    lowered = key.lower()
    return any(part in lowered for part in SECRET_KEY_PARTS) or not is_known_client_key(key)


#: Query parameters of a Redis URL that carry a credential (redis-py reads ``password`` from the query too).
_SECRET_QUERY = ("password", "pass", "pwd", "secret", "token")


def redact_url(url: str) -> str:
    """``redis://user:pw@host:6379/0`` -> ``redis://user:***@host:6379/0``; URLs without a password unchanged.

    Also hidden: a ``?password=`` query parameter, and everything before the ``@`` of a text that does not
    parse as a URL with a network location (``:pw@host:6379`` written without ``redis://``). A URL that
    cannot be parsed at all is redacted whole rather than risk showing a credential inside it.
    """
    try:
        parts = urlsplit(url)
        password = parts.password
    except ValueError:
        return REDACTED
    query = parts.query
    if query and any(name.lower() in _SECRET_QUERY for name, _ in parse_qsl(query, keep_blank_values=True)):
        pairs = parse_qsl(query, keep_blank_values=True)
        query = urlencode([(n, REDACTED if n.lower() in _SECRET_QUERY else v) for n, v in pairs], safe="*")
    if not parts.netloc:
        if "@" in url:  # scheme-less or mangled: the userinfo is whatever precedes the last @
            return REDACTED + "@" + url.rpartition("@")[2]
        # unix:///path?password=...: urlunsplit would drop the empty authority's //, so edit the text.
        return url.replace("?" + parts.query, "?" + query, 1) if query != parts.query else url
    if password is None and "@" not in parts.netloc:
        return urlunsplit((parts.scheme, parts.netloc, parts.path, query, parts.fragment))
    userinfo, _, hostport = parts.netloc.rpartition("@")
    user = userinfo.split(":", 1)[0] if password is not None else ""
    netloc = f"{user}:{REDACTED}@{hostport}"
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


_URL_IN_TEXT = re.compile(r"(?:rediss?|unix)://[^\s'\"]+")


def redact_text(text: str, secrets: tuple[str, ...] = ()) -> str:
    """``text`` with every Redis URL's password and each of ``secrets`` replaced by ``***`` (for log lines and
    error messages that quote a URL or a driver's exception text)."""
    text = _URL_IN_TEXT.sub(lambda match: redact_url(match.group(0)), text)
    for secret in secrets:
        if secret:
            text = text.replace(secret, REDACTED)
    return text


def redact_client(client: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``client`` with every secret setting's value replaced by ``***``."""
    return {key: (REDACTED if is_secret_key(key) else value) for key, value in client.items()}


def redact_value(path: KeyPath, value: Any) -> Any:
    """``value`` as safe to show for ``path``: secrets become ``***``, URLs lose their password."""
    if len(path) >= 2 and path[0] == "client" and isinstance(path[1], str) and is_secret_key(path[1]):
        return REDACTED
    if path[:2] == ("state", "url") and isinstance(value, str):
        return redact_url(value)
    if path == ("client",):
        # A mapping loses its secret values; anything else (client: "sasl.password=...") is shown as ***.
        return redact_client(value) if isinstance(value, Mapping) else REDACTED
    if path == ("state",):
        if isinstance(value, Mapping):
            return {**value, "url": redact_url(value["url"])} if isinstance(value.get("url"), str) else value
        return redact_url(value) if isinstance(value, str) else value
    if path == () and isinstance(value, Mapping):
        return {key: redact_value((key,), item) for key, item in value.items()}
    return value
