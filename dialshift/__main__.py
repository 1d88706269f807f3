import sys

from dialshift.cli import main

sys.exit(main())
