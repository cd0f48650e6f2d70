"""Prometheus metrics of every process of the stack (docs/operations.md, "Metrics")."""
