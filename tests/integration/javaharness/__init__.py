"""Tiny Java harnesses running the real kafka-clients assignors and KRaft placer, for differential tests of the ports.

Test tooling only (it compiles Java against the resolved Kafka jars): it lives beside the integration tests that use
it, not in the installed package.
"""
