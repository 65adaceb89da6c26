"""A tiny Java harness running the real kafka-clients assignors, for differential tests of the ports."""
