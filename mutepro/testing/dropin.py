"""pytest plugin: run a test suite with ``confluent_kafka.Producer`` replaced by :class:`~mutepro.MuteProducer`
(and ``confluent_kafka.SerializingProducer`` by :class:`~mutepro.MuteSerializingProducer`).

    python -m pytest -p mutepro.testing.dropin tests/

Loaded with ``-p``, it swaps the class before any test module is imported, so ``from confluent_kafka import
Producer`` in a test (and any class the tests import that subclasses ``confluent_kafka.Producer`` in Python, such
as ``confluent_kafka.avro.AvroProducer``) gets MuteProducer. MuteProducer's own wrapped producer is the real
C class (``confluent_kafka.cimpl.Producer``), untouched. ``benchmarks/conformance.py`` uses it to run
confluent-kafka-python's own producer tests against MuteProducer; an application can use it the same way on
its own test suite.

``MUTEPRO_DROPIN_PATH=c`` swaps the class (MuteProducer has one path, the C extension's; any other value but
``real`` fails at start-up); ``MUTEPRO_DROPIN_PATH=real`` swaps nothing (the baseline run, with the same plugin
loaded so that both runs are judged alike).

In every mode a ``KeyboardInterrupt`` escaping a test fails that test instead of ending the session: tests that
send themselves SIGINT (confluent's ``test_Wakeable.py``) can, on an unlucky schedule, get it after their
``try`` block, with the real producer as with MuteProducer, and one such test must not hide the rest.
"""

from __future__ import annotations

import os
import sys

import confluent_kafka
import pytest

from mutepro.producer import MuteProducer, MuteSerializingProducer

_ORIGINAL = confluent_kafka.Producer
_ORIGINAL_SERIALIZING = confluent_kafka.SerializingProducer
_LATE = ("confluent_kafka.avro", "confluent_kafka.aio")


def active_path() -> str:
    """``"c"``: the path new MuteProducers run (the C extension's, the only one)."""
    return "c"


def install() -> None:
    """Make ``confluent_kafka.Producer`` MuteProducer (idempotent)."""
    confluent_kafka.Producer = MuteProducer  # type: ignore[misc,assignment]


def uninstall() -> None:
    """Put the real ``confluent_kafka.Producer`` back."""
    confluent_kafka.Producer = _ORIGINAL  # type: ignore[misc]


def install_serializing() -> None:
    """Make ``confluent_kafka.SerializingProducer`` MuteSerializingProducer (idempotent). The real one subclasses
    the C class itself, so swapping ``Producer`` alone never reaches it."""
    confluent_kafka.SerializingProducer = MuteSerializingProducer  # type: ignore[misc,assignment]


def uninstall_serializing() -> None:
    """Put the real ``confluent_kafka.SerializingProducer`` back."""
    confluent_kafka.SerializingProducer = _ORIGINAL_SERIALIZING  # type: ignore[misc]


def _wanted() -> str:
    return os.environ.get("MUTEPRO_DROPIN_PATH", "").strip().lower()


def pytest_configure(config: pytest.Config) -> None:
    wanted = _wanted()
    if wanted == "real":
        return
    if wanted and wanted != active_path():
        raise pytest.UsageError(
            f"MUTEPRO_DROPIN_PATH={wanted}, but MuteProducer runs the {active_path()} path (its only one; "
            "'real' swaps nothing)"
        )
    early = [name for name in _LATE if name in sys.modules]
    if early:
        # their subclasses of Producer were created before the swap and still wrap the real class
        config.issue_config_time_warning(
            pytest.PytestConfigWarning(f"mutepro.testing.dropin: {', '.join(early)} imported before the swap"),
            stacklevel=2,
        )
    install()
    install_serializing()


def pytest_unconfigure(config: pytest.Config) -> None:
    uninstall()
    uninstall_serializing()


def pytest_report_header(config: pytest.Config) -> str:
    if _wanted() == "real":
        return "confluent_kafka.Producer: the real one (mutepro.testing.dropin swaps nothing)"
    return (
        f"confluent_kafka.Producer -> mutepro.MuteProducer, SerializingProducer -> mutepro.MuteSerializingProducer "
        f"({active_path()} path)"
    )


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> object:
    try:
        return (yield)
    except KeyboardInterrupt as err:
        raise pytest.fail.Exception("KeyboardInterrupt escaped the test (stray SIGINT?)", pytrace=False) from err
