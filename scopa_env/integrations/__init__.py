"""Adapters that put the game into other libraries, one module per library."""
