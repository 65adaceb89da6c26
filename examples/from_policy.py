"""Build a MuteProducer from a YAML policy (examples/policy.yaml): per-topic keyed policies, env interpolation.

    mutepro cluster up && export MUTEPRO_BOOTSTRAP=...   # or any cluster
    python examples/from_policy.py
"""

from __future__ import annotations

from pathlib import Path

from mutepro import MuteProducer, load_policy


def main() -> None:
    path = Path(__file__).with_name("policy.yaml")
    policy = load_policy(path)
    print("orders keyed policy:", policy.for_topic("orders").keyed_policy)  # hold
    print("clicks keyed policy:", policy.for_topic("clicks").keyed_policy)  # reroute (defaults)
    with MuteProducer.from_policy(path) as producer:
        for i in range(1000):
            producer.produce("orders", value=f"order-{i}".encode(), key=f"customer-{i % 50}".encode())
            producer.poll(0)
        print("undelivered after flush:", producer.flush(30))


if __name__ == "__main__":
    main()
