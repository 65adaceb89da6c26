"""Traces: record what the detection model sees on a real cluster, replay it through the model.

``MuteProducer(conf, trace="run.jsonl.gz")`` records; :func:`replay` (or ``mutepro trace replay``) shows what the
model decides on that evidence, under the recorded policy or another one; :func:`summarize` judges the
decisions against the faults a harness wrote into the trace (:func:`append_records`).
"""

from mutepro.trace.format import AGE_EDGES_S, TraceError, append_records, open_trace
from mutepro.trace.record import TraceRecorder
from mutepro.trace.replay import Decision, Fault, Replay, replay
from mutepro.trace.summary import FaultSummary, Summary, describe, summarize

__all__ = [
    "AGE_EDGES_S", "Decision", "Fault", "FaultSummary", "Replay", "Summary", "TraceError", "TraceRecorder",
    "append_records", "describe", "open_trace", "replay", "summarize",
]
