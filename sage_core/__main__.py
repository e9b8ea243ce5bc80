import sys

from sage_core.cli import main

sys.exit(main())
