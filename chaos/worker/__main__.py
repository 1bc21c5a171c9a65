import sys

from chaos.worker.harness import main

sys.exit(main())
