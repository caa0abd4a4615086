import sys

from faithlens.cli import main

sys.exit(main())
