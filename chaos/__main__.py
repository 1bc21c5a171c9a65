from chaos.cli import main

raise SystemExit(main())
