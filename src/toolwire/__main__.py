from toolwire.cli import main

main(prog_name="toolwire")
