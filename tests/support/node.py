"""Facts about a running node that tests and benchmarks look for."""

from __future__ import annotations

import re

NODE_READY = re.compile(rb"appliance\.node: appliance \S+ ready in ")
"""The node's own log line once it serves (other components log "ready" too)."""
