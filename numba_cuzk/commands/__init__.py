"""Drivers of the CLI's commands, beside cli.py (which only parses, calls and prints)."""
