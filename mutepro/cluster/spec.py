"""What a local cluster looks like: broker count, the broker-to-rack mapping, ports and tuning.

The defaults are three brokers on racks ``rack-a``, ``rack-b`` and ``rack-c`` plus one separate KRaft
controller, so stopping any one broker never costs the controller quorum.
"""

from __future__ import annotations

import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from mutepro.errors import ConfigError

#: Broker node ids are 1..N; the controller gets an id that can never be mistaken for a broker.
CONTROLLER_NODE_ID = 100


def rack_names(count: int) -> list[str]:
    """``rack-a``, ``rack-b``, ... for ``count`` racks (``rack-aa`` style past 26 is not needed here)."""
    if not 1 <= count <= 26:
        raise ConfigError(f"racks: expected between 1 and 26 racks, got {count}")
    return [f"rack-{letter}" for letter in string.ascii_lowercase[:count]]


def resolve_racks(brokers: int, racks: int | Sequence[str] | Mapping[int, str] | None) -> dict[int, str]:
    """Map broker ids 1..``brokers`` to racks.

    - ``None``: one rack per broker up to three (``rack-a``, ``rack-b``, ``rack-c``), then round-robin;
    - an ``int`` n: n racks named ``rack-a``... assigned round-robin (6 brokers on 3 racks: a,b,c,a,b,c);
    - a sequence of names: assigned round-robin in that order;
    - a mapping ``{broker_id: rack}``: exactly as given (it must cover every broker).
    """
    if brokers < 1:
        raise ConfigError(f"brokers: expected at least 1 broker, got {brokers}")
    if racks is None:
        names = rack_names(min(brokers, 3))
    elif isinstance(racks, int):
        names = rack_names(racks)
    elif isinstance(racks, Mapping):
        missing = [b for b in range(1, brokers + 1) if b not in racks]
        extra = [b for b in racks if not 1 <= int(b) <= brokers]
        if missing or extra:
            raise ConfigError(
                f"racks: the mapping must name a rack for every broker id 1..{brokers} and no other; "
                f"missing {missing or 'none'}, unknown {extra or 'none'}"
            )
        return {int(b): str(racks[b]) for b in sorted(racks)}
    else:
        names = [str(r) for r in racks]
        if not names or any(not n.strip() for n in names):
            raise ConfigError("racks: expected a non-empty list of non-empty rack names")
    return {b: names[(b - 1) % len(names)] for b in range(1, brokers + 1)}


@dataclass(frozen=True)
class ClusterSpec:
    """A local KRaft cluster's shape. Ports of ``0`` are chosen free at start."""

    brokers: int = 3
    racks: int | Sequence[str] | Mapping[int, str] | None = None
    host: str = "127.0.0.1"
    broker_ports: Sequence[int] = ()
    controller_port: int = 0
    heap: str = "512m"
    #: Extra ``server.properties`` lines for every broker (string values, Kafka's own keys).
    broker_config: Mapping[str, str] = field(default_factory=dict)
    startup_timeout_s: float = 120.0

    def rack_map(self) -> dict[int, str]:
        """Broker id to rack, validated."""
        return resolve_racks(self.brokers, self.racks)

    def validate(self) -> None:
        """Raise :class:`ConfigError` naming the field for an impossible spec."""
        self.rack_map()
        if self.broker_ports and len(self.broker_ports) != self.brokers:
            raise ConfigError(
                f"broker_ports: expected {self.brokers} ports (one per broker) or none, got {len(self.broker_ports)}"
            )
        if not self.host.startswith("127."):
            raise ConfigError(f"host: the local cluster binds to loopback only (127.0.0.0/8), got {self.host!r}")
        if self.startup_timeout_s <= 0:
            raise ConfigError("startup_timeout_s: expected a positive number of seconds")
