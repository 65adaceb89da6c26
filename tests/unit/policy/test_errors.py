"""Policy problems, all reported together (mutepro.policy.errors)."""

from __future__ import annotations

from mutepro.errors import ConfigError, MuteproError
from mutepro.policy.errors import PolicyError, PolicyIssue


def _issue(
    file: str | None, line: int | None, column: int | None, path: str = "topics.orders.keyed_policy"
) -> PolicyIssue:
    return PolicyIssue(file, line, column, path, "one of reroute, hold, fail, ignore", "'drop'", "unknown policy")


class TestPolicyIssue:
    def test_location_as_far_as_known(self) -> None:
        assert _issue("p.yaml", 12, 5).location == "p.yaml:12:5"
        assert _issue("p.yaml", 12, None).location == "p.yaml:12"
        assert _issue(None, None, 5).location == "<policy>"

    def test_shown_with_where_what_expected_and_found(self) -> None:
        assert str(_issue("p.yaml", 3, 1)) == (
            "p.yaml:3:1: topics.orders.keyed_policy: unknown policy "
            "(expected one of reroute, hold, fail, ignore, found 'drop')"
        )
        assert str(_issue(None, None, None, path="")).startswith("<policy>: unknown policy")


class TestPolicyError:
    def test_every_issue_in_one_error_under_the_root(self) -> None:
        err = PolicyError([_issue("p.yaml", 1, 1), _issue("p.yaml", 2, 1)])
        assert isinstance(err, ConfigError) and isinstance(err, MuteproError)
        assert len(err.issues) == 2
        assert str(err).splitlines()[0] == "invalid mutepro policy: 2 problems"
        assert str(PolicyError([_issue("p.yaml", 1, 1)])).splitlines()[0] == "invalid mutepro policy: 1 problem"
