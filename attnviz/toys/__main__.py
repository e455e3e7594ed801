"""``python -m attnviz.toys``: the command (:func:`attnviz.toys.cli.main`)."""

import sys

from attnviz.toys.cli import main

sys.exit(main())
