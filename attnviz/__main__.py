"""``python -m attnviz``: the same as the ``attnviz`` command (see :mod:`attnviz.cli`)."""

import sys

from attnviz.cli import main

sys.exit(main())
