"""The sink's exceptions (mutepro.spark.errors): both are mutepro's; an unreadable row identity is also the
ValueError a parser raises, so code catching ValueError around identity parsing keeps working."""

from __future__ import annotations

import pytest

from mutepro.errors import MuteproError
from mutepro.spark.errors import IdentityError, SinkDeliveryError
from mutepro.spark.identity import decode_identity


class TestSinkErrors:
    def test_undelivered_rows_are_a_mutepro_error_not_a_value_error(self) -> None:
        assert issubclass(SinkDeliveryError, MuteproError)
        assert not issubclass(SinkDeliveryError, ValueError)

    def test_an_unreadable_identity_is_a_value_error_too(self) -> None:
        with pytest.raises(ValueError) as caught:
            decode_identity(b"\xff not an identity")
        assert isinstance(caught.value, IdentityError) and isinstance(caught.value, MuteproError)
