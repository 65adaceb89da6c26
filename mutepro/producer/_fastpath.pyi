"""Type stubs for the C fast path (mutepro/producer/_fastpath.c)."""

from collections.abc import Callable, Iterator
from typing import Any

KP_NONE: int
KP_CONSISTENT: int
KP_CONSISTENT_RANDOM: int
KP_MURMUR2: int
KP_MURMUR2_RANDOM: int
KP_FNV1A: int
KP_FNV1A_RANDOM: int

def key_partition(mode: int, key: Any, partition_count: int, /) -> int: ...
def retrack(msg: Any, /) -> None: ...
def crc32(data: bytes | bytearray | memoryview, /) -> int: ...
def murmur2(data: bytes | bytearray | memoryview, /) -> int: ...
def fnv1a(data: bytes | bytearray | memoryview, /) -> int: ...
def row_id(prefix: bytes, n: int, /) -> bytes: ...

class Column:
    def __len__(self) -> int: ...
    def __getitem__(self, index: int) -> int: ...
    def __setitem__(self, index: int, value: int) -> None: ...
    def __iter__(self) -> Iterator[int]: ...

class Tally:
    count: int
    slow_s: float
    sent: Column
    sent_bytes: Column
    reported: Column
    ok: Column
    slow: Column
    failed: Column
    warm: Column
    stick: int | None
    probe_snap: Any
    probe_until: float
    def __init__(self, count: int, slow_s: float) -> None: ...
    def grow(self, count: int) -> None: ...
    def busy(self) -> list[int]: ...
    def defer_probes(self, snap: Any, seconds: float, /) -> None: ...
    def choose_sticky(
        self, snap: Any, size: int, now: float, sticky_bytes: int, linger_s: float,
        pick: Callable[[Any], int | None], /,
    ) -> int | None: ...

class Counts:
    sent_total: int
    reported_total: int
    produced: int
    delivered: int
    buffer_errors: int
    rerouted: int

class Reporter:
    def __call__(self, err: Any, msg: Any, /) -> None: ...

class FastPath:
    gate: int
    closed: int
    broken: int
    slow_poll: Callable[..., int] | None
    poll_error: Callable[[BaseException], Any] | None
    slow_flush: Callable[..., int] | None
    pending: Callable[[], int] | None
    resends: Any
    inner_flush: Callable[..., int] | None
    since_app_poll: int
    rescue_pending: int
    @property
    def inline_pollers(self) -> int: ...
    @property
    def app_pollers(self) -> int: ...
    @property
    def inline_polls(self) -> int: ...
    @property
    def direct_reports(self) -> int: ...
    @property
    def fallbacks(self) -> int: ...
    @property
    def app_polls(self) -> int: ...
    @property
    def counts(self) -> Counts: ...
    def __init__(
        self,
        *,
        inner_produce: Callable[..., Any],
        inner_poll: Callable[..., Any],
        snapshots: dict[str, Any],
        tallies: dict[str, Any],
        holds: dict[Any, Any],
        slow_produce: Callable[..., Any],
        on_report: Callable[[Any, int, Any, Any], None],
        queue: Any,
        picker: Callable[[Any], int | None] | None,
        default_cb: Callable[[Any, Any], None] | None,
        counts: Counts,
        key_mode: int,
        only_errors: int,
        sticky_bytes: int,
        linger_s: float,
        inline_poll_every: int,
        queue_max_messages: int,
        reroutes: dict[tuple[str, int], dict[int, int]] = ...,
    ) -> None: ...
    def produce(
        self,
        topic: str,
        value: Any = None,
        key: Any = None,
        partition: int = -1,
        on_delivery: Callable[[Any, Any], None] | None = None,
        timestamp: int = 0,
        headers: Any = None,
        *,
        callback: Callable[[Any, Any], None] | None = None,
    ) -> None: ...
    def produce_rows(
        self, topic: str, values: list[Any], keys: list[Any] | None, fixed: tuple[str, Any] | None, name: str,
        prefix: str | bytes, first: int, begin: int, /,
    ) -> int: ...
    def send(
        self, topic: str, value: Any, key: Any, partition: int, cb: Callable[[Any, Any], None] | None, timestamp: int,
        headers: Any, kind: int, /,
    ) -> None: ...
    def count_reroute(self, topic: str, home: int, target: int, /) -> None: ...
    purge_sink: list[tuple[float | None, Any, int, Any]] | None
    def forget_reporters(self) -> None: ...
    def enter_direct(self) -> int | None: ...
    def leave_direct(self, token: int, /) -> None: ...
    def polling(self) -> int: ...
    def check_queue(self) -> None: ...
    def served_event(self) -> None: ...
    def serve_for(self, timeout: float | None, serve: Callable[[float], int], /) -> int: ...
    def poll(self, timeout: float | None = -1) -> int: ...
