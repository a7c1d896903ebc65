"""Test configuration: the tests import their shared modules (corpus, numeric)
from this directory, and generated code is cached in a temporary directory."""

import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
os.environ.setdefault("SRCGRAD_CACHE_DIR", tempfile.mkdtemp(prefix="srcgrad-test-cache-"))
