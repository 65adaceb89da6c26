"""A real Apache Kafka cluster in KRaft mode on 127.0.0.1, one rack per broker, for tests, demos and benchmarks.

``LocalCluster`` writes one ``server.properties`` per node into a run directory, formats the storage, starts a
separate KRaft controller and N brokers as JVMs, and waits until an admin client sees every broker with its
rack. Faults (:mod:`mutepro.cluster.faults`) act on the real processes.

Two ownership modes:

- **owned** (default; tests, benchmarks, ``with LocalCluster() as c``): the JVMs die with this Python process,
  even on SIGKILL (``PR_SET_PDEATHSIG``), and are stopped on exit, SIGINT and SIGTERM.
- **detached** (``mutepro cluster up``): the JVMs outlive the command; a ``state.json`` in the run directory
  lets ``status``, the faults and ``down`` find them again.
"""

from __future__ import annotations

import atexit
import base64
import contextlib
import json
import os
import re
import shutil
import signal
import socket
import tempfile
import threading
import time
import uuid
import weakref
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any

from mutepro.cluster.jars import KafkaDistribution, require_java, resolve_kafka
from mutepro.cluster.process import NodeProcess
from mutepro.cluster.spec import CONTROLLER_NODE_ID, ClusterSpec
from mutepro.errors import ClusterError, MuteproError
from mutepro.logs import get_logger

log = get_logger("mutepro.cluster")

_DEFAULT_JVM_OPTS = (
    # Fast start on a small machine: C1 only, serial GC, class-data sharing. Four JVMs on two cores start in
    # about a third of the time they take with the default tiered compiler and G1.
    "-XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Xshare:auto -XX:-OmitStackTraceInFastThrow "
    "-Djava.awt.headless=true"
)
_STATE_FILE = "state.json"
#: Written into every run directory mutepro creates; only a directory holding it is ever deleted by ``up``.
RUN_DIR_MARKER = ".mutepro-run-dir"
#: What ``--name`` may be: a plain name, never a path (``..``, ``/etc``, ``a/b``) that would point ``up``'s
#: clean-up at someone else's directory.
_CLUSTER_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


def validate_cluster_name(name: str) -> str:
    """``name`` if it is a plain cluster name; :class:`ClusterError` naming the rule otherwise."""
    if not isinstance(name, str) or not _CLUSTER_NAME.match(name) or name in (".", ".."):
        raise ClusterError(
            f"--name: {name!r} is not a cluster name; use letters, digits, '.', '_' or '-' (at most 64, starting "
            "with a letter or digit), e.g. --name staging. It names a directory under the run root "
            "(MUTEPRO_RUN_DIR), it is never a path"
        )
    return name


def _created_by_mutepro(run_dir: Path) -> bool:
    """True if ``run_dir`` holds mutepro's marker (or, from before the marker existed, only what ``up`` writes:
    state.json, controller/ and broker-N/)."""
    if (run_dir / RUN_DIR_MARKER).is_file():
        return True
    try:
        entries = {entry.name for entry in run_dir.iterdir()}
    except OSError:
        return False
    return _STATE_FILE in entries and all(
        name in (_STATE_FILE, "controller") or re.fullmatch(r"broker-\d+", name) for name in entries
    )
_LOG4J2 = Path(__file__).with_name("resources") / "log4j2.properties"


def default_run_root() -> Path:
    """Where detached clusters keep their run directories (``$MUTEPRO_RUN_DIR`` overrides)."""
    explicit = os.environ.get("MUTEPRO_RUN_DIR")
    if explicit:
        return Path(explicit).expanduser()
    from mutepro.cluster.jars import cache_root

    return cache_root() / "clusters"


@dataclass(frozen=True)
class BrokerInfo:
    """A broker as the cluster describes it."""

    node_id: int
    host: str
    port: int
    rack: str | None


class LocalCluster:
    """A multi-broker KRaft cluster made of real Kafka JVMs on loopback.

    >>> with LocalCluster(ClusterSpec(brokers=3)) as cluster:      # doctest: +SKIP
    ...     producer = Producer({"bootstrap.servers": cluster.bootstrap_servers})
    ...     with cluster.stalled(2):
    ...         ...
    """

    def __init__(
        self,
        spec: ClusterSpec | None = None,
        *,
        run_dir: str | os.PathLike[str] | None = None,
        distribution: KafkaDistribution | None = None,
        detached: bool = False,
        name: str = "default",
    ) -> None:
        self.spec = spec or ClusterSpec()
        self.spec.validate()
        self.name = validate_cluster_name(name) if run_dir is None and detached else name
        self.detached = detached
        self._own_run_dir = run_dir is None and not detached
        if run_dir is not None:
            self.run_dir = Path(run_dir).expanduser()
        elif detached:
            self.run_dir = default_run_root() / name
        else:
            self.run_dir = Path(tempfile.mkdtemp(prefix="mutepro-kafka-"))
        self._distribution = distribution
        self.cluster_id = ""
        self.controller: NodeProcess | None = None
        self.brokers: dict[int, NodeProcess] = {}
        self._started = False
        self._lock = threading.RLock()
        self._limpers: list[Any] = []

    # -- public properties ---------------------------------------------------------------------------------

    @property
    def bootstrap_servers(self) -> str:
        """``host:port,...`` of every broker, for ``bootstrap.servers``."""
        return ",".join(f"{self.spec.host}:{b.port}" for b in self.brokers.values())

    @property
    def racks(self) -> dict[int, str]:
        """Broker id to rack."""
        return {b.node_id: b.rack or "" for b in self.brokers.values()}

    @property
    def distribution(self) -> KafkaDistribution:
        if self._distribution is None:
            self._distribution = resolve_kafka()
        return self._distribution

    @property
    def state_file(self) -> Path:
        return self.run_dir / _STATE_FILE

    def client_config(self, **overrides: Any) -> dict[str, Any]:
        """A confluent-kafka config dict pointing at this cluster."""
        return {"bootstrap.servers": self.bootstrap_servers, **overrides}

    def node(self, node_id: int | str) -> NodeProcess:
        """A broker by id, or the controller (``"controller"`` or its id)."""
        if node_id in ("controller", CONTROLLER_NODE_ID, str(CONTROLLER_NODE_ID)):
            if self.controller is None:
                raise ClusterError("the cluster has no controller (was it started?)")
            return self.controller
        try:
            return self.brokers[int(node_id)]
        except (KeyError, ValueError) as err:
            known = ", ".join(str(b) for b in self.brokers) or "none"
            raise ClusterError(f"no broker with id {node_id!r}; brokers are {known} (or 'controller')") from err

    # -- start / stop --------------------------------------------------------------------------------------

    def start(self) -> LocalCluster:
        """Start the controller and brokers and wait until every broker is registered with its rack."""
        with self._lock:
            if self._started:
                return self
            t0 = time.monotonic()
            self._check_run_dir_is_ours()
            java = require_java()
            dist = self.distribution
            if self.detached and self.state_file.exists():
                existing = LocalCluster.attach(self.run_dir)
                if any(n.is_running() for n in existing.nodes()):
                    raise ClusterError(
                        f"a cluster is already running from {self.run_dir} "
                        f"(bootstrap {existing.bootstrap_servers}); run `mutepro cluster down` first "
                        "or pick another --name"
                    )
            if self.detached and self.run_dir.exists() and any(self.run_dir.iterdir()):
                shutil.rmtree(self.run_dir)  # checked above: ours
            self.run_dir.mkdir(parents=True, exist_ok=True)
            (self.run_dir / RUN_DIR_MARKER).write_text(
                "Created by mutepro (a local Kafka cluster's run directory); mutepro may delete it.\n"
            )
            self._plan_nodes()
            self._write_configs()
            try:
                self._format_storage(java, dist)
                env = self._jvm_env()
                command = self._command(java, dist)
                assert self.controller is not None
                for node in self.nodes():
                    node.spawn([*command, str(node.properties_file)], detached=self.detached, env=env)
                self._started = True
                if not self.detached:
                    _register_owned(self)
                self._write_state()
                self.wait_ready(self.spec.startup_timeout_s)
            except BaseException:
                self.stop()
                raise
            log.info(
                "cluster_ready",
                bootstrap=self.bootstrap_servers,
                racks=self.racks,
                kafka=dist.version,
                seconds=round(time.monotonic() - t0, 1),
                run_dir=str(self.run_dir),
            )
            return self

    def _check_run_dir_is_ours(self) -> None:
        # Never delete what mutepro did not create: a run directory carries the marker; anything else (a path
        # once given as --name, a user's directory under MUTEPRO_RUN_DIR) is refused before any work.
        if not self.detached or not self.run_dir.exists():
            return
        if not self.run_dir.is_dir():
            raise ClusterError(f"{self.run_dir} exists and is not a directory; pick another --name")
        if any(self.run_dir.iterdir()) and not _created_by_mutepro(self.run_dir):
            raise ClusterError(
                f"{self.run_dir} exists and was not created by mutepro (no {RUN_DIR_MARKER} in it); it is left "
                "untouched: pick another --name or MUTEPRO_RUN_DIR, or empty it yourself"
            )

    def stop(self) -> None:
        """Stop every JVM (resuming stalled ones first) and leave nothing running."""
        with self._lock:
            for limper in list(self._limpers):
                limper.stop()
            nodes = list(self.nodes())
            # Brokers first (controlled shutdown needs the controller), in parallel: each waits up to 15 s.
            threads = [threading.Thread(target=n.stop, daemon=True) for n in nodes if n.role == "broker"]
            for t in threads:
                t.start()
            for t in threads:
                t.join(30)
            if self.controller is not None:
                self.controller.stop()
            for n in nodes:  # anything that ignored SIGTERM
                if n.is_running():
                    n.kill()
            self._started = False
            if self.state_file.exists():
                self._write_state(stopped=True)
            _unregister_owned(self)
            if self._own_run_dir and os.environ.get("MUTEPRO_KEEP_RUN_DIR") != "1":
                shutil.rmtree(self.run_dir, ignore_errors=True)

    def __enter__(self) -> LocalCluster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def nodes(self) -> Iterator[NodeProcess]:
        """The controller, then the brokers."""
        if self.controller is not None:
            yield self.controller
        yield from self.brokers.values()

    # -- readiness -----------------------------------------------------------------------------------------

    def wait_quiet(
        self,
        max_cores: float = 0.3,
        *,
        window_s: float = 1.0,
        timeout_s: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> float:
        """Wait until the nodes together use at most ``max_cores`` of CPU over ``window_s``; returns the last
        figure (cores), also when ``timeout_s`` ran out first.

        For benchmarks: deleting or creating a topic of 1,200 partitions keeps the brokers busy for seconds
        after the admin call returned, and a run started then is measured against a cluster still at work
        (the second of two back-to-back 1,200-partition runs got 40-130k msg/s against 150-250k for the first).
        """
        deadline = clock() + timeout_s
        while True:
            before, start = sum(n.cpu_seconds() for n in self.nodes()), clock()
            sleep(window_s)
            cores = (sum(n.cpu_seconds() for n in self.nodes()) - before) / max(clock() - start, 1e-9)
            if cores <= max_cores or clock() >= deadline:
                return cores

    def describe_brokers(self, timeout_s: float = 5.0) -> list[BrokerInfo]:
        """The brokers the cluster reports (id, host, port, rack), read with the admin client."""
        from confluent_kafka.admin import AdminClient

        # log_level 0: while brokers start, librdkafka would print a connection-refused line per attempt
        admin = AdminClient({"bootstrap.servers": self.bootstrap_servers, "socket.timeout.ms": 3000, "log_level": 0})
        desc = admin.describe_cluster(request_timeout=timeout_s).result(timeout=timeout_s + 1)
        return sorted(
            (BrokerInfo(n.id, n.host, n.port, n.rack) for n in desc.nodes), key=lambda b: b.node_id
        )

    def wait_ready(self, timeout_s: float | None = None, *, broker_ids: set[int] | None = None) -> None:
        """Block until the admin client sees ``broker_ids`` (default: all) with their racks.

        Fails fast with the log tail if a JVM exits, and with every node's log tail on timeout.
        """
        wanted = broker_ids if broker_ids is not None else set(self.brokers)
        deadline = time.monotonic() + (timeout_s or self.spec.startup_timeout_s)
        seen: dict[int, str | None] = {}
        while True:
            for node in self.nodes():
                if node.role == "broker" and node.node_id not in wanted and node.node_id in seen:
                    continue
                code = node.exit_code()
                if code is not None:
                    raise ClusterError(
                        f"{node.label} exited with code {code} during startup. {_diagnose(node)}"
                        f"\n--- {node.log_file} (tail) ---\n{node.log_tail()}"
                    )
            with contextlib.suppress(Exception):
                # never look past the deadline: one look may take up to 3 s, and a broker that registered
                # meanwhile made start() return instead of timing out (CI, startup_timeout_s=0.5)
                left = max(0.1, min(2.0, deadline - time.monotonic()))
                seen = {b.node_id: b.rack for b in self.describe_brokers(timeout_s=left)}
                if all(seen.get(b) == self.brokers[b].rack for b in wanted):
                    return
            if time.monotonic() > deadline:
                missing = sorted(b for b in wanted if seen.get(b) != self.brokers[b].rack)
                tails = "\n".join(
                    f"--- {n.log_file} (tail) ---\n{n.log_tail(12)}"
                    for n in self.nodes()
                    if n.role == "controller" or n.node_id in missing
                )
                raise ClusterError(
                    f"brokers {missing} did not register within {timeout_s or self.spec.startup_timeout_s:.0f}s "
                    "(a slow machine may need a longer startup_timeout_s / --timeout).\n" + tails
                )
            time.sleep(0.25)  # polling a remote system: there is no event to await

    # -- faults on the real processes (see also mutepro.cluster.faults) ------------------------------------

    def _faultable(self, node_id: int | str) -> NodeProcess:
        node = self.node(node_id)
        if node.pid is None or not node.is_running():
            raise ClusterError(
                f"{node.label} is not a running process mutepro started (killed, or an external cluster); "
                "faults act only on clusters started by mutepro (`mutepro cluster up` or LocalCluster)"
            )
        return node

    def stall(self, node_id: int | str) -> None:
        """SIGSTOP the node: it keeps its sockets but answers nothing, like a hung disk or GC pause."""
        node = self._faultable(node_id)
        node.signal(signal.SIGSTOP)
        _await_state(node, stalled=True)
        log.info("fault_stall", node=node.label, pid=node.pid)

    def resume(self, node_id: int | str) -> None:
        """SIGCONT a stalled node."""
        node = self._faultable(node_id)
        node.signal(signal.SIGCONT)
        _await_state(node, stalled=False)
        log.info("fault_resume", node=node.label, pid=node.pid)

    def kill(self, node_id: int | str) -> None:
        """SIGKILL the node, as a crash would."""
        node = self._faultable(node_id)
        node.kill()
        log.info("fault_kill", node=node.label)
        self._write_state()

    def restart(self, node_id: int | str, *, wait: bool = True, timeout_s: float = 90.0) -> None:
        """Start a killed (or stop and start a running) node with the same id, rack, port and data."""
        node = self.node(node_id)
        if node.is_running():
            node.stop()
        java = require_java()
        log_offset = node.log_file.stat().st_size if node.log_file.exists() else 0
        node.spawn(
            [*self._command(java, self.distribution), str(node.properties_file)],
            detached=self.detached,
            env=self._jvm_env(),
        )
        self._write_state()
        log.info("fault_restart", node=node.label, pid=node.pid)
        if wait:
            # The controller may still list the old incarnation (until broker.session.timeout.ms fences it),
            # so "registered" alone proves nothing: wait for the new process to report it started, then for
            # the cluster to list it with its rack.
            self._wait_log_line(node, "Kafka Server started", log_offset, timeout_s)
            if node.role == "broker":
                self.wait_ready(timeout_s, broker_ids={node.node_id})

    def _wait_log_line(self, node: NodeProcess, needle: str, offset: int, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            code = node.exit_code()
            if code is not None:
                raise ClusterError(
                    f"{node.label} exited with code {code} while restarting. {_diagnose(node)}"
                    f"\n--- {node.log_file} (tail) ---\n{node.log_tail()}"
                )
            with node.log_file.open("rb") as fh:
                fh.seek(offset)
                if needle.encode() in fh.read():
                    return
            time.sleep(0.2)  # the JVM writes its log; there is no other signal to await
        raise ClusterError(
            f"{node.label} did not start within {timeout_s:.0f}s\n--- {node.log_file} (tail) ---\n{node.log_tail()}"
        )

    @contextlib.contextmanager
    def stalled(self, node_id: int | str) -> Iterator[NodeProcess]:
        """Stall a node for the duration of the block; it is always resumed."""
        self.stall(node_id)
        try:
            yield self.node(node_id)
        finally:
            self.resume(node_id)

    @contextlib.contextmanager
    def killed(self, node_id: int | str, *, restart_timeout_s: float = 90.0) -> Iterator[NodeProcess]:
        """Kill a node for the duration of the block; it is restarted (and awaited) afterwards."""
        self.kill(node_id)
        try:
            yield self.node(node_id)
        finally:
            self.restart(node_id, timeout_s=restart_timeout_s)

    @contextlib.contextmanager
    def limping(
        self, node_id: int | str, *, duty: float = 0.8, period_s: float = 1.0, max_duration_s: float = 300.0
    ) -> Iterator[NodeProcess]:
        """Stop the node for ``duty`` of every ``period_s`` while the block runs (bounded by ``max_duration_s``)."""
        from mutepro.cluster.faults import Limper

        limper = Limper(self._faultable(node_id), duty=duty, period_s=period_s, max_duration_s=max_duration_s)
        self._limpers.append(limper)
        limper.start()
        try:
            yield self.node(node_id)
        finally:
            limper.stop()
            self._limpers.remove(limper)

    # -- state file (detached clusters) --------------------------------------------------------------------

    @classmethod
    def attach(cls, run_dir: str | os.PathLike[str]) -> LocalCluster:
        """Rebuild a handle on a cluster started elsewhere (``mutepro cluster up``) from its state file."""
        path = Path(run_dir).expanduser() / _STATE_FILE
        try:
            state = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError as err:
            raise ClusterError(
                f"no cluster state at {path}; start one with `mutepro cluster up` (or pass the right --name / "
                "MUTEPRO_RUN_DIR)"
            ) from err
        except (OSError, UnicodeDecodeError, ValueError) as err:  # JSONDecodeError is a ValueError
            raise _corrupt_state(path, f"{type(err).__name__}: {err}") from err
        try:
            spec = ClusterSpec(
                brokers=len(state["brokers"]),
                racks={int(b["node_id"]): b["rack"] for b in state["brokers"]},
                host=state.get("host", "127.0.0.1"),
            )
            cluster = cls(spec, run_dir=path.parent, detached=True, name=str(state.get("name", "default")))
            cluster.cluster_id = str(state.get("cluster_id", ""))
            cluster.controller = NodeProcess.from_state(state["controller"])
            cluster.brokers = {int(b["node_id"]): NodeProcess.from_state(b) for b in state["brokers"]}
        except ClusterError:
            raise
        except (KeyError, TypeError, ValueError, AttributeError, MuteproError) as err:
            raise _corrupt_state(path, f"{type(err).__name__}: {err}") from err
        cluster._started = any(n.is_running() for n in cluster.nodes())
        if state.get("kafka_home"):
            from mutepro.cluster.jars import resolve_kafka as _resolve

            cluster._distribution = _resolve(kafka_home=state["kafka_home"])
        elif state.get("libs_dir"):
            cluster._distribution = KafkaDistribution(
                state.get("kafka_version", ""), Path(state["libs_dir"]), "cache"
            )
        return cluster

    @classmethod
    def external(cls, bootstrap_servers: str) -> LocalCluster:
        """A handle on a cluster mutepro did not start: clients work, faults raise :class:`ClusterError`."""
        from confluent_kafka.admin import AdminClient

        admin = AdminClient({"bootstrap.servers": bootstrap_servers, "log_level": 0})
        try:
            nodes = admin.describe_cluster(request_timeout=10).result(timeout=15).nodes
        except Exception as err:
            raise ClusterError(
                f"cannot reach the cluster at {bootstrap_servers} (MUTEPRO_BOOTSTRAP): {err}; start it or fix the "
                "address"
            ) from err
        racks = {n.id: n.rack or "" for n in nodes}
        host = nodes[0].host if nodes else "127.0.0.1"
        cluster = cls(ClusterSpec(brokers=len(racks), racks=racks or None, host=host), run_dir=tempfile.gettempdir())
        cluster.brokers = {
            n.id: NodeProcess(n.id, "broker", n.port, Path(tempfile.gettempdir()), rack=n.rack) for n in nodes
        }
        cluster._started = True
        return cluster

    def status(self) -> dict[str, Any]:
        """Every node: id, role, rack, port, pid and state (running / stalled / stopped)."""
        nodes = []
        for n in self.nodes():
            state = "stalled" if n.is_stalled() else "running" if n.is_running() else "stopped"
            nodes.append({**n.to_state(), "state": state, "log": str(n.log_file)})
        return {
            "name": self.name,
            "cluster_id": self.cluster_id,
            "bootstrap_servers": self.bootstrap_servers,
            "run_dir": str(self.run_dir),
            "nodes": nodes,
        }

    def _write_state(self, *, stopped: bool = False) -> None:
        dist = self._distribution
        state = {
            "name": self.name,
            "cluster_id": self.cluster_id,
            "host": self.spec.host,
            "bootstrap_servers": self.bootstrap_servers,
            "kafka_version": dist.version if dist else "",
            "libs_dir": str(dist.libs_dir) if dist else "",
            "kafka_home": str(dist.libs_dir.parent) if dist and dist.source == "KAFKA_HOME" else "",
            "detached": self.detached,
            "stopped": stopped,
            "written_at": time.time(),
            "controller": self.controller.to_state() if self.controller else None,
            "brokers": [b.to_state() for b in self.brokers.values()],
        }
        tmp = self.state_file.with_suffix(".tmp")
        tmp.write_text(json.dumps(state, indent=2))
        tmp.replace(self.state_file)

    # -- configuration -------------------------------------------------------------------------------------

    def _plan_nodes(self) -> None:
        racks = self.spec.rack_map()
        wanted = [*self.spec.broker_ports] if self.spec.broker_ports else [0] * self.spec.brokers
        ports = _allocate_ports([self.spec.controller_port, *wanted], self.spec.host)
        self.cluster_id = new_cluster_id()
        self.controller = NodeProcess(
            CONTROLLER_NODE_ID, "controller", ports[0], self.run_dir / "controller"
        )
        self.brokers = {
            b: NodeProcess(b, "broker", ports[b], self.run_dir / f"broker-{b}", rack=racks[b])
            for b in range(1, self.spec.brokers + 1)
        }

    def _write_configs(self) -> None:
        assert self.controller is not None
        host = self.spec.host
        voters = f"{CONTROLLER_NODE_ID}@{host}:{self.controller.port}"
        rf = min(3, self.spec.brokers)
        common = {
            "controller.quorum.voters": voters,
            "controller.listener.names": "CONTROLLER",
            "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
            "num.network.threads": "2",
            "num.io.threads": "2",
            "background.threads": "2",
        }
        controller = {
            **common,
            "process.roles": "controller",
            "node.id": str(CONTROLLER_NODE_ID),
            "listeners": f"CONTROLLER://{host}:{self.controller.port}",
            "log.dirs": str(self.controller.data_dir),
        }
        _write_properties(self.controller.properties_file, controller)
        for b in self.brokers.values():
            props = {
                **common,
                "process.roles": "broker",
                "node.id": str(b.node_id),
                "broker.rack": b.rack or "",
                "replica.selector.class": "org.apache.kafka.common.replica.RackAwareReplicaSelector",
                "listeners": f"PLAINTEXT://{host}:{b.port}",
                "advertised.listeners": f"PLAINTEXT://{host}:{b.port}",
                "inter.broker.listener.name": "PLAINTEXT",
                "log.dirs": str(b.data_dir),
                "offsets.topic.replication.factor": str(rf),
                "offsets.topic.num.partitions": "3",
                "transaction.state.log.replication.factor": str(rf),
                "transaction.state.log.min.isr": "1",
                "transaction.state.log.num.partitions": "3",
                "share.coordinator.state.topic.replication.factor": str(rf),
                "share.coordinator.state.topic.min.isr": "1",
                "group.initial.rebalance.delay.ms": "0",
                "num.replica.fetchers": "1",
                "num.recovery.threads.per.data.dir": "1",
                "log.flush.interval.ms": "9223372036854775807",
                # A stalled follower leaves the ISR after this long, so acks=all writes continue; Kafka's
                # default of 30 s makes every fault test wait half a minute for nothing it proves.
                "replica.lag.time.max.ms": "10000",
                **{k: str(v) for k, v in self.spec.broker_config.items()},
            }
            _write_properties(b.properties_file, props)

    def _format_storage(self, java: str, dist: KafkaDistribution) -> None:
        # All nodes are formatted in parallel: each format is a JVM start (~2 s), done four times.
        import subprocess

        procs = []
        for node in self.nodes():
            node.directory.mkdir(parents=True, exist_ok=True)
            cmd = [
                java, "-Xmx256m", *_DEFAULT_JVM_OPTS.split(), f"-Dlog4j2.configurationFile={_LOG4J2}",
                "-cp", dist.classpath, "kafka.tools.StorageTool", "format",
                "-t", self.cluster_id, "-c", str(node.properties_file), "--ignore-formatted",
            ]
            out = node.directory / "format.log"
            with out.open("wb") as fh:
                procs.append((node, out, subprocess.Popen(cmd, stdout=fh, stderr=subprocess.STDOUT)))
        failed = []
        for node, out, proc in procs:
            try:
                code = proc.wait(timeout=120)
            except subprocess.TimeoutExpired:
                proc.kill()
                code = -9
            if code != 0:
                failed.append(f"{node.label}: exit {code}\n{out.read_text(errors='replace')[-2000:]}")
        if failed:
            raise ClusterError(
                "formatting the KRaft storage failed (is the Kafka distribution complete? delete "
                f"{dist.libs_dir.parent} to resolve it again):\n" + "\n".join(failed)
            )

    def _command(self, java: str, dist: KafkaDistribution) -> list[str]:
        opts = os.environ.get("MUTEPRO_KAFKA_JVM_OPTS", _DEFAULT_JVM_OPTS).split()
        return [
            java, f"-Xmx{self.spec.heap}", "-Xms128m", *opts,
            f"-Dlog4j2.configurationFile={_LOG4J2}",
            "-cp", dist.classpath, "kafka.Kafka",
        ]

    def _jvm_env(self) -> dict[str, str]:
        env = dict(os.environ)
        env.pop("KAFKA_OPTS", None)
        env.pop("CLASSPATH", None)
        return env


# -- helpers -------------------------------------------------------------------------------------------


def _corrupt_state(path: Path, problem: str) -> ClusterError:
    return ClusterError(
        f"the cluster state file {path} is corrupt or not mutepro's ({problem[:200]}). If a cluster may still "
        f"run from there, stop its JVMs first (`pgrep -af {path.parent}`); then delete the file (rm {path}) "
        "and start again with `mutepro cluster up`"
    )


def new_cluster_id() -> str:
    """A KRaft cluster id: 16 random bytes, URL-safe base64, never starting with '-'.

    Like Kafka's own Uuid.randomUuid(): an id such as "-Xb3..." would be read by the storage tool's argument
    parser as an option, and formatting fails (about 1 start in 64).
    """
    while True:
        cid = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        if not cid.startswith("-"):
            return cid


def _write_properties(path: Path, props: Mapping[str, str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = ["# written by mutepro's local cluster launcher"] + [f"{k}={v}" for k, v in props.items()]
    path.write_text("\n".join(lines) + "\n")


def _allocate_ports(wanted: list[int], host: str) -> list[int]:
    """Check explicitly requested ports are free and pick free ones for the zeros."""
    holders: list[socket.socket] = []
    ports: list[int] = []
    try:
        for port in wanted:
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                sock.bind((host, port))
            except OSError as err:
                sock.close()
                raise ClusterError(
                    f"port {port} on {host} is already in use ({err.strerror}); choose another port or pass 0 "
                    "to let mutepro pick a free one (`mutepro cluster down` stops a cluster left running)"
                ) from err
            holders.append(sock)  # held until all are chosen, so no two nodes get the same port
            ports.append(sock.getsockname()[1])
    finally:
        for sock in holders:
            sock.close()
    return ports


def _await_state(node: NodeProcess, *, stalled: bool, timeout_s: float = 5.0) -> None:
    """Signals are delivered asynchronously: return once /proc shows the process (not) stopped, so a caller
    that stalls a broker can rely on it being stopped when stall() returns."""
    deadline = time.monotonic() + timeout_s
    while node.is_stalled() != stalled and node.is_running() and time.monotonic() < deadline:
        time.sleep(0.002)  # the kernel acts on the signal within microseconds; this is a bounded wait for it


def _diagnose(node: NodeProcess) -> str:
    tail = node.log_tail(200)
    if "Address already in use" in tail:
        return f"Its port {node.port} is already in use: stop whatever holds it or choose another port."
    if "UnsupportedClassVersionError" in tail:
        return "The JVM is too old: Kafka 4.x brokers need Java 17 or newer (set JAVA_HOME)."
    if "OutOfMemoryError" in tail:
        return "It ran out of heap: raise ClusterSpec.heap."
    return "See its log below."


# Owned clusters are stopped at interpreter exit and on SIGINT/SIGTERM. Weak references, so a cluster that is
# garbage collected does not linger here.
_OWNED: weakref.WeakSet[LocalCluster] = weakref.WeakSet()
_HANDLERS_INSTALLED = False


def _stop_all_owned() -> None:
    for cluster in list(_OWNED):
        with contextlib.suppress(Exception):
            cluster.stop()


def _register_owned(cluster: LocalCluster) -> None:
    global _HANDLERS_INSTALLED
    _OWNED.add(cluster)
    if _HANDLERS_INSTALLED:
        return
    _HANDLERS_INSTALLED = True
    atexit.register(_stop_all_owned)
    if threading.current_thread() is not threading.main_thread():
        return
    for sig in (signal.SIGINT, signal.SIGTERM):
        previous = signal.getsignal(sig)

        def handler(signum: int, frame: FrameType | None, _previous: Any = previous) -> None:
            _stop_all_owned()
            if callable(_previous):
                _previous(signum, frame)
            elif _previous == signal.SIG_DFL:
                signal.signal(signum, signal.SIG_DFL)
                os.kill(os.getpid(), signum)

        signal.signal(sig, handler)


def _unregister_owned(cluster: LocalCluster) -> None:
    _OWNED.discard(cluster)
