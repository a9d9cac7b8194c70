"""The ``scopa`` command line: one thin module per subcommand over the packages below it."""
