"""``python -m pi_tui``.

``-m`` puts the working directory first on ``sys.path``, so a cloned repository holding
``argparse.py`` or ``asyncio/`` would have its module imported instead of the standard library's
(or a library's) the first time pi-tui imports that name — code from an untrusted repository,
run before any trust question. pi-tui's own package is already imported by now; the entry is
dropped before anything else is. (The ``pi-tui`` script never has the directory on the path.)
"""

import os
import sys

if sys.path and sys.path[0] in ("", os.getcwd()):
    del sys.path[0]

from pi_tui.cli import main

raise SystemExit(main())
