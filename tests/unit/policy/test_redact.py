"""Secrets never show: not in show output, repr/str, error messages or the redacted dict."""

from __future__ import annotations

from pathlib import Path

import pytest

from mutepro.policy import PolicyError, StateConfig, load_policy
from mutepro.policy.redact import is_secret_key, redact_client, redact_url
from tests.unit._policy_helpers import issue_at, write

SECRET = "hunter2-s3cr3t"


class TestRedactUrl:
    @pytest.mark.parametrize(
        ("url", "shown"),
        [
            ("redis://127.0.0.1:6379/0", "redis://127.0.0.1:6379/0"),
            (f"redis://:{SECRET}@h:6379/0", "redis://:***@h:6379/0"),
            (f"rediss://user:{SECRET}@h:6380/1", "rediss://user:***@h:6380/1"),
            (f"redis://{SECRET}@h/0", "redis://:***@h/0"),
        ],
    )
    def test_password_hidden(self, url: str, shown: str) -> None:
        """The password part of a URL becomes ***, the rest stays."""
        assert redact_url(url) == shown


class TestSecretKeys:
    @pytest.mark.parametrize(
        "key",
        [
            "sasl.password",
            "ssl.key.password",
            "ssl.keystore.password",
            "sasl.oauthbearer.client.secret",
            "sasl.oauthbearer.config",
            "ssl.key.pem",
            "sasl.jaas.config",
            "sasl.oauthbearer.token.endpoint.url",
        ],
    )
    def test_credential_settings_are_secret(self, key: str) -> None:
        """Settings that hold credentials are recognised."""
        assert is_secret_key(key)

    def test_ordinary_settings_are_not(self) -> None:
        """bootstrap.servers, sasl.username and the like are shown."""
        assert redact_client({"bootstrap.servers": "h:1", "sasl.username": "u"}) == {
            "bootstrap.servers": "h:1",
            "sasl.username": "u",
        }


class TestNoLeaks:
    def _policy_text(self) -> str:
        return (
            "client:\n"
            "  bootstrap.servers: h:9092\n"
            "  sasl.password: ${KAFKA_PASSWORD}\n"
            "  ssl.key.password: literal-" + SECRET + "\n"
            "state:\n"
            "  backend: redis\n"
            "  url: redis://:${REDIS_PASSWORD}@h:6379/0\n"
        )

    def test_repr_and_redacted_dict(self, tmp_path: Path) -> None:
        """repr(), str() and to_redacted_dict() of a policy hold no secret, while client keeps it for the producer."""
        path = write(tmp_path, self._policy_text())
        policy = load_policy(path, env={"KAFKA_PASSWORD": SECRET, "REDIS_PASSWORD": SECRET})
        assert policy.client["sasl.password"] == SECRET
        assert policy.state.url == f"redis://:{SECRET}@h:6379/0"
        for text in (repr(policy), str(policy), str(policy.to_redacted_dict()), repr(policy.state), str(policy.state)):
            assert SECRET not in text
        assert policy.to_redacted_dict()["client"]["sasl.password"] == "***"
        assert policy.to_redacted_dict()["state"]["url"] == "redis://:***@h:6379/0"

    def test_error_messages(self, tmp_path: Path) -> None:
        """Errors about secret values show *** as what was found."""
        text = (
            "client:\n"
            "  sasl.password: [" + SECRET + "]\n"
            "state:\n"
            "  backend: redis\n"
            "  url: http://user:" + SECRET + "@h/0\n"
            "defaults: {hold: {max_messages: -1}}\n"
        )
        with pytest.raises(PolicyError) as caught:
            load_policy(write(tmp_path, text), env={})
        message = str(caught.value)
        assert 'client."sasl.password"' in message and "state.url" in message
        assert SECRET not in message
        assert all(SECRET not in repr(issue) for issue in caught.value.issues)
        assert issue_at(caught.value.issues, 'client."sasl.password"').found == "***"

    def test_yaml_syntax_error_does_not_quote_the_line(self, tmp_path: Path) -> None:
        """A syntax error on a line holding a password does not echo that line."""
        path = write(tmp_path, f"client:\n  sasl.password: {SECRET}: oops\n")
        with pytest.raises(PolicyError) as caught:
            load_policy(path, env={})
        assert caught.value.issues[0].line == 2
        assert SECRET not in str(caught.value)

    def test_validation_error_from_code_hides_input(self) -> None:
        """Building StateConfig from code with a bad URL does not put the URL in the ValidationError."""
        with pytest.raises(ValueError) as caught:
            StateConfig(backend="redis", url=f"http://u:{SECRET}@h/0")
        assert SECRET not in str(caught.value)
