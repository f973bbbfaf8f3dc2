from witness.cli import main

main()
