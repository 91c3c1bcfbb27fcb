from .cmd.app import main

main()
