from adapter.cli import main

main()
