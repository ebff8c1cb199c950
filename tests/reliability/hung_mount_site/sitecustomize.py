"""Installs the hung-mount double (``tests/reliability/hung_mount.py``) in a pi-tui child process
started with this folder on ``PYTHONPATH`` and ``PI_TUI_TEST_HUNG_MOUNT`` set."""

import os
import sys
import threading

if os.environ.get("PI_TUI_TEST_HUNG_MOUNT"):
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))
    from tests.reliability.hung_mount import install

    install(threading.Event(), threading.Event(), float(os.environ["PI_TUI_TEST_HUNG_MOUNT"]))
