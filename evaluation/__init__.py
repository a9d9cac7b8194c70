"""The evaluation harness: duplicate deals between players, their statistics and reports."""
