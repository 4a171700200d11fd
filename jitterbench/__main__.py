import sys

from .entry import main  # the command's one entry: its signals handled as `jitterbench`'s

sys.exit(main())
