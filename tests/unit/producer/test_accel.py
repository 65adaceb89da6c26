"""The C extension is required (mutepro.producer.accel): it is what ``accel.fastpath`` is, and without it the
import fails with ExtensionMissing naming the fix."""

from __future__ import annotations

import subprocess
import sys

from mutepro.producer import _fastpath, accel


class TestAccel:
    def test_fastpath_is_the_built_extension(self) -> None:
        assert accel.fastpath is _fastpath
        assert hasattr(accel.fastpath, "Counts")

    def test_a_missing_extension_is_an_import_error_naming_the_fix(self) -> None:
        """``from mutepro import MuteProducer`` without ``_fastpath`` (a source install without a compiler):
        ExtensionMissing, a MuteproError and an ImportError, saying to install the wheel or a C compiler."""
        script = (
            "import sys; sys.modules['mutepro.producer._fastpath'] = None\n"
            "try:\n    from mutepro import MuteProducer\nexcept ImportError as e:\n"
            "    from mutepro.errors import ExtensionMissing, MuteproError\n"
            "    assert isinstance(e, ExtensionMissing) and isinstance(e, MuteproError), type(e)\n"
            "    print(e)\n"
        )
        out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True)
        assert "wheel" in out.stdout and "C compiler" in out.stdout, out.stdout + out.stderr
