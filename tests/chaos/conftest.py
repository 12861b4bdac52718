"""The fault suite (see tests/README.md, "Faults"): its modules use the
integration harness (servers, clients, the keeper ensemble), so that folder is
importable from here."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
