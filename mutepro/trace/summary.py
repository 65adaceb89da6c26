"""What a replay's decisions mean against the trace's faults: the figures a person (or a test) checks.

For each fault: how soon after it began a partition it affects was muted, which muted partitions it does not
affect (no replica on the faulty broker), how often a partition was muted again while it lasted (flaps), and how
long after it ended the last partition stayed muted. Without faults every mute is a false one.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from mutepro.trace.replay import Decision, Fault, Replay

MUTED = ("mute", "remute")


@dataclass(frozen=True)
class FaultSummary:
    """The decisions around one fault (times in seconds from the fault's start or end)."""

    fault: Fault
    first_mute_s: float | None  # first mute of a partition with a replica on the broker, after the fault began
    wrong: tuple[tuple[str, int], ...]  # partitions muted during the fault with no replica on the broker
    flaps: int  # mutes of a partition after it had been unmuted during the same fault, over every partition
    max_mutes_per_partition: int  # the most mutes (closed -> muted) one partition had during the fault
    failed_probes: int  # re-mutes after a failed probe (the fault still there: not a flap)
    # after the fault ended, when the last of its partitions (muted at its end or within the settle time) was
    # unmuted (None: one never was)
    unmuted_after_s: float | None
    still_muted: tuple[tuple[str, int], ...]  # muted at the end of the trace


@dataclass(frozen=True)
class Summary:
    """A replay against its faults; ``false_mutes`` are mutes outside every fault (and its settle time)."""

    mutes: int
    false_mutes: tuple[Decision, ...]
    faults: tuple[FaultSummary, ...] = field(default_factory=tuple)


def affected(replay: Replay, fault: Fault) -> set[tuple[str, int]]:
    """The partitions with a replica on the fault's broker."""
    return {(t, p) for t, parts in replay.replicas.items() for p, reps in parts.items() if fault.broker in reps}


def summarize(replay: Replay, settle_s: float = 5.0) -> Summary:
    """The figures of :class:`Summary`; a mute within ``settle_s`` after a fault ended still belongs to it."""
    mutes = [d for d in replay.decisions if d.event in MUTED]
    false = tuple(
        d for d in mutes
        if not any(f.t <= d.t <= (f.end if f.end is not None else replay.end) + settle_s for f in replay.faults)
    )
    return Summary(len(mutes), false, tuple(_fault(replay, f, settle_s) for f in replay.faults))


def _fault(replay: Replay, f: Fault, settle_s: float) -> FaultSummary:
    end = f.end if f.end is not None else replay.end
    hit = affected(replay, f)
    during = [d for d in replay.decisions if f.t <= d.t <= end]
    mutes = [d for d in during if d.event in MUTED]
    first = min((d.t - f.t for d in mutes if (d.topic, d.partition) in hit), default=None)
    wrong = tuple(sorted({(d.topic, d.partition) for d in mutes if (d.topic, d.partition) not in hit}))
    per: dict[tuple[str, int], int] = {}
    for d in mutes:
        if d.event == "mute":
            per[(d.topic, d.partition)] = per.get((d.topic, d.partition), 0) + 1
    flaps = sum(max(0, n - 1) for n in per.values())
    failed = sum(1 for d in mutes if d.event == "remute")
    state: dict[tuple[str, int], str] = {}
    for d in replay.decisions:
        state[(d.topic, d.partition)] = d.event
    still = tuple(sorted(k for k, ev in state.items() if ev in (*MUTED, "probe")))
    return FaultSummary(
        f, first, wrong, flaps, max(per.values(), default=0), failed, _let_go(replay, end, settle_s), still,
    )


def _let_go(replay: Replay, end: float, settle_s: float) -> float | None:
    """Seconds from the fault's end until the last of *its* partitions was unmuted (``None``: one never was).

    Its partitions: those muted when it ended, and those muted within ``settle_s`` after (the mutes
    :func:`summarize` counts as the fault's); a re-mute within that time starts a partition's wait over. A
    partition muted later is a false mute, counted there, and does not stretch the fault's let-go: it did in an
    earlier version, which reported a let-go of 20 s for a fault whose partitions all came back within 4 s."""
    unmuted: dict[tuple[str, int], float | None] = dict.fromkeys(replay.muted_at(end))
    for d in replay.decisions:
        if d.t <= end:
            continue
        key = (d.topic, d.partition)
        if d.event in MUTED and d.t <= end + settle_s:
            unmuted[key] = None
        elif d.event == "unmute" and key in unmuted and unmuted[key] is None:
            unmuted[key] = d.t - end
    waits = list(unmuted.values())
    return None if None in waits else max((w for w in waits if w is not None), default=0.0)


def describe(summary: Summary) -> list[str]:
    """The summary as lines a person reads."""
    lines = [f"mutes: {summary.mutes}, outside every fault: {len(summary.false_mutes)}"]
    for d in summary.false_mutes[:10]:
        lines.append(f"  false mute at {d.t:.2f}s: {d.topic}[{d.partition}] broker {d.broker} ({d.reason})")
    for fs in summary.faults:
        f = fs.fault
        span = f"{f.t:.1f}-{f.end:.1f}s" if f.end is not None else f"{f.t:.1f}s-"
        first = "never" if fs.first_mute_s is None else f"{fs.first_mute_s:.2f}s"
        unmuted = "still muted" if fs.unmuted_after_s is None else f"{fs.unmuted_after_s:.2f}s"
        lines.append(
            f"fault {f.fault} broker {f.broker} {span}: first mute {first}, wrong partitions {len(fs.wrong)}, "
            f"flaps {fs.flaps} (most mutes of one partition {fs.max_mutes_per_partition}), failed probes "
            f"{fs.failed_probes}, all unmuted {unmuted} after it ended"
        )
    return lines
