"""Reward components and shaping (format, length penalties, process rewards)."""
