"""``python -m vlcomp.profiles [toy|real]``: see :mod:`vlcomp.profiles.switch`."""

import sys

from .switch import main

sys.exit(main())
