"""Hostile and careless input, laid out by surface: each file is one threat model."""
