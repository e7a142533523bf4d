from toolwire.cli import main

main()
