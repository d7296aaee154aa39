"""Hostile and foreign inputs, one module per command under attack."""
