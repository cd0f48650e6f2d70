"""Operational state of the running stack: heartbeats of its parts, the throttle cache table."""
