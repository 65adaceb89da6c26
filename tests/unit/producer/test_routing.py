"""Routing (mutepro.producer.routing): the keyed policies as pure decisions, and MuteProducer carrying them out
on a fake inner producer (no broker)."""

from __future__ import annotations

import pytest
from confluent_kafka import KafkaError

from mutepro.partition.reroute import reroute_partition
from mutepro.partition.snapshot import TopicSnapshot
from mutepro.policy.schema import KeyedPolicy
from mutepro.producer.message import NORMAL, PROBE
from mutepro.producer.routing import Action, Decision, decide_keyed
from tests.unit._producer_fakes import PARTITIONS, TOPIC, Harness, keys_by_home


def _snap(muted: set[int]) -> TopicSnapshot:
    return TopicSnapshot.build(TOPIC, PARTITIONS, frozenset(muted), None)


def _decide(policy: KeyedPolicy, *, muted: set[int] = frozenset({1}), held_before: bool = False,  # type: ignore[assignment]
            outstanding: int = 0, probing: frozenset[int] = frozenset(), grant: bool = True) -> Decision:
    granted: list[int] = []

    def give(topic: str, p: int) -> bool:
        granted.append(p)
        return grant

    return decide_keyed(
        TOPIC, b"k", 1, _snap(set(muted)), policy, held_before=held_before, outstanding=outstanding,
        probing=lambda t: probing, grant=give, reason=lambda: "failure_rate",
    )


class TestDecideKeyed:
    @pytest.mark.parametrize("policy", list(KeyedPolicy))
    def test_a_writable_home_is_dispatched_under_every_policy(self, policy: KeyedPolicy) -> None:
        """Home not muted: the message goes home, whatever the keyed policy."""
        assert _decide(policy, muted=set()) == Decision(Action.DISPATCH, 1, NORMAL)

    @pytest.mark.parametrize("policy", list(KeyedPolicy))
    def test_behind_held_messages_it_is_held(self, policy: KeyedPolicy) -> None:
        """Older messages of the home are held: the new one queues behind them (key order)."""
        assert _decide(policy, held_before=True, muted=set()).action is Action.HOLD

    def test_reroute_moves_to_a_writable_partition(self) -> None:
        """reroute: another (writable) partition, remembering the home it left."""
        decision = _decide(KeyedPolicy.REROUTE)
        assert decision.action is Action.DISPATCH and decision.partition not in (1,) and decision.rerouted_from == 1

    def test_reroute_with_nothing_writable_goes_home(self) -> None:
        """reroute with every partition muted: home after all (nothing to move to)."""
        assert _decide(KeyedPolicy.REROUTE, muted=set(range(PARTITIONS))) == Decision(Action.DISPATCH, 1)

    def test_hold_holds(self) -> None:
        """hold: the message waits for its home."""
        assert _decide(KeyedPolicy.HOLD) == Decision(Action.HOLD, 1)

    def test_hold_waits_for_outstanding_even_when_a_probe_is_offered(self) -> None:
        """hold with the home's older messages still in librdkafka: held, no probe taken (order barrier)."""
        assert _decide(KeyedPolicy.HOLD, outstanding=3, probing=frozenset({1})) == Decision(Action.HOLD, 1)

    def test_fail_fails_with_a_state_error_naming_the_partition(self) -> None:
        """fail: _STATE error naming topic[home] and the mute reason."""
        decision = _decide(KeyedPolicy.FAIL)
        assert decision.action is Action.FAIL and decision.error is not None
        assert decision.error.code() == KafkaError._STATE and f"{TOPIC}[1]" in decision.error.str()
        assert "failure_rate" in decision.error.str()

    def test_ignore_sends_home(self) -> None:
        """ignore: home, muted or not."""
        assert _decide(KeyedPolicy.IGNORE) == Decision(Action.DISPATCH, 1)

    @pytest.mark.parametrize("policy", [KeyedPolicy.HOLD, KeyedPolicy.FAIL, KeyedPolicy.IGNORE])
    def test_a_granted_probe_goes_home(self, policy: KeyedPolicy) -> None:
        """A half-open home whose probe is granted gets the message as a probe."""
        assert _decide(policy, probing=frozenset({1})) == Decision(Action.DISPATCH, 1, PROBE)

    def test_a_refused_probe_falls_back_to_the_policy(self) -> None:
        """No probe slot left: the keyed policy applies (hold)."""
        assert _decide(KeyedPolicy.HOLD, probing=frozenset({1}), grant=False) == Decision(Action.HOLD, 1)

    def test_reroute_probes_a_half_open_home(self) -> None:
        """reroute sends a granted probe home too: with keyed traffic only, nothing else could close the breaker."""
        assert _decide(KeyedPolicy.REROUTE, probing=frozenset({1})) == Decision(Action.DISPATCH, 1, PROBE)

    def test_reroute_moves_keys_once_the_probes_are_taken(self) -> None:
        """No probe granted (the half-open quota is in flight): the key moves as during the mute."""
        assert _decide(KeyedPolicy.REROUTE, probing=frozenset({1}), grant=False).partition != 1


class TestProducerRouting:
    def test_healthy_keyed_messages_go_home(self) -> None:
        """Nothing muted: each key lands on its home partition."""
        h = Harness()
        for key, home in keys_by_home(h, 16):
            h.produce(b"v", key)
            assert h.fake.sent[-1].partition == home
        h.close()

    def test_unkeyed_messages_avoid_a_muted_partition(self) -> None:
        """Unkeyed messages never go to a muted partition."""
        h = Harness()
        h.producer.mute_manager.mute(TOPIC, 2)
        for i in range(200):
            h.produce(f"u{i}".encode())
        assert {s.partition for s in h.fake.sent} <= {0, 1, 3}
        h.close()

    @pytest.mark.parametrize("policy", list(KeyedPolicy))
    def test_keyed_policy_for_a_muted_home(self, policy: KeyedPolicy) -> None:
        """A key whose home is muted: rerouted, held, failed or sent home, as keyed_policy says."""
        h = Harness(keyed_policy=policy)
        h.producer.mute_manager.mute(TOPIC, 1)
        key = next(k for k, home in keys_by_home(h) if home == 1)
        h.produce(b"v", key)
        h.producer.poll(0)
        sent = [s.partition for s in h.fake.sent]
        if policy == KeyedPolicy.REROUTE:
            assert len(sent) == 1 and sent[0] != 1 and h.producer.counters.rerouted == 1
        elif policy == KeyedPolicy.HOLD:
            assert sent == [] and h.producer.held(TOPIC) == 1 and len(h.producer) == 1
        elif policy == KeyedPolicy.FAIL:
            assert sent == [] and [code for code, _ in h.reports] == [KafkaError._STATE]
            assert h.producer.counters.muted_fail == 1
        else:
            assert sent == [1]
        h.close()

    def test_rerouted_keys_keep_their_fallback_and_are_all_counted(self) -> None:
        """Every message of a muted home's key goes to the key's one fallback; all counted, all in the tick's event."""
        h = Harness()
        h.producer.mute_manager.mute(TOPIC, 1)
        keys = [k for k, home in keys_by_home(h) if home == 1][:3]
        snap = h.producer._snapshots[TOPIC]
        for _ in range(5):
            for key in keys:
                h.produce(b"v", key)
        by_key: dict[bytes, set[int]] = {}
        for sent in h.fake.sent:
            by_key.setdefault(sent.key, set()).add(sent.partition)
        assert by_key == {k: {reroute_partition(k, 1, snap)} for k in keys}
        assert h.producer.counters.rerouted == 15
        moves = dict(h.producer._core.reroutes)
        assert sum(moves[(TOPIC, 1)].values()) == 15
        h.tick()  # the driver reports the moves once and starts counting afresh
        assert h.producer._core.reroutes == {}
        h.close()

    def test_the_c_path_takes_a_rerouted_key_after_its_first_message(self) -> None:
        """With the C fast path, only a key's first rerouted message (per snapshot) asks Python; keys go home
        once their partition is unmuted."""
        h = Harness()
        h.producer.mute_manager.mute(TOPIC, 1)
        key = next(k for k, home in keys_by_home(h) if home == 1)
        fast = h.producer._fast
        before = fast.fallbacks if fast is not None else 0
        for _ in range(10):
            h.produce(b"v", key)
        if fast is not None:
            assert fast.fallbacks - before == 1
        assert h.producer._snapshots[TOPIC].reroute_memo == {key: h.fake.sent[-1].partition}
        h.producer.mute_manager.unmute(TOPIC, 1)
        h.produce(b"home", key)
        assert h.fake.sent[-1].partition == 1
        h.close()

    def test_a_full_hold_queue_raises_buffer_error(self) -> None:
        """hold.max_messages reached: BufferError naming the setting, counted as a buffer error."""
        h = Harness(keyed_policy="hold", hold={"max_messages": 2})
        h.producer.mute_manager.mute(TOPIC, 1)
        key = next(k for k, home in keys_by_home(h) if home == 1)
        h.produce(b"1", key)
        h.produce(b"2", key)
        with pytest.raises(BufferError, match=r"hold\.max_messages"):
            h.produce(b"3", key)
        assert h.producer.counters.buffer_errors == 1 and h.producer.held() == 2
        h.close()

    def test_a_half_open_partition_gets_one_probe(self) -> None:
        """After the retry interval a detected mute turns half-open: the next unkeyed message is its probe, the
        one after goes elsewhere (one probe slot)."""
        h = Harness()
        h.warm()
        h.trip(2)
        h.fake.deliver()
        h.tick(1.5)  # past retry_interval_ms: half-open
        assert 2 in h.producer.mute_manager.probes.probing(TOPIC)
        before = len(h.fake.sent)
        h.produce(b"probe")
        h.produce(b"next")
        assert next(s.partition for s in h.fake.sent[before:]) == 2
        assert h.fake.sent[-1].partition != 2 and h.producer.counters.probes == 1
        h.fake.deliver()
        h.producer.poll(0)
        h.tick()
        assert 2 not in h.producer.mute_manager.muted_partitions().get(TOPIC, [])  # the probe closed it
        h.close()
